"""Monte Carlo pi in Numba CUDA (the lessons' per-thread random streams).

    python3 examples/numba_pi.py [--samples-per-thread 4096] [--launches 20] [--no-sync]
    speedlab profile --out prof -- python3 examples/numba_pi.py

--no-sync keeps the GPU busy from the first launch to the last: the counts add up on the
device and the host copies them back once, at the end (with the default, it copies after
every launch).

Each launch draws samples in every thread with its own xoroshiro128+ stream and counts the
hits inside the quarter circle; the host sums the counts. The estimate must be within 5
binomial standard errors of pi.
"""
import argparse
import math

import numpy as np
np.row_stack = np.vstack  # numba 0.68 still calls it; numpy 2.5 removed it (GPU-MACHINE.md)
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32


@cuda.jit
def count_hits(states, samples, hits):
    t = cuda.grid(1)
    if t >= hits.size:
        return
    n = 0
    for _ in range(samples):
        x = xoroshiro128p_uniform_float32(states, t)
        y = xoroshiro128p_uniform_float32(states, t)
        if x * x + y * y <= 1.0:
            n += 1
    hits[t] = n


@cuda.jit
def add_hits(states, samples, totals):
    t = cuda.grid(1)
    if t >= totals.size:
        return
    n = 0
    for _ in range(samples):
        x = xoroshiro128p_uniform_float32(states, t)
        y = xoroshiro128p_uniform_float32(states, t)
        if x * x + y * y <= 1.0:
            n += 1
    totals[t] += n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1 << 16)
    p.add_argument("--samples-per-thread", type=int, default=4096)
    p.add_argument("--launches", type=int, default=20)
    p.add_argument("--no-sync", action="store_true", help="copy the counts back once, at the end")
    args = p.parse_args()
    block = 256
    grid = (args.threads + block - 1) // block
    states = create_xoroshiro128p_states(args.threads, seed=1)
    hits = cuda.device_array(args.threads, dtype=np.int32)
    total = 0
    if args.no_sync:
        totals = cuda.to_device(np.zeros(args.threads, dtype=np.int64))
        for _ in range(args.launches):
            add_hits[grid, block](states, args.samples_per_thread, totals)
        total = int(totals.copy_to_host().sum())
    for _ in range(0 if args.no_sync else args.launches):
        count_hits[grid, block](states, args.samples_per_thread, hits)
        total += int(hits.copy_to_host().sum())
    m = args.threads * args.samples_per_thread * args.launches
    estimate = 4.0 * total / m
    se = 4.0 * math.sqrt((math.pi / 4) * (1 - math.pi / 4) / m)
    assert abs(estimate - math.pi) < 5 * se, f"pi estimate {estimate} off by more than 5 SE ({se})"
    print(f"numba_pi: {m} samples, pi ~ {estimate:.6f} (SE {se:.1e}): ok")


if __name__ == "__main__":
    main()
