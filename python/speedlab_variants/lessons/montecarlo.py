"""Lesson 3 (PyShop, Sciences Po 2015): Monte Carlo moment E||x||^2 with its variance, and pi.

The points are the workload's own (x, M x N float32, numpy's rand(M, N) layout), so every
variant, C++ or Python, estimates from the same numbers."""

from speedlab_variants import Variant, variant
from speedlab_variants.compat import import_cupy
from speedlab_variants.lessons._common import compile_numba, cupy_sync, resident


def estimate_from_sums(total, total_sq, m):
    phi = total / m
    ss = max(total_sq - total * phi, 0.0)  # sum (f - phi)^2
    return phi, ss / (m * (m - 1))


class _Moment(Variant):
    def setup(self):
        self.x = self.inputs.x
        self.estimate = self.variance = None

    def result(self):
        return {"estimate": self.estimate, "variance": self.variance}


@variant("montecarlo", "loop", description="plain Python loop over the points", max_size={"M": 2**14})
class Loop(_Moment):
    def compute(self):
        total = total_sq = 0.0
        for row in self.x.tolist():
            f = sum(v * v for v in row)
            total += f
            total_sq += f * f
        self.estimate, self.variance = estimate_from_sums(total, total_sq, len(self.x))


@variant("montecarlo", "numpy", description="NumPy: f = sum(x**2, axis=1), its mean and variance")
class Numpy(_Moment):
    def compute(self):
        import numpy as np
        f = np.sum(self.x * self.x, axis=1, dtype=np.float64)
        phi = f.mean()
        self.estimate = phi
        self.variance = np.sum((f - phi) ** 2) / (len(f) * (len(f) - 1))


def _numba_sums(numba, parallel):
    loop = numba.prange if parallel else range

    @numba.njit(parallel=parallel)
    def sums(x):
        total = 0.0
        total_sq = 0.0
        for m in loop(x.shape[0]):
            f = 0.0
            for k in range(x.shape[1]):
                f += numba.float64(x[m, k]) * numba.float64(x[m, k])
            total += f
            total_sq += f * f
        return total, total_sq

    return sums


@variant("montecarlo", "numba", description="Numba @njit loop (the lesson's @jit)", requires=["numba"])
class Numba(_Moment):
    parallel = False

    def setup(self):
        super().setup()
        self.sums = compile_numba(self, _numba_sums)

    def compute(self):
        self.estimate, self.variance = estimate_from_sums(*self.sums(self.x), len(self.x))


@variant("montecarlo", "numba-parallel", kind="threads", requires=["numba"],
         description="Numba @njit(parallel=True) prange over the points")
class NumbaParallel(Numba):
    parallel = True


_shared_x = None  # the points, inherited by the forked pool's workers (no pickling)


def _partial_sums(bounds):
    import numpy as np
    lo, hi = bounds
    f = np.sum(_shared_x[lo:hi] * _shared_x[lo:hi], axis=1, dtype=np.float64)
    return float(f.sum()), float((f * f).sum())


@variant("montecarlo", "multiprocessing", kind="threads",
         description="multiprocessing.Pool started on every call, as the lesson (its start-up cost shows)")
class Multiprocessing(_Moment):
    def compute(self):
        import multiprocessing
        global _shared_x
        _shared_x = self.x
        m, workers = len(self.x), max(1, self.threads)
        bounds = [(m * i // workers, m * (i + 1) // workers) for i in range(workers)]
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_partial_sums, bounds)
        self.estimate, self.variance = estimate_from_sums(sum(p[0] for p in parts), sum(p[1] for p in parts), m)


@variant("montecarlo", "cupy-lesson", kind="cuda", requires=["cupy"],
         description="CuPy: host points copied in on every call, two scalars out")
class CupyLesson(_Moment):
    def setup(self):
        super().setup()
        self.cp = import_cupy()

    def transfer_in(self):
        self.dx = self.cp.asarray(self.x)
        cupy_sync()

    def compute(self):
        cp = self.cp
        f = cp.sum(self.dx * self.dx, axis=1, dtype=cp.float64)
        self.dsums = cp.stack([f.sum(), (f * f).sum()])
        cupy_sync()

    def transfer_out(self):
        total, total_sq = self.dsums.get().tolist()
        self.estimate, self.variance = estimate_from_sums(total, total_sq, len(self.x))


@variant("montecarlo", "cupy", kind="cuda", requires=["cupy"], description="CuPy on device-resident points")
class Cupy(resident(CupyLesson)):
    def result(self):
        CupyLesson.transfer_out(self)
        return super().result()


# ---- Monte Carlo pi: the fraction of points (x, y) inside the quarter circle ----

class _Pi(Variant):
    def setup(self):
        self.xy = self.inputs.xy
        self.hits = None

    def result(self):
        return int(self.hits)


@variant("montecarlo_pi", "loop", description="plain Python loop over the points", max_size={"M": 2**16})
class PiLoop(_Pi):
    def compute(self):
        self.hits = sum(1 for x, y in self.xy.tolist() if x * x + y * y <= 1.0)


@variant("montecarlo_pi", "numpy", description="NumPy: count_nonzero(x**2 + y**2 <= 1)")
class PiNumpy(_Pi):
    def compute(self):
        import numpy as np
        x, y = self.xy[:, 0], self.xy[:, 1]
        self.hits = np.count_nonzero(x * x + y * y <= 1.0)


def _numba_hits(numba, parallel):
    loop = numba.prange if parallel else range

    @numba.njit(parallel=parallel)
    def hits(xy):
        n = 0
        for i in loop(xy.shape[0]):
            if xy[i, 0] * xy[i, 0] + xy[i, 1] * xy[i, 1] <= 1.0:
                n += 1
        return n

    return hits


@variant("montecarlo_pi", "numba", description="Numba @njit loop", requires=["numba"])
class PiNumba(_Pi):
    parallel = False

    def setup(self):
        super().setup()
        self.count = compile_numba(self, _numba_hits)

    def compute(self):
        self.hits = self.count(self.xy)


@variant("montecarlo_pi", "numba-parallel", kind="threads", requires=["numba"],
         description="Numba @njit(parallel=True) prange")
class PiNumbaParallel(PiNumba):
    parallel = True


@variant("montecarlo_pi", "cupy", kind="cuda", requires=["cupy"], description="CuPy on device-resident points")
class PiCupy(_Pi):
    def setup(self):
        super().setup()
        self.cp = import_cupy()
        self.dxy = self.cp.asarray(self.xy)
        cupy_sync()

    def compute(self):
        x, y = self.dxy[:, 0], self.dxy[:, 1]
        self.dhits = self.cp.count_nonzero(x * x + y * y <= 1.0)
        cupy_sync()

    def result(self):
        return int(self.dhits)
