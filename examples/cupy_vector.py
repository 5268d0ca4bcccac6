"""Lesson 1 as a user writes it in CuPy: c = a * b (float32) with the copies on every call.

    python3 examples/cupy_vector.py [--n 16777216] [--calls 50]
    speedlab profile --out prof -- python3 examples/cupy_vector.py

Each call copies a and b to the GPU (pageable host memory), multiplies, and copies c back,
so the profile is dominated by host<->device copies (2 HtoD + 1 DtoH per call) and shows
one elementwise kernel per call. Each call is an NVTX range "vector_mul" (Python's nvtx
package, when installed). Checks the lesson's exact answer: x = i, y = 2i gives 2 i^2
(exact in float32 below 2^12 for i, so the check uses i mod 4096).
"""
import argparse
import contextlib

import numpy as np
import cupy as cp

try:
    import nvtx
    annotate = nvtx.annotate
except ImportError:  # the program still runs; the profile then has no NVTX ranges
    import sys
    print("cupy_vector: Python's nvtx package is not installed: no NVTX ranges", file=sys.stderr)

    def annotate(*_a, **_k):
        return contextlib.nullcontext()


def multiply(x, y):
    a = cp.asarray(x)          # HtoD, pageable
    b = cp.asarray(y)          # HtoD, pageable
    c = a * b                  # one elementwise kernel
    return cp.asnumpy(c)       # DtoH, synchronous


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 24)
    p.add_argument("--calls", type=int, default=50)
    args = p.parse_args()
    i = (np.arange(args.n) % 4096).astype(np.float32)
    x, y = i, 2 * i
    for _ in range(args.calls):
        with annotate("vector_mul", domain="cupy_vector"):
            c = multiply(x, y)
    assert np.array_equal(c, 2 * i * i), "wrong product"
    print(f"cupy_vector: {args.calls} calls of n={args.n}: ok")


if __name__ == "__main__":
    main()
