#!/usr/bin/env python3
"""speedlab's per-kernel counters against Nsight Compute, on the GPU machine.

  counters_vs_ncu.py SPEEDLAB RUN_DIR OUT_DIR [--cache-control none|all] [--suite FILE]

RUN_DIR is a `speedlab run` output with the counters backend (results.jsonl). Each
(workload, variant) with counters runs again, all its points in one in-process run, under
`ncu --clock-control none --cache-control <policy> --print-kernel-base mangled` reading the
metrics speedlab read for it (its metric set, so the same passes). A launch ncu saw belongs
to the point whose counters have its (mangled name, grid, block); a key two points share
goes to the point of the last launch that only one point has (points run in order).
speedlab's figure (the median over its K profiled launches of the counters pass) is set
against ncu's median over every launch of that point. Prints a Markdown table and writes
OUT_DIR/counters-vs-ncu-<policy>.json as it goes. Exit 0 always (the table says what differs).
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time

METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]


def base_name(name):
    """The kernel's own identifier from a mangled name (for the table; matching uses the whole name)."""
    if not name.startswith("_Z"):
        return name
    s = name[2:]
    nested = s.startswith("N")
    if nested:
        s = s[1:]
    last = None
    while s and s[0].isdigit():
        n = re.match(r"\d+", s).group(0)
        s = s[len(n):]
        last, s = s[:int(n)], s[int(n):]
        if not nested or s.startswith("I"):  # template arguments follow: the name is complete
            break
    return last or name


def dims(text):
    return tuple(int(x) for x in re.findall(r"\d+", text or ""))


def ncu_group(speedlab, suite, workload, variant, metrics, ncu, policy, log):
    """Every kernel launch of one (workload, variant) under ncu, in launch order."""
    cmd = [ncu, "--clock-control", "none", "--cache-control", policy, "--print-kernel-base", "mangled",
           "--metrics", ",".join(metrics), "--csv", "--print-units", "base", speedlab, "run", suite,
           "--workload", workload, "--variant", variant, "--no-isolate", "--profilers", "host", "--reports", "json",
           "--calibrate", "off", "--warmup", "1", "--min-samples", "2", "--max-samples", "2", "--min-time", "0",
           "--max-time", "1", "--force", "--out", f"/tmp/speedlab-ncu-{workload}-{variant}-{policy}"]
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    log.write(f"{' '.join(cmd)}\nexit {p.returncode}, {time.time() - start:.1f} s\n{p.stderr[-1500:]}\n")
    rows = [l for l in p.stdout.splitlines() if l.startswith('"')]
    launches = {}
    for r in csv.DictReader(rows):
        try:
            value = float(r["Metric Value"].replace(",", ""))
            launch_id = int(r["ID"])
        except (KeyError, ValueError):
            continue
        entry = launches.setdefault(launch_id, {"key": (r["Kernel Name"], dims(r.get("Grid Size")),
                                                        dims(r.get("Block Size"))), "metrics": {}})
        entry["metrics"][r["Metric Name"]] = value
    return [launches[i] for i in sorted(launches)]


def assign(points, launches):
    """point index -> key -> [metrics] of the ncu launches that belong to it."""
    owners = {}
    for i, p in enumerate(points):
        for k in p["counters"]["kernels"]:
            key = (k["kernel"], tuple(k.get("grid") or []), tuple(k.get("block") or []))
            owners.setdefault(key, [])
            if i not in owners[key]:
                owners[key].append(i)
    out, current = {}, None
    for l in launches:
        who = owners.get(l["key"], [])
        if len(who) == 1:
            current = who[0]
        elif not who or current not in who:
            continue  # a kernel speedlab did not profile, or no way to tell whose
        out.setdefault(who[0] if len(who) == 1 else current, {}).setdefault(l["key"], []).append(l["metrics"])
    return out


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
    groups = {}
    for line in open(os.path.join(run_dir, "results.jsonl")):
        point = json.loads(line)
        c = point.get("counters")
        if c and c.get("kernels"):
            groups.setdefault((point["workload"], point["variant"]), []).append(point)
    rows = []
    json_path = os.path.join(out_dir, f"counters-vs-ncu-{policy}.json")
    for (workload, variant), points in groups.items():
        metrics = list(dict.fromkeys(METRICS + points[0]["counters"]["metrics"]))
        try:
            launches = ncu_group(speedlab, suite, workload, variant, metrics, ncu, policy, log)
        except subprocess.TimeoutExpired:
            log.write(f"{workload}/{variant}: ncu timed out\n")
            continue
        theirs = assign(points, launches)
        for i, point in enumerate(points):
            ours = {}
            for k in point["counters"]["kernels"]:
                ours.setdefault((k["kernel"], tuple(k.get("grid") or []), tuple(k.get("block") or [])), []).append(k["metrics"])
            for key, ms in ours.items():
                match = theirs.get(i, {}).get(key, [])
                row = {"point": point["id"], "kernel": key[0], "grid": list(key[1]), "block": list(key[2]),
                       "ours_launches": len(ms), "ncu_launches": len(match), "metrics": {}}
                for metric in metrics:
                    a = [m[metric] for m in ms if metric in m]
                    b = [m[metric] for m in match if metric in m]
                    if a and b:
                        va, vb = statistics.median(a), statistics.median(b)
                        row["metrics"][metric] = {"speedlab": va, "ncu": vb, "ncu_min": min(b), "ncu_max": max(b),
                                                  "diff_pct": 100 * (va - vb) / vb if vb else None}
                rows.append(row)
        json.dump(rows, open(json_path, "w"), indent=1)  # so far
    json.dump(rows, open(json_path, "w"), indent=1)

    print("| point | kernel | ncu launches | duration us: speedlab / ncu (diff) | DRAM read MB (diff) | DRAM write MB (diff) |")
    print("|---|---|---|---|---|---|")
    within = total = 0
    for r in rows:
        cells = []
        for metric, scale in zip(METRICS, (1e3, 1e6, 1e6)):
            v = r["metrics"].get(metric)
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
        print(f"| {r['point']} | {base_name(r['kernel'])} | {r['ncu_launches']} | " + " | ".join(cells) + " |")
    for r in rows:
        for metric, v in r["metrics"].items():
            if "sass" in metric and (v["speedlab"] or v["ncu"]):
                print(f"instruction count {r['point']} {base_name(r['kernel'])} "
                      f"{metric.split('executed_')[1].replace('_pred_on.sum', '')}: "
                      f"speedlab {v['speedlab']:.4g}, ncu {v['ncu']:.4g}")
    print(f"\ncounters vs ncu (--cache-control {policy}): {within} of {total} figures within 3% "
          f"(figures under 10 us or 1 MB not counted)")


if __name__ == "__main__":
    main()
