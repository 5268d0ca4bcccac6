#!/usr/bin/env python3
"""Kernel times of the Numba / CuPy peers at the sizes of issue 14 (run on the GPU machine):
the lesson-3 Numba kernels of scripts/peers/lesson1_4.py (xoroshiro128+ pi and moment, 256
threads x 8 blocks per SM) at M = 2.7e9 / 5.12e8, and the lesson-8 Mandelbrot kernels of
scripts/peers/lesson5_8.py (Numba complex128 2-D blocks 32 x 8, CuPy ElementwiseKernel) and
of python/speedlab_variants (Numba, real arithmetic, 16 x 16) at 8192^2 x 256 and 4096^2 x 4096.

Times are kernel times between CUDA events, the launches queued back to back (so host
launch overhead is hidden), median over --reps after 3 warm-up launches, as
scripts/bench/kernels_bench.cu measures speedlab's kernels. One JSON line per kernel.
"""
import argparse
import json
import sys

import numpy as np

for _old, _new in (("row_stack", "vstack"), ("trapz", "trapezoid"), ("in1d", "isin")):
    if not hasattr(np, _old) and hasattr(np, _new):
        setattr(np, _old, getattr(np, _new))


def emit(**fields):
    print(json.dumps(fields), flush=True)


def event_times(launch, event, elapsed, reps):
    for _ in range(3):
        launch()
    evs = [(event(), event()) for _ in range(reps)]
    for a, b in evs:
        a.record()
        launch()
        b.record()
    evs[-1][1].synchronize()
    ms = sorted(elapsed(a, b) for a, b in evs)
    return {"median_ms": round(ms[len(ms) // 2], 4), "min_ms": round(ms[0], 4), "max_ms": round(ms[-1], 4),
            "reps": reps}


def numba_montecarlo(cuda, reps):
    from numba import float32
    from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32
    tpb = 256
    blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 8
    states = create_xoroshiro128p_states(tpb * blocks, seed=1234)

    @cuda.jit
    def moment(rng, points, dims, out):  # scripts/peers/lesson1_4.py
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
    def pi_hits(rng, samples, out):  # scripts/peers/lesson1_4.py
        i = cuda.grid(1)
        c = 0
        for _ in range(i, samples, cuda.gridsize(1)):
            x = xoroshiro128p_uniform_float32(rng, i)
            y = xoroshiro128p_uniform_float32(rng, i)
            if x * x + y * y < float32(1):
                c += 1
        cuda.atomic.add(out, 0, c)

    event = lambda: cuda.event(timing=True)
    elapsed = cuda.event_elapsed_time
    samples, points, dims = 2_700_000_000, 512_000_000, 8
    hits = cuda.to_device(np.zeros(1, np.int64))
    pi_hits[blocks, tpb](states, samples, hits)
    cuda.synchronize()
    pi = 4 * hits.copy_to_host()[0] / samples
    emit(bench="montecarlo_pi", kernel="numba pi_hits (xoroshiro128p)", params=f"M={samples}", check=f"pi={pi:.6f}",
         **event_times(lambda: pi_hits[blocks, tpb](states, samples, hits), event, elapsed, reps))
    sums = cuda.to_device(np.zeros(2, np.float64))
    moment[blocks, tpb](states, points, dims, sums)
    cuda.synchronize()
    s, q = sums.copy_to_host()
    emit(bench="montecarlo", kernel="numba moment (xoroshiro128p)", params=f"M={points},N={dims}",
         check=f"estimate={s / points:.6f} (N/3={dims / 3:.6f})",
         **event_times(lambda: moment[blocks, tpb](states, points, dims, sums), event, elapsed, reps))


def mandelbrot(cuda, cp, reps, cases):
    if cuda is not None:
        @cuda.jit(device=True)
        def mandel(x, y, max_iters):  # scripts/peers/lesson5_8.py: the lesson's complex128 loop
            c = complex(x, y)
            z = 0.0j
            for i in range(max_iters):
                z = z * z + c
                if (z.real * z.real + z.imag * z.imag) >= 4:
                    return i
            return max_iters

        @cuda.jit
        def mandel_2d(min_x, max_x, min_y, max_y, image, iters):
            x, y = cuda.grid(2)
            height, width = image.shape
            if x < width and y < height:
                image[y, x] = mandel(min_x + x * (max_x - min_x) / width, min_y + y * (max_y - min_y) / height, iters)

        @cuda.jit(device=True)
        def escape_count(cx, cy, iterations):  # python/speedlab_variants/lessons/mandelbrot.py
            x = y = x2 = y2 = 0.0
            for i in range(iterations):
                y = 2 * x * y + cy
                x = x2 - y2 + cx
                x2 = x * x
                y2 = y * y
                if x2 + y2 >= 4.0:
                    return i
            return iterations

        @cuda.jit
        def render(image, iterations):
            col, row = cuda.grid(2)
            size = image.shape[0]
            if row < size and col < size:
                image[row, col] = escape_count(-2.0 + col * (4.0 / size), -2.0 + row * (4.0 / size), iterations)

    kernel = cp.ElementwiseKernel(
        "int32 iters, int32 size", "int32 count",
        """
        const int row = i / size, col = i % size;
        const double cx = -2.0 + col * (4.0 / size), cy = -2.0 + row * (4.0 / size);
        double x = 0, y = 0, x2 = 0, y2 = 0;
        count = iters;
        for (int k = 0; k < iters; ++k) {
          y = 2 * x * y + cy; x = x2 - y2 + cx; x2 = x * x; y2 = y * y;
          if (x2 + y2 >= 4.0) { count = k; break; }
        }
        """, "mandelbrot_count")
    cp_event = lambda: cp.cuda.Event()
    cp_elapsed = cp.cuda.get_elapsed_time
    for s, iters in cases:
        params = f"size={s},iterations={iters}"
        image = cp.zeros((s, s), dtype=cp.int32)
        if cuda is not None:
            dimg = cuda.as_cuda_array(image)
            event = lambda: cuda.event(timing=True)
            launches = (
                ("numba complex128 2-D blocks 32x8 (peers)",
                 lambda: mandel_2d[((s + 31) // 32, (s + 7) // 8), (32, 8)](-2.0, 2.0, -2.0, 2.0, dimg, iters)),
                ("numba real 16x16 (speedlab_variants)",
                 lambda: render[((s + 15) // 16, (s + 15) // 16), (16, 16)](dimg, iters)),
            )
            for name, launch in launches:
                t = event_times(launch, event, cuda.event_elapsed_time, reps)
                cuda.synchronize()
                emit(bench="mandelbrot", kernel=name, params=params, check=f"members={int((image == iters).sum())}", **t)
        out = cp.empty((s, s), dtype=cp.int32)
        t = event_times(lambda: kernel(iters, s, out), cp_event, cp_elapsed, reps)
        cp.cuda.Device().synchronize()
        emit(bench="mandelbrot", kernel="cupy ElementwiseKernel (peers)", params=params,
             check=f"members={int((out == iters).sum())}", **t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only", default="montecarlo,mandelbrot")
    args = ap.parse_args()
    import cupy as cp
    try:
        from numba import cuda
        if not cuda.is_available():
            raise RuntimeError("numba.cuda.is_available() is False")
    except Exception as e:  # noqa: BLE001 - reported, CuPy goes on
        emit(bench="all", kernel="numba", error=f"numba cuda unavailable: {e}")
        cuda = None
    if "montecarlo" in args.only and cuda is not None:
        numba_montecarlo(cuda, args.reps)
    if "mandelbrot" in args.only:
        mandelbrot(cuda, cp, args.reps, [(8192, 256), (4096, 4096)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
