#!/usr/bin/env python3
"""The source stage's summary (scripts/gpu-check.sh source): per kernel, speedlab's top source
line (results.jsonl, source pass) beside ncu's (the SourceCounters page as SASS rows, folded
to lines with the PC -> file:line table speedlab dumped from the same cubin).

  python3 scripts/source_table.py DIR     DIR as the stage leaves it: <case>/run/results.jsonl,
                                          <case>/dump/source-*.json, ncu-<name>-sass.csv
"""
import csv
import glob
import json
import os
import sys


# ncu-<case>-sass.csv -> the kernel that case profiled (gpu-check.sh source, ncu_case).
NCU_KERNELS = {"softmax-naive": "softmax_naive", "softmax-block": "softmax_block",
               "transpose-naive": "naive_kernel", "transpose-tiled": "tiled_kernel"}


def short(path):
    return os.path.basename(path) if path else "?"


def speedlab_tops(d):
    """(mangled kernel, variant) -> top line dict, from every case's results."""
    tops = {}
    for f in glob.glob(os.path.join(d, "*", "run", "results.jsonl")):
        for line in open(f):
            p = json.loads(line)
            for k in (p.get("source") or {}).get("kernels", []):
                if k.get("lines"):
                    tops[(k["kernel"], p["variant"])] = (k, k["lines"][0])
    return tops


def pc_lines(d):
    """mangled kernel -> {pc offset: (file, line)} from the raw dumps."""
    table = {}
    for f in glob.glob(os.path.join(d, "*", "dump", "source-*.json")):
        for e in json.load(open(f)).get("lines", []):
            if "line" in e:
                table.setdefault(e["function"], {})[e["pc_offset"]] = (e["file"], e["line"])
    return table


def ncu_rows(path):
    """SASS rows of ncu's source page CSV: (address, sass text, all samples, {stall column: value})."""
    lines = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(lines) if '"Address"' in l or l.startswith("Address")), None)
    if start is None:
        return []
    rows = []
    for r in csv.DictReader(lines[start:]):
        try:
            addr = int(r.get("Address", ""), 16)
        except ValueError:
            continue
        samples_key = next((k for k in r if k and k.startswith("Warp Stall Sampling (All")), None)
        num = lambda v: float(v.replace(",", "")) if v and v.replace(",", "").replace(".", "").isdigit() else 0.0
        stalls = {k: num(v) for k, v in r.items() if k and k.startswith("stall_")}
        rows.append((addr, r.get("Source", ""), num(r.get(samples_key, "")) if samples_key else 0.0, stalls))
    return rows


def ncu_top(rows, pcs):
    """ncu's top line through speedlab's PC table, and its top instruction."""
    if not rows:
        return None
    base = min(r[0] for r in rows)
    total = sum(r[2] for r in rows) or 1
    by_line, stalls, unmapped = {}, {}, 0.0
    for addr, _, n, st in rows:
        loc = pcs.get(addr - base)
        if loc is None:
            unmapped += n
            continue
        by_line[loc] = by_line.get(loc, 0) + n
        for k, v in st.items():
            stalls.setdefault(loc, {})[k] = stalls.setdefault(loc, {}).get(k, 0) + v
    top_sass = max(rows, key=lambda r: r[2])
    if not by_line:
        return None, 0, "", top_sass, unmapped / total
    loc = max(by_line, key=by_line.get)
    st = stalls.get(loc, {})
    top_stall = max(st, key=st.get) if st else ""
    return loc, by_line[loc] / total, top_stall, top_sass, unmapped / total


def main():
    d = sys.argv[1]
    tops, pcs = speedlab_tops(d), pc_lines(d)
    if not tops:
        print("source: no kernel with source lines in the results (see <case>/run.txt and profiler_messages)")
    for (kernel, variant), (k, top) in sorted(tops.items()):
        stall = top["stalls"][0] if top.get("stalls") else {}
        spr = top.get("sectors_per_request")
        mine = (f"{short(top['file'])}:{top['line']} {100 * top['share']:.0f}% of {k['samples']} samples, "
                f"{stall.get('reason', '-')} {100 * stall.get('share', 0):.0f}%" + (f", {spr:.1f} sectors/req" if spr else ""))
        theirs = "ncu: no CSV"
        for csv_path in glob.glob(os.path.join(d, "ncu-*-sass.csv")):
            rows = ncu_rows(csv_path)
            name = os.path.basename(csv_path)
            if not rows or NCU_KERNELS.get(name[4:-9], "?") not in kernel:
                continue
            res = ncu_top(rows, pcs.get(kernel, {}))
            if res is None:
                continue
            loc, share, st, sass, unmapped = res
            where = f"{short(loc[0])}:{loc[1]}" if loc else "unmapped"
            agree = "agree" if loc and loc == (top["file"], top["line"]) else "DIFFER"
            theirs = (f"ncu ({name}): {where} {100 * share:.0f}%, {st or '-'}; top SASS +0x{sass[0] - min(r[0] for r in rows):x} "
                      f"'{sass[1][:40]}'; {100 * unmapped:.0f}% of ncu samples at PCs speedlab never sampled; {agree}")
        print(f"source {variant} {kernel[:40]}: speedlab {mine} | {theirs}")


if __name__ == "__main__":
    main()
