#!/usr/bin/env python3
"""Benchmark: merging a job's ranks (docs/ranks.md, "Scale").

    scripts/bench/rank_merge_bench.py BUILD_DIR [DATA_DIR] [--ranks 64] [--records 1000000]
                                      [--threads N] [--what analyze|report] [--binary]
    scripts/bench/rank_merge_bench.py BUILD_DIR --summaries [--ranks 1024] [--records 100000]
                                      [--drop-streams]

From the streams (default: 64 ranks x 1,000,000 records): writes them with rank_streams.py
into DATA_DIR (kept and reused when it already holds them; default /tmp/speedlab-rank-merge),
then runs `speedlab analyze --json DATA_DIR` (or `speedlab report DATA_DIR --format json`)
under /usr/bin/time -v; limits 15 s and 1 GB of peak memory (maximum resident set size).
The streams are format 1 (JSON records chunks, as the earlier figures in docs/ranks.md) unless
--binary (format 2, what the injection library writes now).

From summaries (--summaries; default 1,024 ranks x 100,000 records, 8 a node): the streams go
into one folder per node (DATA_DIR/nodeN, default /tmp/speedlab-rank-job), each node is
reduced as the job's launcher would on that node, `speedlab report DATA_DIR/nodeN --summary`
(two at a time here; their CPU time is printed, it is spent on the nodes, not in the merge;
nodes that already hold summary.json are not reduced again), --drop-streams then removes the
streams (the merge must work from summary.json alone), and the merge of DATA_DIR is timed
as above; limits 10 s and 1 GB.

Either way it checks that the merge found every rank, the straggler rank_streams.py slowed,
every other rank waiting that long per step (within 1%), and each host's clock offset (7 s
per host) recovered. Prints a short table last; exit status 1 when a limit or a check fails.
Synthetic data: this measures speedlab's reader and rank analysis on this machine, not any
GPU. Wall time on a shared machine depends on its other load: the CPU time (user + sys) is
printed beside it.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT_BYTES = 1024 ** 3
LIMIT_S = {"streams": 15.0, "summaries": 10.0}


def reduce_nodes(speedlab, data, drop):
    """`speedlab report NODE --summary` on every node folder without a summary, two at a time."""
    nodes = sorted(d for d in glob.glob(os.path.join(data, "node*")) if os.path.isdir(d))
    todo = [d for d in nodes if not os.path.exists(os.path.join(d, "summary.json"))]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.time()

    def one(node):
        r = subprocess.run([speedlab, "report", node, "--summary"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"speedlab report {node} --summary failed ({r.returncode}): {r.stderr[-2000:]}")

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(one, todo))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if todo:
        print(f"reduced {len(todo)} of {len(nodes)} nodes in {time.time() - t:.1f} s wall, {cpu:.1f} s CPU "
              f"({cpu / len(todo):.2f} s CPU a node)", file=sys.stderr)
    if drop:
        for f in glob.glob(os.path.join(data, "node*", "*.slstream")):
            os.remove(f)
    return len(nodes), len(todo), cpu


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("data", nargs="?")
    p.add_argument("--ranks", type=int)
    p.add_argument("--records", type=int)
    p.add_argument("--summaries", action="store_true", help="merge from per-node summaries (see above)")
    p.add_argument("--drop-streams", action="store_true", help="with --summaries: remove the streams once reduced")
    p.add_argument("--binary", action="store_true",
                   help="streams in format 2 (binary records chunks, as the injection library writes); always with "
                        "--summaries; needs numpy")
    p.add_argument("--threads", type=int, default=0, help="SPEEDLAB_REPORT_THREADS (0: speedlab's default)")
    p.add_argument("--what", choices=["analyze", "report"], default="analyze")
    a = p.parse_args()
    mode = "summaries" if a.summaries else "streams"
    a.data = a.data or ("/tmp/speedlab-rank-job" if a.summaries else "/tmp/speedlab-rank-merge")
    a.ranks = a.ranks or (1024 if a.summaries else 64)
    a.records = a.records or (100_000 if a.summaries else 1_000_000)
    a.binary = a.binary or a.summaries
    speedlab = os.path.join(a.build, "speedlab")
    if not os.access(speedlab, os.X_OK):
        sys.exit(f"rank_merge_bench.py: {speedlab} is not an executable (build the speedlab target first)")

    expected_file = os.path.join(a.data, "expected.json")
    expected = json.load(open(expected_file)) if os.path.exists(expected_file) else None
    if (not expected or expected["ranks"] != a.ranks or expected["records_per_rank"] != a.records // 64 * 64
            or expected.get("node_folders", False) != a.summaries or expected.get("binary", False) != a.binary):
        t = time.time()
        python = sys.executable
        if a.binary and subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode != 0:
            python = "/usr/bin/python3"  # Debian's, with python3-numpy
        subprocess.run([python, os.path.join(HERE, "rank_streams.py"), a.data, "--ranks", str(a.ranks),
                        "--records", str(a.records)] + (["--node-folders"] if a.summaries else [])
                       + (["--binary"] if a.binary else []), check=True)
        print(f"generated in {time.time() - t:.1f} s", file=sys.stderr)
        expected = json.load(open(expected_file))
    reduced = None
    if a.summaries:
        reduced = reduce_nodes(speedlab, a.data, a.drop_streams)
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(a.data, "**", "*.slstream"), recursive=True))
    summary_size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(a.data, "*", "summary.json")))

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
    if a.summaries:
        notes = " ".join(merged_notes(a, out_file))
        m = re.search(r"(\d+) of (\d+) profile folder\(s\) merged from their summary file", notes)
        checks.append(("merged from summaries", bool(m) and m.group(1) == m.group(2),
                       f"{m.group(1)} of {m.group(2)} node folders" if m else "no summary was used"))
    limit = LIMIT_S[mode]
    checks.append((f"wall <= {limit:.0f} s", wall_s <= limit, f"{wall_s:.1f} s"))
    checks.append(("peak memory <= 1 GB", rss <= LIMIT_BYTES, f"{rss / 1024 ** 2:.0f} MiB"))

    load = os.getloadavg()[0]
    print(f"\nspeedlab {a.what} from {mode}: {expected['ranks']} ranks x {expected['records_per_rank']} records "
          f"(stream format {2 if a.binary else 1}) "
          f"({size / 1e9:.2f} GB of streams, {summary_size / 1e6:.1f} MB of summaries), {os.cpu_count()} cores, "
          f"threads={a.threads or 'default'}, load average {load:.1f}")
    if reduced:
        nodes, done, cpu = reduced
        if done:
            print(f"  per-node reduction (speedlab report NODE --summary): {done} of {nodes} nodes, {cpu:.1f} s CPU "
                  f"({cpu / done:.2f} s a node)")
        else:
            print(f"  per-node reduction: all {nodes} nodes already held summary.json")
    print(f"  merge: wall {wall_s:.1f} s, user {user:.1f} s, sys {sysc:.1f} s (CPU {user + sysc:.1f} s), "
          f"max RSS {rss / 1024 ** 2:.0f} MiB")
    print(f"  {'check':<24} {'result':<6} value")
    for name, ok, value in checks:
        print(f"  {name:<24} {'ok' if ok else 'FAIL':<6} {value}")
    return 0 if all(ok for _, ok, _ in checks) else 1


def merged_notes(a, out_file):
    if a.what == "analyze":
        return json.load(open(out_file))["analysis"].get("notes", [])
    return json.load(open(os.path.join(a.data, "results.json")))["analysis"].get("notes", [])


if __name__ == "__main__":
    sys.exit(main())
