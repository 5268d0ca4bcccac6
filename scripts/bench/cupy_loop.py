"""A small deterministic CuPy program for kernel counts (scripts/gpu-light-capture.sh, stage
`counts`): every iteration launches the same kernels, so two processes of it launch the same
number, whichever tool traces them.

    python3 scripts/bench/cupy_loop.py [--iterations 200] [--side 1024] [--warmup 5]

Arrays of side x side (1M) float32 elements. Each iteration i: two elementwise operations
(a = x * s_i + y, then sin), a matrix product (cuBLAS), a sum (a reduction) and the sum
stored in out[i]; nothing depends on the data, so the kernels are the same every run. After
--warmup untimed iterations, --iterations timed ones, to a synchronize. Checked against
NumPy (float64) at the first and the last iteration; prints one JSON line: us_per_iteration,
the checked sums, the largest relative error. Exits 1 when a check fails.
"""
import argparse
import json
import sys
import time

import cupy as cp
import numpy as np


def inputs(side):
    """x in [0, 1), y in [0.27, 0.5], w positive: every sum positive, far from cancelling."""
    n = side * side
    x = np.arange(n, dtype=np.float64) / n
    y = 0.5 * np.cos(x * 2.1)
    w = (np.arange(n, dtype=np.int64).reshape(side, side) % 7 + 1) / (4.0 * side)
    return x, y, w


def scale(i, iterations):
    return 1.0 + i / iterations  # a scalar argument: no kernel of its own


def reference(x, y, w, s, side):
    """One iteration's sum in float64 on the CPU."""
    return float((np.sin(x * s + y).reshape(side, side) @ w).sum())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--side", type=int, default=1024)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    side, iters = args.side, args.iterations
    hx, hy, hw = inputs(side)
    x = cp.asarray(hx, dtype=cp.float32)
    y = cp.asarray(hy, dtype=cp.float32)
    w = cp.asarray(hw, dtype=cp.float32)
    out = cp.zeros(iters, dtype=cp.float32)

    def iteration(i):
        a = x * cp.float32(scale(i, iters)) + y  # two elementwise kernels
        b = cp.sin(a)                             # one
        m = b.reshape(side, side) @ w             # cuBLAS
        out[i] = m.sum()                          # a reduction, then a copy into out

    for i in range(args.warmup):
        iteration(i % iters)
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for i in range(iters):
        iteration(i)
    cp.cuda.Device().synchronize()
    us = (time.perf_counter() - t0) / iters * 1e6
    got = cp.asnumpy(out)
    checked, worst = {}, 0.0
    for i in sorted({0, iters - 1}):
        want = reference(hx, hy, hw, scale(i, iters), side)
        err = abs(float(got[i]) - want) / abs(want)
        checked[str(i)] = {"got": float(got[i]), "want": want}
        worst = max(worst, err)
    ok = worst < 1e-3  # float32 products and sums of 1M positive terms: far inside this
    print(json.dumps({"bench": "cupy_loop", "iterations": iters, "side": side, "warmup": args.warmup,
                      "us_per_iteration": us, "checked": checked, "max_rel_error": worst, "ok": ok}), flush=True)
    if not ok:
        print(f"cupy_loop: result check failed: relative error {worst:.3g}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
