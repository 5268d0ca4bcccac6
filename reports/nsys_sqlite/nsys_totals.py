#!/usr/bin/env python3
"""Print speedlab's own kernel / memcpy / memset / API totals from a trace.sqlite written
by the nsys-sqlite reporter, in the same groups Nsight's reports use, so they can be
compared with `nsys stats` to the nanosecond.

    python3 reports/nsys_sqlite/nsys_totals.py OUT/trace.sqlite
    python3 reports/nsys_sqlite/nsys_totals.py OUT/trace.sqlite --nsys /path/to/nsys

With --nsys it also runs `nsys stats` (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
cuda_gpu_mem_size_sum, cuda_api_sum) on the same file, compares totals and instance counts
row by row and exits 1 on any mismatch. Standard library only.
"""
import argparse
import csv
import io
import re
import sqlite3
import subprocess
import sys


def strip_version(name):
    # cudaLaunchKernel_v7000 -> cudaLaunchKernel (what cuda_api_sum shows)
    return re.sub(r"_v\d+$", "", name)


def own_totals(path):
    db = sqlite3.connect(path)
    out = {"kern": {}, "mem_time": {}, "mem_size": {}, "api": {}}
    for name, total, count in db.execute(
        "SELECT s.value, sum(k.end - k.start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
        "JOIN StringIds AS s ON s.id = k.demangledName GROUP BY 1"
    ):
        out["kern"][name] = (total, count)
    for name, total, size, count in db.execute(
        "SELECT '[CUDA memcpy ' || o.label || ']', sum(m.end - m.start), sum(m.bytes), count(*) "
        "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind GROUP BY 1"
    ):
        out["mem_time"][name] = (total, count)
        out["mem_size"][name] = (size, count)
    for total, size, count in db.execute(
        "SELECT sum(end - start), sum(bytes), count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"
    ):
        if count:
            out["mem_time"]["[CUDA memset]"] = (total, count)
            out["mem_size"]["[CUDA memset]"] = (size, count)
    for name, total, count in db.execute(
        "SELECT s.value, sum(r.end - r.start), count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
        "JOIN StringIds AS s ON s.id = r.nameId GROUP BY 1"
    ):
        key = strip_version(name)
        t, c = out["api"].get(key, (0, 0))
        out["api"][key] = (t + total, c + count)
    return out


def print_totals(t):
    print("speedlab totals from the SQLite file (nanoseconds, bytes)")
    for title, key, unit in (("kernels", "kern", "ns"), ("memory operations (time)", "mem_time", "ns"),
                             ("memory operations (size)", "mem_size", "B"), ("CUDA API", "api", "ns")):
        rows = t[key]
        print(f"\n{title}:")
        print(f"  {'total (' + unit + ')':>18}  {'count':>7}  name")
        for name, (total, count) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
            print(f"  {total:>18}  {count:>7}  {name}")
        print(f"  {sum(v[0] for v in rows.values()):>18}  {sum(v[1] for v in rows.values()):>7}  (all)")


UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9,
         "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}


def nsys_rows(nsys, report, path, name_col):
    cmd = [nsys, "stats", "--report", report, "--format", "csv", "--output", "-", path]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr.strip()}")
    lines = res.stdout.splitlines()
    # Skip whatever nsys prints before the CSV header (the line naming the columns).
    for i, line in enumerate(lines):
        if "Total" in line and name_col in line:
            return list(csv.DictReader(io.StringIO("\n".join(lines[i:]))))
    return []


def total_column(row):
    """The 'Total ...' column, its value in base units and the rounding tolerance."""
    for col, text in row.items():
        if col and col.startswith("Total"):
            m = re.search(r"\(([A-Za-z]+)\)", col)
            factor = UNITS.get(m.group(1), 1) if m else 1
            text = text.replace(",", "").strip()
            decimals = len(text.split(".")[1]) if "." in text else 0
            return float(text) * factor, 0.5 * 10 ** -decimals * factor if decimals or factor > 1 else 0
    raise KeyError("no Total column in nsys output")


def compare(t, nsys, path):
    checks = (("cuda_gpu_kern_sum", "kern", ("Instances",), "Name"),
              ("cuda_gpu_mem_time_sum", "mem_time", ("Count", "Instances"), "Operation"),
              ("cuda_gpu_mem_size_sum", "mem_size", ("Count", "Instances"), "Operation"),
              ("cuda_api_sum", "api", ("Num Calls", "Count"), "Name"))
    bad = 0
    for report, key, count_cols, name_col in checks:
        theirs = {}
        for r in nsys_rows(nsys, report, path, name_col):
            total, tol = total_column(r)
            count = next(int(float(r[c].replace(",", ""))) for c in count_cols if c in r)
            theirs[r[name_col]] = (total, count, tol)
        ours = t[key]
        for name in sorted(set(ours) | set(theirs)):
            a, b = ours.get(name), theirs.get(name)
            same = a is not None and b is not None and abs(a[0] - b[0]) <= b[2] and a[1] == b[1]
            bad += not same
            print(f"{'OK      ' if same else 'MISMATCH'} {report:22} {name[:60]:60} "
                  f"speedlab={a} nsys={None if b is None else b[:2]}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sqlite")
    ap.add_argument("--nsys", help="path of the nsys binary; compare with nsys stats")
    args = ap.parse_args()
    t = own_totals(args.sqlite)
    print_totals(t)
    if args.nsys:
        print("\ncomparison with nsys stats:")
        bad = compare(t, args.nsys, args.sqlite)
        print(f"\n{bad} mismatches")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
