#!/usr/bin/env python3
"""The SASS instruction counters of the counters-sass stage side by side (gpu-check.sh).

  counters_sass_table.py DIR

DIR holds ncu.csv (ncu --csv --print-kernel-base mangled over suites/counters-diag.yaml)
and one speedlab output folder per metric-set case (results.jsonl). Prints, per kernel and
instruction counter, ncu's value and each case's value, and the ratio to ncu.
"""
import csv
import json
import os
import statistics
import sys


def short(metric):
    for prefix in ("sm__sass_thread_inst_executed_", "smsp__sass_thread_inst_executed_"):
        if metric.startswith(prefix):
            head = "sm:" if metric.startswith("sm__") else "smsp:"
            return head + metric[len(prefix):].replace("_pred_on.sum", "")
    return metric


def ncu_values(path):
    rows = [l for l in open(path, errors="replace") if l.startswith('"')]
    by = {}
    for r in csv.DictReader(rows):
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        by.setdefault(r["Kernel Name"], {}).setdefault(r["Metric Name"], []).append(v)
    return {k: {m: statistics.median(v) for m, v in ms.items()} for k, ms in by.items()}


def main():
    root = sys.argv[1]
    ncu = ncu_values(os.path.join(root, "ncu.csv")) if os.path.exists(os.path.join(root, "ncu.csv")) else {}
    cases = sorted(d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "results.jsonl")) and d != "ncu-run")
    ours = {}  # kernel -> case -> metric -> value
    passes = {}
    for case in cases:
        for line in open(os.path.join(root, case, "results.jsonl")):
            p = json.loads(line)
            c = p.get("counters") or {}
            passes[case] = c.get("passes")
            for k in c.get("kernels", []):
                for m, v in k["metrics"].items():
                    ours.setdefault(k["kernel"], {}).setdefault(case, {}).setdefault(m, v)
            for msg in p.get("profiler_messages", []):
                print(f"sass {case} {p['id']}: note: {msg[:160]}")
    print("sass cases: " + ", ".join(f"{c} ({passes.get(c)} passes)" for c in cases))
    for kernel in sorted(set(ours) | set(ncu)):
        theirs = ncu.get(kernel, {})
        metrics = sorted({m for case in ours.get(kernel, {}).values() for m in case if not m.startswith("dram")} |
                         {m for m in theirs if not m.startswith("dram")})
        print(f"sass kernel {kernel[:70]} (ncu duration {theirs.get('gpu__time_duration.sum', 0) / 1e3:.1f} us)")
        for m in metrics:
            cells = []
            ref = theirs.get(m)
            for case in cases:
                v = ours.get(kernel, {}).get(case, {}).get(m)
                if v is None:
                    continue
                ratio = f" ({v / ref:.3g}x)" if ref else ""
                cells.append(f"{case} {v:.4g}{ratio}")
            print(f"  {short(m):22s} ncu {ref if ref is None else format(ref, '.4g')}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
