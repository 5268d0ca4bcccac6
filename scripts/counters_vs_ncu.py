#!/usr/bin/env python3
"""speedlab's per-kernel counters against Nsight Compute, on the GPU machine.

  counters_vs_ncu.py SPEEDLAB RUN_DIR OUT_DIR [--cache-control none|all] [--suite FILE]

RUN_DIR is a `speedlab run` output with the counters backend (results.jsonl). For each of
its points with counters, the same point runs again in-process under
`ncu --clock-control none --cache-control <policy>` reading the same metrics
(gpu__time_duration.sum, dram__bytes_read.sum, dram__bytes_write.sum); speedlab's figure
(the median over its K profiled launches) is set against ncu's median over every launch of
the same kernel (name, grid, block) in that run. Prints a Markdown table and writes
OUT_DIR/counters-vs-ncu-<policy>.json. Exit 0 always (the table says what differs).
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys

METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]
# Read by ncu too, so the instruction counters behind speedlab's FLOPs are checked as well.
EXTRA = ["sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__sass_thread_inst_executed_op_dfma_pred_on.sum"]


def base_name(name):
    """The kernel's own identifier from a mangled or demangled name."""
    if name.startswith("_Z"):
        # _ZN<len><id>...E or _Z<len><id>: the last length-prefixed identifier before the args.
        s = name[2:]
        nested = s.startswith("N")
        if nested:
            s = s[1:]
        last = None
        while s and s[0].isdigit():
            m = re.match(r"(\d+)", s)
            n = int(m.group(1))
            s = s[len(m.group(1)):]
            last, s = s[:n], s[n:]
            if not nested:
                break
            if s.startswith("I"):  # template arguments follow: the name is complete
                break
        return last or name
    name = re.sub(r"^void\s+", "", name)
    depth, out = 0, ""
    for ch in name:  # drop template arguments and the parameter list
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0:
            out += ch
    return out.split("::")[-1].strip()


def dims(text):
    return [int(x) for x in re.findall(r"\d+", text or "")]


def ncu_point(speedlab, suite, point, ncu, policy, log):
    cmd = [ncu, "--clock-control", "none", "--cache-control", policy, "--metrics", ",".join(METRICS + EXTRA), "--csv",
           "--print-units", "base", speedlab, "run", suite, "--workload", point["workload"], "--variant",
           point["variant"], "--no-isolate", "--profilers", "host", "--reports", "json", "--calibrate", "off",
           "--warmup", "1", "--min-samples", "2", "--max-samples", "2", "--min-time", "0", "--out",
           "/tmp/speedlab-ncu-point"]
    for k, v in sorted(point.get("params", {}).items()):
        cmd += ["--param", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    log.write(" ".join(cmd) + "\n" + p.stderr[-2000:] + "\n")
    rows = [l for l in p.stdout.splitlines() if l.startswith('"')]
    launches = {}
    for r in csv.DictReader(rows):
        try:
            value = float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        key = (r["ID"], r["Kernel Name"], r.get("Grid Size", ""), r.get("Block Size", ""))
        launches.setdefault(key, {})[r["Metric Name"]] = value
    return launches


def main():
    args = sys.argv[1:]
    policy = "none"
    suite = "suites/gpu-counters.yaml"
    if "--cache-control" in args:
        i = args.index("--cache-control")
        policy = args[i + 1]
        del args[i:i + 2]
    if "--suite" in args:
        i = args.index("--suite")
        suite = args[i + 1]
        del args[i:i + 2]
    speedlab, run_dir, out_dir = args[:3]
    ncu = os.environ.get("NCU", "ncu")
    os.makedirs(out_dir, exist_ok=True)
    log = open(os.path.join(out_dir, f"ncu-{policy}.log"), "w")
    rows = []
    for line in open(os.path.join(run_dir, "results.jsonl")):
        point = json.loads(line)
        c = point.get("counters")
        if not c or not c.get("kernels"):
            continue
        ours = {}
        for k in c["kernels"]:
            key = (base_name(k["kernel"]), tuple(k.get("grid") or []), tuple(k.get("block") or []))
            ours.setdefault(key, []).append(k["metrics"])
        theirs = {}
        for (_, name, grid, block), m in ncu_point(speedlab, suite, point, ncu, policy, log).items():
            theirs.setdefault((base_name(name), tuple(dims(grid)), tuple(dims(block))), []).append(m)
        for key, ms in ours.items():
            match = theirs.get(key)
            if match is None:  # no grid on our side: by name alone
                match = [m for (n, _, _), v in theirs.items() if n == key[0] for m in v]
            row = {"point": point["id"], "kernel": key[0], "grid": list(key[1]), "block": list(key[2]),
                   "ours_launches": len(ms), "ncu_launches": len(match or [])}
            for metric in METRICS + EXTRA:
                a = [m[metric] for m in ms if metric in m]
                b = [m[metric] for m in (match or []) if metric in m]
                if a and b:
                    va, vb = statistics.median(a), statistics.median(b)
                    row[metric] = {"speedlab": va, "ncu": vb, "diff_pct": 100 * (va - vb) / vb if vb else None}
            rows.append(row)
        json.dump(rows, open(os.path.join(out_dir, f"counters-vs-ncu-{policy}.json"), "w"), indent=1)  # so far
    json.dump(rows, open(os.path.join(out_dir, f"counters-vs-ncu-{policy}.json"), "w"), indent=1)
    print(f"| point | kernel | duration us: speedlab / ncu (diff) | DRAM read MB (diff) | DRAM write MB (diff) |")
    print("|---|---|---|---|---|")
    within = total = 0
    for r in rows:
        cells = []
        for metric, scale in zip(METRICS, (1e3, 1e6, 1e6)):
            v = r.get(metric)
            if not v:
                cells.append("no ncu value")
                continue
            d = v["diff_pct"]
            small = v["ncu"] < (1e4 if "time" in metric else 1e6)  # 10 us or 1 MB: relative figures mean little
            if d is not None and not small:
                total += 1
                within += abs(d) <= 3
            cells.append(f"{v['speedlab'] / scale:.2f} / {v['ncu'] / scale:.2f} ({d:+.1f}%)" if d is not None
                         else f"{v['speedlab'] / scale:.2f} / 0")
        print(f"| {r['point']} | {r['kernel']} | " + " | ".join(cells) + " |")
    for r in rows:
        for metric in EXTRA:
            v = r.get(metric)
            if v:
                print(f"instruction count {r['point']} {r['kernel']} {metric.split('_op_')[1].split('_')[0]}: "
                      f"speedlab {v['speedlab']:.4g}, ncu {v['ncu']:.4g}")
    print(f"\ncounters vs ncu (--cache-control {policy}): {within} of {total} figures within 3% "
          f"(figures under 10 us or 1 MB not counted)")


if __name__ == "__main__":
    main()
