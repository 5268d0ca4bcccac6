#!/usr/bin/env python3
"""The tables of scripts/bench/profile_overhead.sh from its results.jsonl (one line a process).

    MODE=compare|breakdown|light python3 scripts/bench/overhead_summary.py results.jsonl
    MODE=pooled python3 scripts/bench/overhead_summary.py run1/results.jsonl run2/results.jsonl ...

A tool's figure for a round is the median of its processes in that round. Per tool: the
median over rounds with a bootstrap 95% interval of the median; its cost against plain and
(compare) speedlab - nsys or (breakdown) each variant - speedlab, *paired by round*: the
difference is taken within a round, where the machine's drift is shared, then summarized
over rounds. The interval's half width against nsys's own added cost says what the run can
resolve (the issue asks for 10%).

MODE=light: the same table per workload (storm, torch, compile), then the differences the
light capture is judged by, paired by round, each with the upper end of its interval: on the
storm speedlab - sl-floor (what the light API capture adds above kernel records alone) in us
per launch; on the loops speedlab - plain and sl-floor - plain in percent of plain's step; and
sl-full, cupti-bare, cupti-attach, nsys and torchprof - plain, and sl-floor - cupti-bare and
speedlab - cupti-bare (speedlab's floor, and its default, against CUPTI's bare kernel records).
Last, each tool's output per process (median bytes).

Given several results.jsonl (runs) in any other mode, the tables pool their rounds, each round
still paired within its run.

MODE=pooled: speedlab - nsys per run and over the rounds of every run together (a round
stays paired within its run), with the rounds where speedlab was cheaper and a one-sided
sign test: whether "below nsys" holds across runs, not only inside one.
"""
import math
import json
import os
import random
import statistics
import sys

# (workload, field of results.jsonl, what the figure is)
# LOOP_FIGURE=mean_us_per_step (profile_overhead.sh STEADY=1): the loops' figure is the mean
# step of all the process's repeats.
_LOOP = ("the mean step of the process's repeats" if os.environ.get("LOOP_FIGURE") == "mean_us_per_step"
         else "the process's fastest repeat")
METRICS = [("storm", "value", "us per launch, the process's median round"),
           ("storm", "call_us", "us per launch call, the median of one round of timed calls"),
           ("torch", "value", f"us per step, {_LOOP}"),
           ("compile", "value", f"us per step, {_LOOP}")]


def interval(v, rng):
    """Bootstrap 95% interval of the median."""
    if len(v) < 2:
        return (v[0], v[0]) if v else (float("nan"), float("nan"))
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(2000))
    return meds[50], meds[1949]


def fmt(v, rng, digits=2):
    lo, hi = interval(v, rng)
    return f"{statistics.median(v):+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def fmt_abs(v, rng, digits=2):
    lo, hi = interval(v, rng)
    return f"{statistics.median(v):.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def per_round(rows, w, key):
    """tool -> round -> median of that round's processes."""
    raw = {}
    for r in rows:
        if r["workload"] == w and r.get(key) is not None:
            raw.setdefault(r["tool"], {}).setdefault(r["round"], []).append(r[key])
    return {t: {k: statistics.median(v) for k, v in rounds.items()} for t, rounds in raw.items()}


def paired(a, b):
    return [a[r] - b[r] for r in a if r in b]


def verdict(d, rng, what):
    lo, hi = interval(d, rng)
    return f"below {what}" if hi < 0 else f"above {what}" if lo > 0 else f"not told apart from {what}"


