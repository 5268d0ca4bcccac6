#!/usr/bin/env python3
"""Peers for lesson problems 1-4: the lessons' own GPU versions, in Numba CUDA and CuPy,
timed at speedlab's default sizes (run on the GPU machine: numba, cupy, a CUDA device).

Prints one JSON line per measurement on stdout:
  {"lesson": 1, "impl": "numba", "case": "mul", "data": "device", "size": 16777216,
   "median_ms": 0.123, "reps": 30}
data: "device" when the arrays already live on the GPU, "host" when the call takes host
arrays as the lessons did (copies in and out included). A part that fails prints
{"lesson": .., "impl": .., "case": .., "error": ".."} and the script goes on.
Each time is the median over PEER_REPS calls (default 30) after 3 warm-up calls, each call
bracketed by device synchronizations on the host clock, like speedlab's phase timing.

  python3 scripts/peers/lesson1_4.py [lesson ...]      e.g. ... lesson1_4.py 1 3
"""
import json
import math
import os
import sys
import time
import traceback

import numpy as np

# NumPy 2.5 removed aliases that numba's typing still registers overloads for; restore
# them (each is an alias of, or superseded by, the function named) before numba loads.
for _old, _new in (("row_stack", "vstack"), ("trapz", "trapezoid"), ("in1d", "isin")):
    if not hasattr(np, _old) and hasattr(np, _new):
        setattr(np, _old, getattr(np, _new))

REPS = int(os.environ.get("PEER_REPS", "30"))
WARMUP = 3

VECTOR_N = 2**24
REDUCTION_N = 2**24
MC_DIMS, MC_POINTS = 8, 5_120_000
PI_SAMPLES = 5_120_000
TRANSCENDENTAL_N = 1_000_000


def emit(**fields):
    print(json.dumps(fields), flush=True)


def median_ms(fn, sync, reps=REPS):
    for _ in range(WARMUP):
        fn()
    sync()
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def measure(lesson, impl, case, data, size, fn, sync):
    try:
        emit(lesson=lesson, impl=impl, case=case, data=data, size=size, median_ms=median_ms(fn, sync), reps=REPS)
    except Exception as e:  # report and go on: one broken peer must not hide the others
        traceback.print_exc(file=sys.stderr)
        emit(lesson=lesson, impl=impl, case=case, error=f"{type(e).__name__}: {e}")


def section(lesson, impl, body):
    """Runs one implementation's set-up and measurements; set-up failures become one error line."""
    try:
        body()
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        emit(lesson=lesson, impl=impl, case="setup", error=f"{type(e).__name__}: {e}")


# ---------------------------------------------------------------------------------------
# Lesson 1: c = a + b, c = a * b (float32)

def vector_inputs(n):
    i = np.arange(n, dtype=np.int64) % 2**24
    return i.astype(np.float32), (2 * i).astype(np.float32)


def lesson1_numba():
    from numba import cuda, vectorize

    @vectorize(["float32(float32, float32)"], target="cuda")
    def add_ufunc(x, y):
        return x + y

    @vectorize(["float32(float32, float32)"], target="cuda")
    def mul_ufunc(x, y):
        return x * y

    a, b = vector_inputs(VECTOR_N)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_c = cuda.device_array_like(d_a)
    for case, f in (("add", add_ufunc), ("mul", mul_ufunc)):
        measure(1, "numba", case, "device", VECTOR_N, lambda: f(d_a, d_b, out=d_c), cuda.synchronize)
        measure(1, "numba", case, "host", VECTOR_N, lambda: f(a, b), cuda.synchronize)


def lesson1_cupy():
    import cupy as cp
    sync = cp.cuda.Device().synchronize
    a, b = vector_inputs(VECTOR_N)
    ca, cb = cp.asarray(a), cp.asarray(b)
    cc = cp.empty_like(ca)
    for case, f in (("add", cp.add), ("mul", cp.multiply)):
        measure(1, "cupy", case, "device", VECTOR_N, lambda: f(ca, cb, out=cc), sync)
        measure(1, "cupy", case, "host", VECTOR_N, lambda: cp.asnumpy(f(cp.asarray(a), cp.asarray(b))), sync)


# ---------------------------------------------------------------------------------------
# Lesson 2: mean(a), dot(a, b)

