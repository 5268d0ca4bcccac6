#!/usr/bin/env python3
"""speedlab's counter bound against Nsight Compute's speed of light, on the GPU machine.

  sol_table.py SPEEDLAB RUN_DIR OUT_DIR [--suite FILE]

RUN_DIR is a `speedlab run` output with the counters backend (the default metric set reads
the bound's units). Each (workload, variant) runs again in-process under
`ncu --clock-control none --cache-control none --section SpeedOfLight --section
ComputeWorkloadAnalysis --metrics <the bound's metrics>` (ncu refuses to start under
speedlab's injection). Per kernel the table sets speedlab's bound (its busiest unit, from
RUN_DIR/results.json's roofline rows) against ncu's "Compute (SM) Throughput" and "Memory
Throughput", its busiest unit among the same metrics and its busiest pipe. Writes
OUT_DIR/sol.json (every figure) as it goes; prints a Markdown table. Exit 0 always.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from counters_vs_ncu import assign, base_name, dims  # noqa: E402

SECTIONS = ["SpeedOfLight", "ComputeWorkloadAnalysis"]
# ncu expands these into the metrics behind its SOL compute and memory figures: which one
# sets a kernel's "Compute (SM) Throughput" (a unit speedlab may not read yet).
BREAKDOWNS = ["breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed",
              "breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"]


def ncu_group(speedlab, suite, workload, variant, metrics, log):
    """Every launch of one (workload, variant) under ncu: key and {metric or SOL name: value}."""
    cmd = [os.environ.get("NCU", "ncu"), "--clock-control", "none", "--cache-control", "none",
           "--print-kernel-base", "mangled", "--csv", "--print-units", "base"]
    for s in SECTIONS:
        cmd += ["--section", s]
    cmd += ["--metrics", ",".join(metrics + BREAKDOWNS)]
    cmd += [speedlab, "run", suite, "--workload", workload, "--variant", variant,
            "--no-isolate", "--profilers", "host", "--reports", "json", "--calibrate", "off", "--warmup", "1",
            "--min-samples", "2", "--max-samples", "2", "--min-time", "0", "--max-time", "1", "--rounds", "1",
            "--force", "--out", f"/tmp/speedlab-sol-{workload}-{variant}"]
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    log.write(f"{' '.join(cmd)}\nexit {p.returncode}, {time.time() - start:.1f} s\n{p.stderr[-1500:]}\n")
    launches = {}
    for r in csv.DictReader(l for l in p.stdout.splitlines() if l.startswith('"')):
        try:
            value = float(r["Metric Value"].replace(",", ""))
            launch_id = int(r["ID"])
        except (KeyError, ValueError):
            continue
        e = launches.setdefault(launch_id, {"key": (r["Kernel Name"], dims(r.get("Grid Size")), dims(r.get("Block Size"))),
                                            "metrics": {}})
        e["metrics"][r["Metric Name"]] = value
    return [launches[i] for i in sorted(launches)]


def busiest(values, units):
    """(unit, pct) of the busiest unit among those read."""
    got = [(u["unit"], values[u["metric"]]) for u in units if u["metric"] in values]
    return max(got, key=lambda x: x[1]) if got else ("", 0.0)


def main():
    args = sys.argv[1:]
    suite = "suites/gpu-sol.yaml"
    if "--suite" in args:
        i = args.index("--suite")
        suite = args[i + 1]
        del args[i:i + 2]
    speedlab, run_dir, out_dir = args[:3]
    os.makedirs(out_dir, exist_ok=True)
    log = open(os.path.join(out_dir, "ncu-sol.log"), "w")
    analysis = json.load(open(os.path.join(run_dir, "results.json"))).get("analysis", {})
    rows_by_point = {}
    for r in analysis.get("roofline", []):
        if r.get("units") and r.get("level", "") in ("", "dram"):
            rows_by_point.setdefault(r["point_id"], []).append(r)
    groups = {}
    for line in open(os.path.join(run_dir, "results.jsonl")):
        point = json.loads(line)
        if (point.get("counters") or {}).get("kernels"):
            groups.setdefault((point["workload"], point["variant"]), []).append(point)
    out, rows = [], []
    for (workload, variant), points in groups.items():
        units = next((r["units"] for p in points for r in rows_by_point.get(p["id"], [])), [])
        metrics = [u["metric"] for u in units]
        try:
            theirs = assign(points, ncu_group(speedlab, suite, workload, variant, metrics, log))
        except subprocess.TimeoutExpired:
            log.write(f"{workload}/{variant}: ncu timed out\n")
            continue
        for i, point in enumerate(points):
            for key, launches in theirs.get(i, {}).items():
                ours = next((r for r in rows_by_point.get(point["id"], [])
                             if (r.get("kernel_mangled") or r["kernel"]) == key[0]), None)
                med = {m: statistics.median(l[m] for l in launches if m in l)
                       for m in set().union(*launches) if any(m in l for l in launches)}
                ncu_unit = busiest(med, [u for u in units])
                pipe = busiest(med, [u for u in units if u["unit"].endswith(" pipe")])
                row = {"point": point["id"], "kernel": base_name(key[0]), "ncu_launches": len(launches),
                       "speedlab_bound": ours and ours.get("counter_bound"), "speedlab_pct": ours and ours.get("counter_bound_pct"),
                       "speedlab_units": ours and ours.get("units"), "declared": ours and ours.get("percent_of_bound"),
                       "ncu_sm": med.get("Compute (SM) Throughput"), "ncu_memory": med.get("Memory Throughput"),
                       "ncu_busiest": ncu_unit, "ncu_pipe": pipe, "ncu": med,
                       "ncu_top_other": sorted(((v, k) for k, v in med.items()
                                                if "pct_of_peak" in k and k not in metrics), reverse=True)[:2]}
                out.append(row)
                json.dump(out, open(os.path.join(out_dir, "sol.json"), "w"), indent=1)
                rows.append(row)
    f = lambda v: "—" if v is None else f"{v:.1f}%"
    print("| point | kernel | speedlab bound (counters) | same unit under ncu | ncu busiest unit | ncu SOL compute / memory | ncu top pipe | declared-work roofline | ncu's top breakdown metrics speedlab does not read |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        unit = r["speedlab_bound"] or ""
        metric = next((u["metric"] for u in (r["speedlab_units"] or []) if u["unit"] == unit), None)
        same = r["ncu"].get(metric) if metric else None
        print(f"| {r['point']} | {r['kernel']} | {unit} {f(r['speedlab_pct'])} | {f(same)} | "
              f"{r['ncu_busiest'][0]} {f(r['ncu_busiest'][1])} | {f(r['ncu_sm'])} / {f(r['ncu_memory'])} | "
              f"{r['ncu_pipe'][0]} {f(r['ncu_pipe'][1])} | {f(r['declared'])} | "
              + ", ".join(f"{k} {v:.1f}%" for v, k in r["ncu_top_other"]) + " |")
    agree = sum(1 for r in rows if r["speedlab_bound"] and r["speedlab_bound"] == r["ncu_busiest"][0])
    print(f"\n{agree} of {len(rows)} kernels: speedlab's bound is ncu's busiest unit")


if __name__ == "__main__":
    main()
