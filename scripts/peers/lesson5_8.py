#!/usr/bin/env python3
"""Peers for lessons 5-8: the lessons' GPU versions in Numba CUDA and CuPy, timed at the
default sizes of speedlab's histogram, convolution, transpose and mandelbrot workloads.

Each measurement is the median host wall time of one call followed by a device
synchronization (after warm-up calls that also JIT-compile), with inputs already on the
device, the way speedlab's device-resident `cuda` variants are timed. One JSON line per
measurement: {"lesson", "impl", "size", "median_ms"} (plus "check" where a result is
verified). Usage: python3 lesson5_8.py [--reps N] [--only histogram,transpose,...]
"""
import argparse
import json
import math
import sys
import time
import traceback


def emit(lesson, impl, size, median_ms=None, **extra):
    row = {"lesson": lesson, "impl": impl, "size": size, "median_ms": median_ms}
    row.update(extra)
    print(json.dumps(row), flush=True)


def median_ms(fn, sync, reps, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def histogram(cuda, cp, reps):
    n, bins, lo, hi = 1 << 24, 10, -4.0, 4.0
    size = f"n={n},bins={bins}"
    x = cp.random.default_rng(1).standard_normal(n, dtype=cp.float32)
    expected = cp.histogram(x, bins=bins, range=(lo, hi))[0].get()

    def check(counts):
        return "exact" if (counts.get() == expected).all() else "MISMATCH"

    if cuda is not None:
        from numba import int32

        @cuda.jit
        def hist_global(x, counts, lo, scale, bins):  # the lesson: one global atomic per sample
            i = cuda.grid(1)
            stride = cuda.gridsize(1)
            while i < x.shape[0]:
                v = x[i]
                if v >= lo and v < lo + bins / scale:
                    b = min(int((v - lo) * scale), bins - 1)
                    cuda.atomic.add(counts, b, 1)
                i += stride

        @cuda.jit
        def hist_shared(x, counts, lo, scale, bins):  # privatized: block histogram in shared memory
            s = cuda.shared.array(4096, int32)
            t = cuda.threadIdx.x
            for k in range(t, bins, cuda.blockDim.x):
                s[k] = 0
            cuda.syncthreads()
            i = cuda.grid(1)
            stride = cuda.gridsize(1)
            while i < x.shape[0]:
                v = x[i]
                if v >= lo and v < lo + bins / scale:
                    b = min(int((v - lo) * scale), bins - 1)
                    cuda.atomic.add(s, b, 1)
                i += stride
            cuda.syncthreads()
            for k in range(t, bins, cuda.blockDim.x):
                cuda.atomic.add(counts, k, s[k])

        dx = cuda.as_cuda_array(x)
        counts = cp.zeros(bins, dtype=cp.int32)
        dcounts = cuda.as_cuda_array(counts)
        scale = bins / (hi - lo)
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
        for name, kernel, blocks in (("numba-global-atomics", hist_global, (n + 255) // 256),
                                     ("numba-shared-privatized", hist_shared, sms * 8)):
            def run(kernel=kernel, blocks=blocks):
                counts.fill(0)
                kernel[blocks, 256](dx, dcounts, lo, scale, bins)
            ms = median_ms(run, cuda.synchronize, reps)
            emit("histogram", name, size, ms, check_vs_cupy_histogram=check(counts))

    ms = median_ms(lambda: cp.histogram(x, bins=bins, range=(lo, hi)), cp.cuda.Device().synchronize, reps)
    emit("histogram", "cupy.histogram", size, ms)


def convolution(cuda, cp, reps):
    s, m = 2048, 13
    size = f"size={s},mask={m}"
    rng = cp.random.default_rng(2)
    image = rng.random((s, s), dtype=cp.float32)
    mask = rng.random((m, m), dtype=cp.float32) + 0.05
    mask /= mask.sum()
    import cupyx.scipy.ndimage as ndi
    reference = ndi.correlate(image, mask, mode="constant", cval=0.0)

    if cuda is not None:
        @cuda.jit
        def conv_naive(img, mask, out):  # the lesson: every tap from global memory
            y, x = cuda.grid(2)
            h = mask.shape[0] // 2
            if y < img.shape[0] and x < img.shape[1]:
                acc = 0.0
                for i in range(mask.shape[0]):
                    yy = y + i - h
                    if yy >= 0 and yy < img.shape[0]:
                        for j in range(mask.shape[1]):
                            xx = x + j - h
                            if xx >= 0 and xx < img.shape[1]:
                                acc += img[yy, xx] * mask[i, j]
                out[y, x] = acc

        out = cp.empty_like(image)
        di, dm, do = cuda.as_cuda_array(image), cuda.as_cuda_array(mask), cuda.as_cuda_array(out)
        blocks = ((s + 15) // 16, (s + 15) // 16)
        ms = median_ms(lambda: conv_naive[blocks, (16, 16)](di, dm, do), cuda.synchronize, reps)
        err = float(cp.max(cp.abs(out - reference) / cp.abs(reference)))
        emit("convolution", "numba-naive", size, ms, check=f"maxrel={err:.2g}")

    sync = cp.cuda.Device().synchronize
    ms = median_ms(lambda: ndi.correlate(image, mask, mode="constant", cval=0.0), sync, reps)
    emit("convolution", "cupyx.ndimage.correlate", size, ms)
    try:
        import cupyx.scipy.signal as sig
        ms = median_ms(lambda: sig.correlate2d(image, mask, mode="same", boundary="fill"), sync, reps)
        emit("convolution", "cupyx.signal.correlate2d", size, ms)
    except Exception as e:  # optional API
        emit("convolution", "cupyx.signal.correlate2d", size, None, error=str(e)[:200])


def transpose(cuda, cp, reps):
    n = 4096
    size = f"size={n}"
    a = cp.arange(n * n, dtype=cp.int32).reshape(n, n)
    sync = cp.cuda.Device().synchronize
    if cuda is not None:
        from numba import int32
        tile = 32

        @cuda.jit
        def transpose_naive(a, b):
            y, x = cuda.grid(2)
            if y < a.shape[0] and x < a.shape[1]:
                b[x, y] = a[y, x]

        @cuda.jit
        def transpose_tiled(a, b):  # the lesson: 32 x 33 shared tile
            t = cuda.shared.array((32, 33), int32)  # literal shape: numba needs constants
            tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
            x = cuda.blockIdx.x * tile + tx
            y = cuda.blockIdx.y * tile + ty
            if y < a.shape[0] and x < a.shape[1]:
                t[ty, tx] = a[y, x]
            cuda.syncthreads()
            x = cuda.blockIdx.y * tile + tx
            y = cuda.blockIdx.x * tile + ty
            if y < b.shape[0] and x < b.shape[1]:
                b[y, x] = t[tx, ty]

        b = cp.empty_like(a)
        da, db = cuda.as_cuda_array(a), cuda.as_cuda_array(b)
        blocks = ((n + tile - 1) // tile, (n + tile - 1) // tile)
        for name, kernel in (("numba-naive", transpose_naive), ("numba-tiled-32x33", transpose_tiled)):
            b.fill(-1)
            ms = median_ms(lambda kernel=kernel: kernel[blocks, (tile, tile)](da, db), cuda.synchronize, reps)
            emit("transpose", name, size, ms, check="exact" if bool((b == a.T).all()) else "MISMATCH",
                 GBps=round(8 * n * n / ms / 1e6, 1))
    ms = median_ms(lambda: cp.ascontiguousarray(a.T), sync, reps)
    emit("transpose", "cupy.ascontiguousarray(a.T)", size, ms, GBps=round(8 * n * n / ms / 1e6, 1))


def mandelbrot(cuda, cp, reps):
    s, iters = 512, 256
    size = f"size={s},iterations={iters}"
    sync = cp.cuda.Device().synchronize
    counts = []
    if cuda is not None:
        @cuda.jit(device=True)
        def mandel(x, y, max_iters):  # the lesson's complex128 escape count
            c = complex(x, y)
            z = 0.0j
            for i in range(max_iters):
                z = z * z + c
                if (z.real * z.real + z.imag * z.imag) >= 4:
                    return i
            return max_iters

        @cuda.jit
        def mandel_lesson(min_x, max_x, min_y, max_y, image, iters):  # grid-stride, as in the notebook
            height, width = image.shape
            px, py = (max_x - min_x) / width, (max_y - min_y) / height
            sx, sy = cuda.grid(2)
            gx = cuda.gridDim.x * cuda.blockDim.x
            gy = cuda.gridDim.y * cuda.blockDim.y
            for x in range(sx, width, gx):
                real = min_x + x * px
                for y in range(sy, height, gy):
                    image[y, x] = mandel(real, min_y + y * py, iters)

        @cuda.jit
        def mandel_2d(min_x, max_x, min_y, max_y, image, iters):  # one thread per pixel, 2-D blocks
            x, y = cuda.grid(2)
            height, width = image.shape
            if x < width and y < height:
                image[y, x] = mandel(min_x + x * (max_x - min_x) / width, min_y + y * (max_y - min_y) / height, iters)

        image = cp.zeros((s, s), dtype=cp.int32)
        dimg = cuda.as_cuda_array(image)
        for name, kernel, grid in (("numba-lesson-gridstride", mandel_lesson, (32, 16)),
                                   ("numba-2d-blocks", mandel_2d, ((s + 31) // 32, (s + 7) // 8))):
            ms = median_ms(lambda kernel=kernel, grid=grid: kernel[grid, (32, 8)](-2.0, 2.0, -2.0, 2.0, dimg, iters),
                           cuda.synchronize, reps)
            members = int((image == iters).sum())
            counts.append(members)
            emit("mandelbrot", name, size, ms, check=f"members={members}")

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
    out = cp.empty((s, s), dtype=cp.int32)
    ms = median_ms(lambda: kernel(iters, s, out), sync, reps)
    emit("mandelbrot", "cupy.ElementwiseKernel", size, ms, check=f"members={int((out == iters).sum())}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--only", default="histogram,convolution,transpose,mandelbrot")
    args = ap.parse_args()
    import numpy as np
    if not hasattr(np, "row_stack"):  # removed in NumPy 2.x, still referenced by some numba/cupy releases
        np.row_stack = np.vstack
    try:
        import cupy as cp
    except Exception as e:
        emit("all", "cupy", None, None, error=f"cupy unavailable: {e}")
        return 1
    try:
        from numba import cuda
        if not cuda.is_available():
            raise RuntimeError("numba.cuda.is_available() is False")
    except Exception as e:
        emit("all", "numba", None, None, error=f"numba cuda unavailable: {e}")
        cuda = None
    status = 0
    for name in args.only.split(","):
        try:
            globals()[name](cuda, cp, args.reps)
        except Exception as e:
            traceback.print_exc()
            emit(name, "all", None, None, error=f"{type(e).__name__}: {str(e)[:300]}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
