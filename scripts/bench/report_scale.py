#!/usr/bin/env python3
"""Benchmark: reports of a synthetic 10,000-point result set (docs/reports.md, "Scale").

Writes a run folder of POINTS synthetic points (workloads x variants x sizes, 30 samples
each, time splits on the cuda variants, the recorded H100 device model), then times
`speedlab report DIR` (analysis and every format) and prints the wall time and file sizes.
Synthetic numbers: this measures the reporters, not any hardware.

Usage: scripts/bench/report_scale.py BUILD_DIR [POINTS=10000] [REPEATS=3]
"""
import json, math, os, random, shutil, subprocess, sys, tempfile, time

build = sys.argv[1]
points = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
variants = [("serial", "serial"), ("threads", "threads"), ("cuda-lesson", "cuda"), ("cuda", "cuda")]
sizes = 50
workloads = max(1, points // (len(variants) * sizes))
rng = random.Random(1)

work = os.environ.get("KEEP_DIR") or tempfile.mkdtemp(prefix="speedlab-scale-")
os.makedirs(work, exist_ok=True)
try:
    shutil.copy(os.path.join(root, "tests/fixtures/gpu/sweep/device.json"), work)
    run = json.load(open(os.path.join(root, "tests/fixtures/gpu/sweep/run.json")))
    run["suite"] = "synthetic-10k"
    json.dump(run, open(os.path.join(work, "run.json"), "w"))
    n = 0
    with open(os.path.join(work, "results.jsonl"), "w") as out:
        for w in range(workloads):
            for v, kind in variants:
                for s in range(sizes):
                    size = int(1024 * 2 ** (s * 16 / sizes))
                    base = {"serial": 2.0, "threads": 0.3, "cuda-lesson": 1.5, "cuda": 0.02}[v] * size + \
                           {"serial": 1e3, "threads": 2e4, "cuda-lesson": 2e5, "cuda": 1e4}[v]
                    samples = sorted(base * (1 + abs(rng.gauss(0, 0.03))) for _ in range(30))
                    med = samples[15]
                    p = {"id": f"w{w}/{v}/n={size}", "workload": f"w{w}", "variant": v, "kind": kind,
                         "params": {"n": str(size)}, "status": "ok", "threads": 16 if kind == "threads" else 1,
                         "samples_ns": samples,
                         "wall": {"count": 30, "median": med, "mean": sum(samples) / 30, "stddev": med * 0.03,
                                  "min": samples[0], "max": samples[-1], "q1": samples[7], "q3": samples[22],
                                  "ci_low": samples[10], "ci_high": samples[19]},
                         "work": {"bytes_read": 8.0 * size, "bytes_written": 4.0 * size, "flops": float(size),
                                  "host_to_device_bytes": 8.0 * size if v == "cuda-lesson" else 0,
                                  "device_to_host_bytes": 4.0 * size if v == "cuda-lesson" else 0},
                         "first_validation": {"checked": True, "ok": True}, "last_validation": {"checked": True, "ok": True}}
                    if kind == "cuda":
                        copy = 0.9 if v == "cuda-lesson" else 0.0
                        p["split_median"] = {"kernel": med * (0.05 if copy else 0.7), "h2d": med * copy * 0.6,
                                             "d2h": med * copy * 0.4, "copy_other": 0, "memset": 0,
                                             "sync": med * 0.02, "api": med * (0.03 if copy else 0.2),
                                             "host": med * (0.0 if copy else 0.08), "wall_ns": med}
                        p["profiler"] = "cupti"
                    out.write(json.dumps(p) + "\n")
                    n += 1
    times = []
    for _ in range(repeats):
        t = time.monotonic()
        subprocess.run([os.path.join(build, "speedlab"), "report", work], check=True, stdout=subprocess.DEVNULL)
        times.append(time.monotonic() - t)
    sizes_out = {f: os.path.getsize(os.path.join(work, f)) for f in sorted(os.listdir(work)) if f.startswith(("report", "results."))}
    print(f"{n} points, {workloads} workloads: speedlab report (analysis + every format) "
          f"{min(times):.2f} s best, {sorted(times)[len(times) // 2]:.2f} s median of {repeats}")
    for f, b in sizes_out.items():
        print(f"  {f}: {b / 1e6:.2f} MB")
finally:
    if not os.environ.get("KEEP_DIR"):
        shutil.rmtree(work)
