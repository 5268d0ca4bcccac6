#!/usr/bin/env python3
"""Is the drift between two runs common to their points? (docs/reports.md, "speedlab compare")

Reads the kept runs of scripts/bench/compare_false_alarms.sh (KEEP_DIR=DIR: DIR/a<i>, DIR/b<i>)
and, per pair, takes every point's log-ratio NEW/BASE (mean of the log of each round's median,
as compare does). It prints how much of their mean square one run-wide shift (the median of the
pair's log-ratios) explains, and one shift per kind (serial / threads).
With --rules it also replays compare's rule (Welch on round medians, Bonferroni, 5% threshold)
on the same pairs, without and with the shift subtracted (always; per kind; or only when the
median shift is beyond the threshold with at most 0, 1, 2 points against its sign: moved-N),
for self-comparisons and for each variant scaled by 1.1 in a copy of B: does it help?
Usage: scripts/bench/compare_drift.py [--rules] DIR [DIR...]   (python3 only, no packages)
"""
import functools, json, math, os, statistics as st, sys


def t_upper(t, df, n=200):  # P(T > t), t >= 0, Simpson's rule on the density
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    f = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)
    h = t / n
    s = f(0) + f(t) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
    return 0.5 - s * h / 3


@functools.lru_cache(maxsize=None)
def t_quantile(p, df):  # t with P(T > t) = p; df rounded by the caller
    lo, hi = 0.0, 200.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_upper(mid, df) > p else (lo, mid)
    return lo


def load(run, slow=None, factor=1.1):
    out = {}
    for line in open(os.path.join(run, "results.jsonl")):
        p = json.loads(line)
        s, r = p["samples_ns"], p.get("sample_rounds") or [0] * len(p["samples_ns"])
        f = factor if slow and p["id"].startswith(slow + "/") else 1.0
        by = {}
        for v, k in zip(s, r):
            by.setdefault(k, []).append(v * f)
        out[p["id"]] = (p["kind"], [math.log(st.median(v)) for v in by.values()])
    return out


def pairs(dirs):
    for d in dirs:
        i = 1
        while os.path.exists(f"{d}/a{i}/results.jsonl") and os.path.exists(f"{d}/b{i}/results.jsonl"):
            yield d, i
            i += 1


def split(dirs):
    tot = com = kind = 0.0
    for d, i in pairs(dirs):
        a, b = load(f"{d}/a{i}"), load(f"{d}/b{i}")
        lr = {k: st.mean(b[k][1]) - st.mean(a[k][1]) for k in a if k in b}
        shift = st.median(lr.values())
        per_kind = {}
        for k, v in lr.items():
            per_kind.setdefault(a[k][0], []).append(v)
        km = {k: st.median(v) for k, v in per_kind.items()}
        t = sum(v * v for v in lr.values())
        c = sum((v - shift) ** 2 for v in lr.values())
        kk = sum((v - km[a[k][0]]) ** 2 for k, v in lr.items())
        tot, com, kind = tot + t, com + c, kind + kk
        n = len(lr)
        print(f"{d} pair {i}: shift {100 * math.expm1(shift):+.1f}% ("
              + ", ".join(f"{k} {100 * math.expm1(v):+.1f}%" for k, v in sorted(km.items()))
              + f"); rms of the points' log-ratios {100 * math.sqrt(t / n):.1f}%, around the shift "
              f"{100 * math.sqrt(c / n):.1f}%, around the per-kind shift {100 * math.sqrt(kk / n):.1f}%")
    print(f"mean square of the log-ratios explained: by one run-wide shift {100 * (1 - com / tot):.0f}%, "
          f"by one shift per kind {100 * (1 - kind / tot):.0f}%")


def verdicts(a, b, mode, threshold=0.05, alpha=0.05):
    d = {}
    for k in a:
        x, y = a[k][1], b[k][1]
        va, vb = st.variance(x) / len(x), st.variance(y) / len(y)
        df = (va + vb) ** 2 / (va * va / (len(x) - 1) + vb * vb / (len(y) - 1))
        d[k] = (st.mean(y) - st.mean(x), math.sqrt(va + vb), df)
    out = {}
    shifts = [v[0] for v in d.values()]
    if mode.startswith("moved-"):  # common shift only when beyond the threshold and (nearly) all agree
        shift = st.median(shifts)
        against = sum((v > 0) != (shift > 0) for v in shifts)
        moved = abs(shift) > math.log1p(threshold) and against <= int(mode[-1])
    for k, (diff, se, df) in d.items():
        if mode.startswith("moved-"):
            x = diff - (shift if moved else 0)
        else:
            same = [d[j][0] for j in d if mode == "common" or (mode == "per-kind" and a[j][0] == a[k][0])]
            x = diff - (st.median(same) if same else 0)
        t = t_quantile(alpha / len(d), round(df, 1))
        out[k] = x > math.log1p(threshold) and x - t * se > 0
    return out


def rules(dirs):
    variants = ["vector/threads", "vector/serial", "mandelbrot/threads", "mandelbrot/serial",
                "reduction/threads", "reduction/serial"]
    for mode in ("absolute", "common", "per-kind", "moved-0", "moved-1", "moved-2"):
        alarms = n = 0
        hits = dict.fromkeys(variants, 0)
        for d, i in pairs(dirs):
            a, b = load(f"{d}/a{i}"), f"{d}/b{i}"
            n += 1
            alarms += any(verdicts(a, load(b), mode).values())
            for v in variants:
                hits[v] += any(s for k, s in verdicts(a, load(b, v), mode).items() if k.startswith(v + "/"))
        print(f"{mode}: {n} pairs, self-comparisons with a point slower {alarms}; x1.1 found: "
              + ", ".join(f"{v} {h}" for v, h in hits.items()))


if __name__ == "__main__":
    args = sys.argv[1:]
    do_rules = "--rules" in args
    dirs = [a for a in args if a != "--rules"]
    if not dirs:
        sys.exit(__doc__)
    split(dirs)
    if do_rules:
        rules(dirs)
