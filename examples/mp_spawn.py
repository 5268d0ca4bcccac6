"""Python multiprocessing with spawn: a pool of workers, each multiplying vectors in CuPy.

    speedlab profile --out prof -- python3 examples/mp_spawn.py [--workers 2] [--tasks 4]

Pool workers end with os._exit, so no exit handler runs in them: their streams keep what
the periodic flush wrote (marked truncated). The parent never touches CUDA.
"""
import argparse
import multiprocessing as mp


def task(seed):
    import numpy as np
    import cupy as cp
    x = cp.asarray(np.full(1 << 20, seed, dtype=np.float32))
    y = x * x
    cp.cuda.Device().synchronize()
    return float(y[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--tasks", type=int, default=4)
    args = p.parse_args()
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.workers) as pool:
        out = pool.map(task, range(1, args.tasks + 1))
        import time
        time.sleep(1.0)  # workers idle past one flush interval before the pool ends them
    assert out == [float(s * s) for s in range(1, args.tasks + 1)], out
    print(f"mp_spawn: {args.tasks} tasks on {args.workers} spawned workers: ok")


if __name__ == "__main__":
    main()