def table(rows, w, key, what, mode, rng):
    unit = what.split(",")[0]
    name = w if key == "value" else f"{w}-call"
    by = per_round(rows, w, key)
    if "plain" not in by:
        print(f"\n{name}: no plain figures yet\n")
        return
    digits = 2 if w == "storm" else 1
    print(f"\n### {name} ({what}; median [bootstrap 95% interval] over rounds; a round's figure is the median of "
          f"its processes; added: paired by round)\n")
    streams = {}
    for r in rows:
        if r["workload"] == w and r.get("stream_bytes"):
            streams.setdefault(r["tool"], []).append(r["stream_bytes"])
    print("| tool | rounds | per unit | added vs plain | added % | stream MB (median) |")
    print("|---|---|---|---|---|---|")
    plain = by["plain"]
    for tool, vals in sorted(by.items(), key=lambda kv: (kv[0] != "plain", kv[0] != "speedlab", kv[0])):
        added = paired(vals, plain)
        pct = [100 * (vals[r] / plain[r] - 1) for r in vals if r in plain]
        mb = f"{statistics.median(streams[tool]) / 1e6:.1f}" if tool in streams else "-"
        print(f"| {tool} | {len(vals)} | {fmt_abs(list(vals.values()), rng, digits)} | "
              f"{fmt(added, rng, digits) if tool != 'plain' and added else '-'} | "
              f"{fmt(pct, rng, 1) if tool != 'plain' and pct else '-'} | {mb} |")
    if mode == "compare" and "speedlab" in by and "nsys" in by:
        d = paired(by["speedlab"], by["nsys"])
        if d:
            lo, hi = interval(d, rng)
            nsys_added = statistics.median(paired(by["nsys"], plain)) if paired(by["nsys"], plain) else float("nan")
            res = 100 * (hi - lo) / 2 / nsys_added if nsys_added and nsys_added > 0 else float("nan")
            print(f"\nspeedlab - nsys, paired by round: {fmt(d, rng, digits)} {unit}: {verdict(d, rng, 'nsys')} "
                  f"({len(d)} rounds); the interval's half width is {res:.0f}% of nsys's added cost "
                  f"({nsys_added:.{digits}f} {unit})")
    if mode == "breakdown" and "speedlab" in by:
        print(f"\nEach part turned off against the default, paired by round ({unit}; negative: cheaper "
              f"than the default by that much):\n")
        for tool, vals in sorted(by.items()):
            if tool in ("plain", "speedlab"):
                continue
            d = paired(vals, by["speedlab"])
            if d:
                print(f"- {tool} - speedlab: {fmt(d, rng, digits)} ({verdict(d, rng, 'the default')}, {len(d)} rounds)")
        # A breakdown with nsys among its tools (the cost-probe stages): each speedlab
        # variant against nsys, paired by round, so the probe says which one is below it.
        if "nsys" in by:
            print(f"\nEach speedlab variant against nsys, paired by round ({unit}; negative: cheaper than nsys):\n")
            for tool, vals in sorted(by.items()):
                if tool in ("plain", "nsys"):
                    continue
                d = paired(vals, by["nsys"])
                if d:
                    print(f"- {tool} - nsys: {fmt(d, rng, digits)} ({verdict(d, rng, 'nsys')}, {len(d)} rounds)")
    if mode == "light":
        light_differences(by, w, name, unit, digits, rng)


def light_differences(by, w, name, unit, digits, rng):
    """MODE=light: the differences paired by round, with the upper end of each interval. The
    storm in its own unit (us per launch), the loops in percent of plain's step: their steps
    differ by workload and by machine, a share of the step does not."""
    storm = w == "storm"
    pairs = [("speedlab", "sl-floor")] if storm else [("speedlab", "plain"), ("sl-floor", "plain")]
    pairs += [(t, "plain") for t in ("sl-full", "cupti-bare", "cupti-attach", "nsys", "torchprof")]
    # speedlab's own floor against CUPTI's bare kernel records (floor_probe.cpp): what of the
    # floor is speedlab's (its process, its threads) rather than CUPTI's; and the default
    # against CUPTI's own floor, the floor the issue names for its storm bound.
    pairs += [("sl-floor", "cupti-bare"), ("speedlab", "cupti-bare")]
    lines = []
    for a, b in pairs:
        if a not in by or b not in by:
            continue
        if storm:
            d, u, dg = paired(by[a], by[b]), unit, digits
        else:
            d = [100 * (by[a][r] / by[b][r] - 1) for r in by[a] if r in by[b]]
            u, dg = f"% of {b}'s step", 1
        if not d:
            continue
        # One interval for the figure and its upper end (a second bootstrap draw would differ).
        lo, hi = interval(d, rng)
        figure = f"{statistics.median(d):+.{dg}f} [{lo:+.{dg}f}, {hi:+.{dg}f}]"
        lines.append(f"- {a} - {b}: {figure} {u}; upper end {hi:+.{dg}f} "
                     f"({'above' if lo > 0 else 'below' if hi < 0 else 'not told apart from'} {b}, {len(d)} rounds)")
    if lines:
        print(f"\n{name if storm else name + ' (percent of plain)'}, paired by round (median [bootstrap 95% interval]):\n")
        print("\n".join(lines))


def output_table(rows):
    """MODE=light: each tool's output per process, median over its processes."""
    by = {}
    for r in rows:
        for key in ("output_bytes", "stream_bytes"):
            if r.get(key) is not None:
                by.setdefault((r["workload"], r["tool"]), {}).setdefault(key, []).append(r[key])
    if not by:
        return
    print("\n### Output per process (median; speedlab: the whole --out folder, and its streams alone; "
          "nsys: the .nsys-rep; torchprof: the Chrome trace)\n")
    print("| workload | tool | processes | output MB | streams MB |")
    print("|---|---|---|---|---|")
    order = {w: i for i, (w, _, _) in enumerate(METRICS)}
    for (w, tool), v in sorted(by.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][0], kv[0][1] != "speedlab",
                                                            kv[0][1])):
        out, streams = v.get("output_bytes", []), v.get("stream_bytes", [])
        mb = lambda b: f"{statistics.median(b) / 1e6:.2f}" if b else "-"
        print(f"| {w} | {tool} | {max(len(out), len(streams))} | {mb(out)} | {mb(streams)} |")