def lesson2_numba():
    from numba import cuda, float64

    n = REDUCTION_N
    a = np.arange(n, dtype=np.float32)
    ones_a, ones_b = np.full(n, 3, np.float32), np.full(n, 2, np.float32)
    d_a, d_3, d_2 = cuda.to_device(a), cuda.to_device(ones_a), cuda.to_device(ones_b)
    d_out = cuda.device_array(1, np.float64)
    zero = np.zeros(1, np.float64)
    tpb = 256
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 8

    @cuda.reduce
    def sum_reduce(x, y):
        return x + y

    # The lessons' dot product: grid-stride partial sums, shared-memory tree per block,
    # one atomic per block.
    @cuda.jit
    def dot_tree(x, y, out):
        s = cuda.shared.array(256, float64)
        t = cuda.threadIdx.x
        acc = 0.0
        for k in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            acc += x[k] * y[k]
        s[t] = acc
        cuda.syncthreads()
        step = 128
        while step > 0:
            if t < step:
                s[t] += s[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            cuda.atomic.add(out, 0, s[0])

    # The lessons' atomics: every thread adds its element into one address.
    @cuda.jit
    def mean_atomic(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            cuda.atomic.add(out, 0, float64(x[i]))

    def dot():
        d_out.copy_to_device(zero)
        dot_tree[blocks, tpb](d_3, d_2, d_out)

    def atomic():
        d_out.copy_to_device(zero)
        mean_atomic[(n + tpb - 1) // tpb, tpb](d_a, d_out)

    measure(2, "numba", "mean", "device", n, lambda: sum_reduce(d_a) / n, cuda.synchronize)
    measure(2, "numba", "mean-atomic", "device", n, atomic, cuda.synchronize)
    measure(2, "numba", "dot", "device", n, dot, cuda.synchronize)
    measure(2, "numba", "mean", "host", n, lambda: sum_reduce(a) / n, cuda.synchronize)


def lesson2_cupy():
    import cupy as cp
    sync = cp.cuda.Device().synchronize
    n = REDUCTION_N
    a = np.arange(n, dtype=np.float32)
    ca = cp.asarray(a)
    c3, c2 = cp.full(n, 3, cp.float32), cp.full(n, 2, cp.float32)
    measure(2, "cupy", "mean", "device", n, lambda: float(cp.mean(ca)), sync)
    measure(2, "cupy", "mean-f64acc", "device", n, lambda: float(cp.sum(ca, dtype=cp.float64)) / n, sync)
    measure(2, "cupy", "dot", "device", n, lambda: float(cp.dot(c3, c2)), sync)
    measure(2, "cupy", "mean", "host", n, lambda: float(cp.mean(cp.asarray(a))), sync)


# ---------------------------------------------------------------------------------------
# Lesson 3: Monte Carlo E||x||^2 on [0,1]^N with the estimator's variance; Monte Carlo pi

def lesson3_numba():
    from numba import cuda, float32
    from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    tpb = 256
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 8
    states = create_xoroshiro128p_states(tpb * blocks, seed=1234)
    sums = cuda.device_array(2, np.float64)
    zero = np.zeros(2, np.float64)

    @cuda.jit
    def moment(rng, points, dims, out):
        i = cuda.grid(1)
        s = 0.0
        q = 0.0
        for _ in range(i, points, cuda.gridsize(1)):
            f = float32(0)
            for _d in range(dims):
                u = xoroshiro128p_uniform_float32(rng, i)
                f += u * u
            s += f
            q += f * f
        cuda.atomic.add(out, 0, s)
        cuda.atomic.add(out, 1, q)

    @cuda.jit
    def pi_hits(rng, samples, out):
        i = cuda.grid(1)
        c = 0
        for _ in range(i, samples, cuda.gridsize(1)):
            x = xoroshiro128p_uniform_float32(rng, i)
            y = xoroshiro128p_uniform_float32(rng, i)
            if x * x + y * y < float32(1):
                c += 1
        cuda.atomic.add(out, 0, c)

    hits = cuda.device_array(1, np.int64)
    hzero = np.zeros(1, np.int64)

    def run_moment():
        sums.copy_to_device(zero)
        moment[blocks, tpb](states, MC_POINTS, MC_DIMS, sums)
        s, q = sums.copy_to_host()
        phi = s / MC_POINTS
        return phi, (q - s * phi) / (MC_POINTS * (MC_POINTS - 1))

    def run_pi():
        hits.copy_to_device(hzero)
        pi_hits[blocks, tpb](states, PI_SAMPLES, hits)
        return 4 * hits.copy_to_host()[0] / PI_SAMPLES

    phi, var = run_moment()
    print(f"numba moment: {phi:.6f} (N/3 = {MC_DIMS / 3:.6f}), variance {var:.3e}; pi {run_pi():.6f}",
          file=sys.stderr)
    measure(3, "numba", f"moment-N{MC_DIMS}", "device", MC_POINTS, run_moment, cuda.synchronize)
    measure(3, "numba", "pi", "device", PI_SAMPLES, run_pi, cuda.synchronize)


def lesson3_cupy():
    import cupy as cp
    sync = cp.cuda.Device().synchronize

    def moment_device():
        x = cp.random.rand(MC_POINTS, MC_DIMS, dtype=cp.float32)
        f = cp.sum(x * x, axis=1)
        return float(f.mean()), float(f.var(ddof=1)) / MC_POINTS

    # PyShop's GPU version: points drawn with NumPy on the host, copied in every call.
    host_points = np.random.default_rng(1234).random((MC_POINTS, MC_DIMS), dtype=np.float32)

    def moment_host():
        x = cp.asarray(host_points)
        f = cp.sum(x * x, axis=1)
        return float(f.mean()), float(f.var(ddof=1)) / MC_POINTS

    def pi():
        x = cp.random.rand(PI_SAMPLES, dtype=cp.float32)
        y = cp.random.rand(PI_SAMPLES, dtype=cp.float32)
        return 4 * int(cp.count_nonzero(x * x + y * y < 1)) / PI_SAMPLES

    phi, var = moment_device()
    print(f"cupy moment: {phi:.6f} (N/3 = {MC_DIMS / 3:.6f}), variance {var:.3e}; pi {pi():.6f}", file=sys.stderr)
    measure(3, "cupy", f"moment-N{MC_DIMS}", "device", MC_POINTS, moment_device, sync)
    measure(3, "cupy", f"moment-N{MC_DIMS}", "host", MC_POINTS, moment_host, sync)
    measure(3, "cupy", "pi", "device", PI_SAMPLES, pi, sync)


# ---------------------------------------------------------------------------------------
# Lesson 4: Gaussian PDF and polar distance, float32 and float64

def transcendental_inputs(dtype):
    rng = np.random.default_rng(1234)
    n = TRANSCENDENTAL_N
    x = rng.uniform(-3, 3, n).astype(dtype)
    polar = [rng.uniform(0.5, 1.5, n).astype(dtype), rng.uniform(-np.pi, np.pi, n).astype(dtype),
             rng.uniform(0.5, 1.5, n).astype(dtype), rng.uniform(-np.pi, np.pi, n).astype(dtype)]
    return x, polar


def lesson4_numba():
    from numba import cuda, vectorize

    sqrt_2pi = np.float32((2 * math.pi) ** 0.5)

    @vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"], target="cuda")
    def gaussian_pdf(x, mean, sigma):
        return math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * sqrt_2pi)

    @cuda.jit(device=True)
    def polar_to_cartesian(rho, theta):
        return rho * math.cos(theta), rho * math.sin(theta)

    @vectorize(["float32(float32, float32, float32, float32)", "float64(float64, float64, float64, float64)"],
               target="cuda")
    def polar_distance(rho1, theta1, rho2, theta2):
        x1, y1 = polar_to_cartesian(rho1, theta1)
        x2, y2 = polar_to_cartesian(rho2, theta2)
        return ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5

    n = TRANSCENDENTAL_N
    for dtype, name in ((np.float32, "float32"), (np.float64, "float64")):
        x, polar = transcendental_inputs(dtype)
        mean, sigma = dtype(0), dtype(1)
        d_x = cuda.to_device(x)
        d_y = cuda.device_array_like(d_x)
        d_p = [cuda.to_device(v) for v in polar]
        measure(4, "numba", f"gauss-{name}", "device", n, lambda: gaussian_pdf(d_x, mean, sigma, out=d_y),
                cuda.synchronize)
        measure(4, "numba", f"gauss-{name}", "host", n, lambda: gaussian_pdf(x, mean, sigma), cuda.synchronize)
        measure(4, "numba", f"hypot-{name}", "device", n, lambda: polar_distance(*d_p, out=d_y), cuda.synchronize)
        measure(4, "numba", f"hypot-{name}", "host", n, lambda: polar_distance(*polar), cuda.synchronize)


def lesson4_cupy():
    import cupy as cp
    sync = cp.cuda.Device().synchronize
    sqrt_2pi = (2 * math.pi) ** 0.5

    def gauss(x):
        return cp.exp(-0.5 * ((x - 0.0) / 1.0) ** 2) / (1.0 * sqrt_2pi)

    gauss_fused = cp.fuse(gauss)

    def polar(r1, t1, r2, t2):
        return cp.hypot(r1 * cp.cos(t1) - r2 * cp.cos(t2), r1 * cp.sin(t1) - r2 * cp.sin(t2))

    polar_fused = cp.fuse(polar)
    n = TRANSCENDENTAL_N
    for dtype, name in ((np.float32, "float32"), (np.float64, "float64")):
        x, p = transcendental_inputs(dtype)
        cx = cp.asarray(x)
        cpl = [cp.asarray(v) for v in p]
        measure(4, "cupy", f"gauss-{name}", "device", n, lambda: gauss(cx), sync)
        measure(4, "cupy", f"gauss-{name}-fused", "device", n, lambda: gauss_fused(cx), sync)
        measure(4, "cupy", f"gauss-{name}", "host", n, lambda: cp.asnumpy(gauss(cp.asarray(x))), sync)
        measure(4, "cupy", f"hypot-{name}", "device", n, lambda: polar(*cpl), sync)
        measure(4, "cupy", f"hypot-{name}-fused", "device", n, lambda: polar_fused(*cpl), sync)


LESSONS = {
    1: (lesson1_numba, lesson1_cupy),
    2: (lesson2_numba, lesson2_cupy),
    3: (lesson3_numba, lesson3_cupy),
    4: (lesson4_numba, lesson4_cupy),
}


def main():
    os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")
    chosen = [int(a) for a in sys.argv[1:]] or sorted(LESSONS)
    for lesson in chosen:
        numba_part, cupy_part = LESSONS[lesson]
        section(lesson, "numba", numba_part)
        section(lesson, "cupy", cupy_part)


if __name__ == "__main__":
    main()
