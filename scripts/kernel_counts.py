#!/usr/bin/env python3
"""Kernels counted by speedlab profile and by nsys for one program (scripts/gpu-light-capture.sh,
stage `counts`): does the light default still record every kernel?

    python3 scripts/kernel_counts.py --speedlab DIR [--full DIR] [--nsys FILE.sqlite] [--label NAME]

--full: a `speedlab profile --full` folder of the same program, counted the same way (where
nsys cannot write its report, as on the GPU machine: ../shared/reference/GPU-MACHINE.md).

DIR is a `speedlab profile --out DIR` folder: its results.json (the program's reports)
lists the program's kernels by name in program.kernels[], each with its `launches` (every
process of the program merged, analysis/program_serialize.cpp); their sum is the count.
Without results.json (the reports failed) the count is the sum of profile.json's
processes[].kernels. FILE.sqlite is `nsys export --type sqlite` of the nsys report: the rows of
CUPTI_ACTIVITY_KIND_KERNEL (0 when the table is absent: nsys saw no kernel).
Prints one JSON line: {"speedlab": N, "nsys": M, "equal": bool}, plus where speedlab's count
came from, profile.json's count when both files are there (the two should agree), the records
speedlab's streams dropped (a count short by a drop is not a missed kernel) and --label.
Exit 0 when the counts were read (equal or not), 2 when either file could not be read.
"""
import argparse
import json
import os
import sqlite3
import sys


def speedlab_kernels(folder):
    """(count, source): program.kernels[].launches summed from results.json, else profile.json."""
    results = os.path.join(folder, "results.json")
    if os.path.isfile(results):
        with open(results) as f:
            program = json.load(f).get("program") or {}
        kernels = program.get("kernels")
        if isinstance(kernels, list):
            return sum(int(k.get("launches", 0)) for k in kernels), "results.json program.kernels[].launches"
    count = profile_json_kernels(folder)
    if count is None:
        raise ValueError(f"{folder}: neither results.json with program.kernels nor profile.json")
    return count, "profile.json processes[].kernels"


def profile_json_sum(folder, field):
    """Sum of profile.json's processes[].FIELD; None without the file."""
    path = os.path.join(folder, "profile.json")
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        processes = json.load(f).get("processes") or []
    return sum(int(p.get(field) or 0) for p in processes)


def profile_json_kernels(folder):
    return profile_json_sum(folder, "kernels")


def speedlab_dropped(folder):
    return profile_json_sum(folder, "dropped_records")


def nsys_kernels(sqlite_path):
    """Rows of CUPTI_ACTIVITY_KIND_KERNEL; 0 when nsys wrote no such table."""
    if not os.path.isfile(sqlite_path):
        raise ValueError(f"{sqlite_path}: no such file")
    con = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    try:
        have = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'CUPTI_ACTIVITY_KIND_KERNEL'").fetchone()
        return con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] if have else 0
    finally:
        con.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--speedlab", required=True, metavar="DIR")
    p.add_argument("--nsys", metavar="FILE.sqlite")
    p.add_argument("--full", metavar="DIR")
    p.add_argument("--label")
    a = p.parse_args()
    out = {}
    if a.label:
        out["program"] = a.label
    try:
        sl, source = speedlab_kernels(a.speedlab)
        others = {}
        if a.nsys:
            others["nsys"] = nsys_kernels(a.nsys)
        if a.full:
            others["full"] = speedlab_kernels(a.full)[0]
    except (OSError, ValueError, sqlite3.Error) as e:
        out["error"] = str(e)
        print(json.dumps(out), flush=True)
        return 2
    out.update({"speedlab": sl, **others, "speedlab_source": source})
    for name, n in others.items():
        out["equal_" + name] = sl == n
    if source.startswith("results.json"):
        out["speedlab_profile_json"] = profile_json_kernels(a.speedlab)
    out["speedlab_dropped_records"] = speedlab_dropped(a.speedlab)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