def placement_table(rows):
    """MODE=light: each tool's figure by where its program's main thread last ran (main_cpu)
    and whether another thread of the process last ran on that CPU too: the placement behind
    processes of one tool that fall near two figures."""
    groups = {}
    for r in rows:
        if r.get("main_cpu") is None or r.get("value") is None:
            continue
        shared = "shared" if r.get("beside_main") else "alone"
        groups.setdefault((r["workload"], r["tool"], r["main_cpu"], shared), []).append(r["value"])
    if not groups:
        return
    print("\n### Placement (the program's main thread: its last CPU, alone there or with another thread "
          "of the process; median figure of those processes)\n")
    print("| workload | tool | main CPU | beside it | processes | median figure |")
    print("|---|---|---|---|---|---|")
    for (w, tool, cpu, shared), v in sorted(groups.items()):
        print(f"| {w} | {tool} | {cpu} | {shared} | {len(v)} | {statistics.median(v):.2f} |")


def sign_test(below, n):
    """P(at least `below` of n rounds below) if either tool were as likely to be cheaper."""
    return sum(math.comb(n, i) for i in range(below, n + 1)) / 2 ** n if n else float("nan")


def run_name(path):
    """A run's label: the file's name, or its folder's for a results.jsonl."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.basename(os.path.dirname(os.path.abspath(path))) if stem == "results" else stem


def pooled(paths, rng):
    runs = [[json.loads(line) for line in open(p) if line.strip()] for p in paths]
    print("\n### Every run's rounds together (a round paired with plain within its run)\n")
    print("| workload | figure | tool | rounds | per unit | added vs plain | added % |")
    print("|---|---|---|---|---|---|---|")
    for w, key, what in METRICS:
        unit, digits = what.split(",")[0], 2 if w == "storm" else 1
        for tool in ("plain", "speedlab", "nsys"):
            vals, added, pct = [], [], []
            for rows in runs:
                by = per_round(rows, w, key)
                if tool not in by or "plain" not in by:
                    continue
                vals += list(by[tool].values())
                added += paired(by[tool], by["plain"])
                pct += [100 * (by[tool][r] / by["plain"][r] - 1) for r in by[tool] if r in by["plain"]]
            if vals:
                print(f"| {w} | {unit} | {tool} | {len(vals)} | {fmt_abs(vals, rng, digits)} | "
                      f"{fmt(added, rng, digits) if tool != 'plain' else '-'} | {fmt(pct, rng, 1) if tool != 'plain' else '-'} |")
    print("\n### speedlab - nsys, paired by round, per run and pooled (negative: cheaper than nsys)\n")
    print("| workload | figure | run | rounds | speedlab - nsys | rounds below nsys | sign test p | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for w, key, what in METRICS:
        unit, digits, every = what.split(",")[0], 2 if w == "storm" else 1, []
        for path, rows in zip(paths, runs):
            by = per_round(rows, w, key)
            d = paired(by["speedlab"], by["nsys"]) if "speedlab" in by and "nsys" in by else []
            if not d:
                continue
            every += d
            below = sum(x < 0 for x in d)
            print(f"| {w} | {unit} | {run_name(path)} | {len(d)} | "
                  f"{fmt(d, rng, digits)} | {below} | {sign_test(below, len(d)):.3f} | {verdict(d, rng, 'nsys')} |")
        if every:
            below = sum(x < 0 for x in every)
            print(f"| {w} | {unit} | **pooled** | {len(every)} | {fmt(every, rng, digits)} | {below} | "
                  f"{sign_test(below, len(every)):.4f} | {verdict(every, rng, 'nsys')} |")


def main():
    mode = os.environ.get("MODE", "compare")
    if mode == "pooled":
        pooled(sys.argv[1:], random.Random(1))
        return
    # Several files (runs) are pooled: a round stays paired within its run.
    rows = []
    for i, path in enumerate(sys.argv[1:]):
        for line in open(path):
            if line.strip():
                row = json.loads(line)
                row["round"] += 100000 * i
                rows.append(row)
    rng = random.Random(1)
    for w, key, what in METRICS:
        if any(r["workload"] == w for r in rows):
            table(rows, w, key, what, mode, rng)
    if mode == "light":
        output_table(rows)
        placement_table(rows)
    walls = {}
    for r in rows:
        if r.get("wall_s") is not None:
            walls.setdefault(f'{r["workload"]}/{r["tool"]}', []).append(r["wall_s"])
    if walls:
        print("\nprocess wall time, median s (what a round's time goes to): " +
              ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in sorted(walls.items())))
    failed = [r for r in rows if r["value"] is None]
    if failed:
        print(f"\nno figure from {len(failed)} process(es): " +
              ", ".join(f"{r['workload']}/{r['tool']}/round {r['round']} (exit {r['exit']})" for r in failed[:12]))


if __name__ == "__main__":
    main()
