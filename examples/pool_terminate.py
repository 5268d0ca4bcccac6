"""A multiprocessing pool (spawn) whose workers are terminated as soon as their work is done.

    speedlab profile --out prof -- python3 examples/pool_terminate.py [--workers 2] [--tasks 2]

Each task runs three CuPy kernels (ones, multiply, sum) and returns its result; leaving the
`with Pool(...)` block calls Pool.terminate(), which sends SIGTERM to every worker, usually
before a periodic flush could write their records. The parent never touches CUDA. Prints
one JSON line with the tasks' results and each worker's pid.
"""
import argparse
import json
import multiprocessing as mp
import os


def task(seed):
    import cupy as cp
    x = cp.ones(1 << 20, dtype=cp.float32)
    y = x * seed
    total = float(y.sum())  # the sum's copy back synchronizes
    return os.getpid(), total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--tasks", type=int, default=2)
    args = p.parse_args()
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.workers) as pool:
        out = pool.map(task, range(1, args.tasks + 1), chunksize=1)
    assert [t for _, t in out] == [float(s * (1 << 20)) for s in range(1, args.tasks + 1)], out
    print(json.dumps({"example": "pool_terminate", "tasks": args.tasks, "kernels_per_task": 3,
                      "worker_pids": sorted({pid for pid, _ in out})}), flush=True)


if __name__ == "__main__":
    main()
