#!/usr/bin/env python3
"""Benchmark: merging 64 rank streams of 1 million records each (docs/ranks.md, "Scale").

    scripts/bench/rank_merge_bench.py BUILD_DIR [DATA_DIR] [--ranks 64] [--records 1000000]
                                      [--threads N] [--what analyze|report]

Writes the streams with rank_streams.py into DATA_DIR (kept and reused when it already
holds them; default /tmp/speedlab-rank-merge), then runs `speedlab analyze --json DATA_DIR`
(or `speedlab report DATA_DIR --format json`) under /usr/bin/time -v and checks that:
  - the merge took at most 60 s and 2 GB of peak memory (maximum resident set size);
  - it found every rank, the straggler rank_streams.py slowed, every other rank waiting that
    long per step (within 1%), and each host's clock offset (7 s per host) recovered.
Prints a short table last; exit status 1 when a limit or a check fails. Synthetic data: this
measures speedlab's reader and rank analysis on this machine, not any GPU.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT_S, LIMIT_BYTES = 60.0, 2 * 1024 ** 3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("data", nargs="?", default="/tmp/speedlab-rank-merge")
    p.add_argument("--ranks", type=int, default=64)
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--threads", type=int, default=0, help="SPEEDLAB_REPORT_THREADS (0: speedlab's default)")
    p.add_argument("--what", choices=["analyze", "report"], default="analyze")
    a = p.parse_args()
    speedlab = os.path.join(a.build, "speedlab")
    if not os.access(speedlab, os.X_OK):
        sys.exit(f"rank_merge_bench.py: {speedlab} is not an executable (build the speedlab target first)")

    expected_file = os.path.join(a.data, "expected.json")
    expected = json.load(open(expected_file)) if os.path.exists(expected_file) else None
    if not expected or expected["ranks"] != a.ranks or expected["records_per_rank"] != a.records // 64 * 64:
        t = time.time()
        subprocess.run([sys.executable, os.path.join(HERE, "rank_streams.py"), a.data, "--ranks", str(a.ranks),
                        "--records", str(a.records)], check=True)
        print(f"generated in {time.time() - t:.1f} s", file=sys.stderr)
        expected = json.load(open(expected_file))
    size = sum(os.path.getsize(os.path.join(a.data, f)) for f in os.listdir(a.data) if f.endswith(".slstream"))

    env = dict(os.environ)
    if a.threads:
        env["SPEEDLAB_REPORT_THREADS"] = str(a.threads)
    cmd = [speedlab, "analyze", "--json", a.data] if a.what == "analyze" else [speedlab, "report", a.data, "--format", "json"]
    out_file = os.path.join(a.data, "merged.json")
    with open(out_file, "w") as out:
        r = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=out, stderr=subprocess.PIPE, text=True, env=env)
    log = r.stderr
    if r.returncode != 0:
        sys.exit(f"rank_merge_bench.py: {' '.join(cmd)} failed ({r.returncode}):\n{log[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", log)
    wall_s = (int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))) if wall else float("nan")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", log).group(1)) * 1024
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", log).group(1))
    sysc = float(re.search(r"System time \(seconds\): ([\d.]+)", log).group(1))

    # What the merge found.
    if a.what == "analyze":
        ranks = json.load(open(out_file))["program"]["ranks"]
    else:
        ranks = json.load(open(os.path.join(a.data, "results.json")))["program"]["ranks"]
    checks = []
    checks.append(("ranks merged", len(ranks["ranks"]) == expected["ranks"], f"{len(ranks['ranks'])} of {expected['ranks']}"))
    checks.append(("steps compared", ranks["steps"] == expected["steps"], f"{ranks['steps']} of {expected['steps']}"))
    if expected["straggler"] is not None:
        checks.append(("straggler", ranks["straggler"] == expected["straggler"],
                       f"rank {ranks['straggler']} (injected: rank {expected['straggler']})"))
        waits = [x["wait_per_step_ns"] for x in ranks["ranks"] if x["rank"] != expected["straggler"]]
        worst = max(abs(w - expected["extra_ns"]) / expected["extra_ns"] for w in waits)
        checks.append(("others' wait per step", worst <= 0.01,
                       f"{min(waits) / 1e3:.1f}-{max(waits) / 1e3:.1f} us (injected {expected['extra_ns'] / 1e3:.1f} us)"))
    offsets = {c["host"]: c["offset_ns"] for c in ranks.get("clocks", [])}
    bad = [h for h, o in offsets.items() if abs(o + 7e9 * int(h[4:])) > 1e3]
    checks.append(("host clocks aligned", len(offsets) == expected["hosts"] and not bad,
                   f"{len(offsets)} hosts, offsets -7 s x host{' (wrong: ' + ', '.join(bad) + ')' if bad else ''}"))
    checks.append(("wall <= 60 s", wall_s <= LIMIT_S, f"{wall_s:.1f} s"))
    checks.append(("peak memory <= 2 GB", rss <= LIMIT_BYTES, f"{rss / 1024 ** 2:.0f} MiB"))

    print(f"\nspeedlab {a.what}: {expected['ranks']} rank streams x {expected['records_per_rank']} records "
          f"({size / 1e9:.2f} GB of streams), {os.cpu_count()} cores, threads={a.threads or 'default'}")
    print(f"  wall {wall_s:.1f} s, user {user:.1f} s, sys {sysc:.1f} s, max RSS {rss / 1024 ** 2:.0f} MiB")
    print(f"  {'check':<24} {'result':<6} value")
    for name, ok, value in checks:
        print(f"  {name:<24} {'ok' if ok else 'FAIL':<6} {value}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
