#!/usr/bin/env python3
"""Kernel times of Python variants as `speedlab run` traced them (the worker under the
injection library) against `speedlab profile` over the same CuPy code run as a script.

    python3 scripts/python_kernels_check.py RUN_DIR PROFILE_DIR [POINT_ID_PREFIX ...]

RUN_DIR: a `speedlab run` output folder (results.jsonl, traces/); PROFILE_DIR: a `speedlab
profile --out` folder (*.slstream). Prints, per kernel name, launches and median duration
on both sides and their ratio. Reads the two formats directly (docs/profile-format.md and the
compact trace of model/trace_json.cpp): no speedlab code in between.
"""

import glob
import json
import os
import statistics
import struct
import sys
import zlib


def kernel_rows(trace):
    """(name, duration_ns) of every kernel record of a compact trace object."""
    cols = trace["columns"]["kernels"]
    strings = trace.get("strings", [])
    start, end, name = cols.index("start"), cols.index("end"), cols.index("name")
    return [(strings[r[name]], r[end] - r[start]) for r in trace.get("kernels", [])]


def stream_kernels(path):
    data = open(path, "rb").read()
    out, at = [], 0
    while at + 16 <= len(data):
        magic, kind, length, crc = data[at:at + 4], *struct.unpack_from("<III", data, at + 4)
        payload = data[at + 16:at + 16 + length]
        if magic != b"SLP1" or len(payload) != length or zlib.crc32(payload) != crc:
            break  # a torn tail: whole chunks only
        if kind == 2:
            out += kernel_rows(json.loads(payload)["trace"])
        at += 16 + length
    return out


def by_name(rows):
    table = {}
    for name, ns in rows:
        table.setdefault(name, []).append(ns)
    return table


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    run_dir, profile_dir = argv[0], argv[1]
    wanted = argv[2:]  # e.g. vector/py-cupy-lesson/
    profiled = by_name([k for f in sorted(glob.glob(os.path.join(profile_dir, "*.slstream"))) for k in stream_kernels(f)])
    print(f"speedlab profile ({profile_dir}): "
          + ", ".join(f"{n}: {len(v)} launches, median {statistics.median(v) / 1e3:.2f} us" for n, v in profiled.items()))
    for line in open(os.path.join(run_dir, "results.jsonl")):
        p = json.loads(line)
        if p.get("language") != "python" or (wanted and not any(p["id"].startswith(w) for w in wanted)):
            continue
        if not p.get("trace_file"):
            print(f"{p['id']}: {p['status']}, no device trace ({'; '.join(p.get('profiler_messages', []))[:200]})")
            continue
        run = by_name(kernel_rows(json.load(open(os.path.join(run_dir, p["trace_file"])))))
        split = p.get("split_median") or {}
        print(f"{p['id']}: {p['status']}; split median: kernel {split.get('kernel', 0) / 1e3:.1f} us, "
              f"h2d {split.get('h2d', 0) / 1e3:.1f} us, d2h {split.get('d2h', 0) / 1e3:.1f} us, "
              f"sync {split.get('sync', 0) / 1e3:.1f} us, api {split.get('api', 0) / 1e3:.1f} us, "
              f"host {split.get('host', 0) / 1e3:.1f} us of {split.get('wall_ns', 0) / 1e3:.1f} us")
        for name, durations in sorted(run.items()):
            line = f"  {name}: run {len(durations)} launches, median {statistics.median(durations) / 1e3:.2f} us"
            if name in profiled:
                ratio = statistics.median(durations) / statistics.median(profiled[name])
                line += (f" | profile {len(profiled[name])} launches, median "
                         f"{statistics.median(profiled[name]) / 1e3:.2f} us | run/profile {ratio:.3f}")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
