#!/usr/bin/env python3
"""The source stage's summary (scripts/gpu-check.sh source): per kernel, speedlab's top source
lines (results.jsonl, source pass) beside ncu's (the SourceCounters page printed as CUDA lines
with their SASS rows: `ncu -i R --page source --csv --print-source cuda,sass`, whose line rows
carry ncu's own per-line sums).

  python3 scripts/source_table.py DIR [--markdown]
      DIR as the stage leaves it: <case>/run/results.jsonl, ncu-<name>-cuda-sass.csv
"""
import csv
import glob
import json
import os
import sys

# ncu-<case>-cuda-sass.csv -> the kernel that case profiled (gpu-check.sh source, ncu_case).
NCU_KERNELS = {"softmax-naive": "softmax_naive", "softmax-block": "softmax_block",
               "transpose-naive": "naive_kernel", "transpose-tiled": "tiled_kernel",
               # the profile-source stage (speedlab profile --source of examples/source)
               "cuda-rows": "rows_naive", "cupy-rows": "rows_naive", "numba-rows": "rows_naive"}
# ncu's stall columns -> CUPTI's stall reason names (the part after warps_issue_stalled_).
NCU_STALLS = {"stall_long_sb": "long_scoreboard", "stall_lg": "lg_throttle", "stall_barrier": "barrier",
              "stall_short_sb": "short_scoreboard", "stall_wait": "wait", "stall_math": "math_pipe_throttle",
              "stall_mio": "mio_throttle", "stall_not_selected": "not_selected", "stall_selected": "selected",
              "stall_branch_resolving": "branch_resolving", "stall_dispatch": "dispatch_stall",
              "stall_no_instructions": "no_instructions", "stall_drain": "drain", "stall_membar": "membar",
              "stall_imc": "imc_miss", "stall_tex": "tex_throttle", "stall_sleep": "sleeping", "stall_misc": "misc"}


def speedlab_kernels(d):
    """(kernel name, variant) -> the kernel's source view, from every case's results."""
    out = {}
    points = []
    for f in glob.glob(os.path.join(d, "*", "run", "results.jsonl")):
        points += [json.loads(line) for line in open(f)]
    # speedlab profile --source: the case's processes are the points of its results.json
    for f in glob.glob(os.path.join(d, "*", "profile", "results.json")):
        case = os.path.basename(os.path.dirname(os.path.dirname(f)))
        points += [dict(p, variant=case) for p in json.load(open(f)).get("points", [])]
    for p in points:
        for k in (p.get("source") or {}).get("kernels", []):
            if k.get("lines"):
                out[(k["kernel"], p["variant"])] = k
    return out


def number(v):
    try:
        return float(v.replace(",", ""))
    except (AttributeError, ValueError):
        return 0.0


def ncu_lines(path):
    """line -> (all samples, {stall: samples}, global sectors, global requests) from ncu's line rows."""
    text = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(text) if l.startswith('"Line No"')), None)
    if start is None:
        return {}
    header = next(csv.reader([text[start]]))
    samples = header.index("Warp Stall Sampling (All Samples)")
    sectors = next((i for i, h in enumerate(header) if h == "L2 Theoretical Sectors Global"), None)
    requests = next((i for i, h in enumerate(header) if h in ("Global Load Requests", "Requests Global")), None)
    stall_cols = {i: NCU_STALLS[h] for i, h in enumerate(header) if h in NCU_STALLS}
    lines = {}
    for row in csv.reader(text[start + 1:]):
        if len(row) <= samples or not row[0] or row[2] != "-":
            continue  # SASS rows have an address; line rows have '-'
        stalls = {name: number(row[i]) for i, name in stall_cols.items() if i < len(row)}
        lines[int(row[0])] = (number(row[samples]), stalls,
                              number(row[sectors]) if sectors is not None else 0.0,
                              number(row[requests]) if requests is not None else 0.0)
    return lines


def top_stall(stalls):
    return max(stalls, key=stalls.get) if stalls and max(stalls.values()) > 0 else "-"


def compare(kernel, view, ncu):
    total = sum(v[0] for v in ncu.values()) or 1.0
    ncu_top = max(ncu, key=lambda k: ncu[k][0])
    mine = view["lines"][0]
    mine_stall = mine["stalls"][0]["reason"] if mine.get("stalls") else "-"
    ncu_line_share = ncu.get(mine["line"], (0,))[0] / total
    agree = mine["line"] == ncu_top and mine_stall == top_stall(ncu[ncu_top][1])
    return (f"{kernel}: speedlab line {mine['line']} {100 * mine['share']:.1f}% {mine_stall}"
            f" | ncu line {ncu_top} {100 * ncu[ncu_top][0] / total:.1f}% {top_stall(ncu[ncu_top][1])}"
            f" (ncu gives speedlab's line {100 * ncu_line_share:.1f}%) | {'agree' if agree else 'DIFFER'}")


def main():
    d = sys.argv[1]
    views = speedlab_kernels(d)
    if not views:
        print("source: no kernel with source lines in the results (see <case>/run.txt and profiler_messages)")
    for path in sorted(glob.glob(os.path.join(d, "ncu-*-cuda-sass.csv"))):
        case = os.path.basename(path)[4:-len("-cuda-sass.csv")]
        short = NCU_KERNELS.get(case)
        # a profile case's own process first (several cases profile the same kernel)
        match = [(k, v) for (k, var), v in sorted(views.items(), key=lambda kv: kv[0][1] != case)
                 if short and short in k]
        ncu = ncu_lines(path)
        if not match or not ncu:
            print(f"source {case}: {'no speedlab view' if not match else 'no ncu line rows'}")
            continue
        print(f"source {case} {compare(short, match[0][1], ncu)}")


if __name__ == "__main__":
    main()
