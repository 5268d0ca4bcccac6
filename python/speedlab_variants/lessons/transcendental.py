"""Lesson 4: the Numba tutorials' ufuncs gaussian_pdf and polar_distance, float32 or float64."""

import math

from speedlab_variants import Variant, variant
from speedlab_variants.compat import import_cupy, import_numba, import_numba_cuda
from speedlab_variants.lessons._common import cupy_sync, numba_sync, resident

INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
ARGS = {"gauss": ("x",), "hypot": ("rho1", "theta1", "rho2", "theta2")}


def gaussian_pdf(xp, x):
    return xp.exp(-0.5 * x * x) * x.dtype.type(INV_SQRT_2PI)


def polar_distance(xp, rho1, theta1, rho2, theta2):
    return xp.hypot(rho1 * xp.cos(theta1) - rho2 * xp.cos(theta2), rho1 * xp.sin(theta1) - rho2 * xp.sin(theta2))


class _Elementwise(Variant):
    def setup(self):
        self.func = self.params["func"]
        self.args = [getattr(self.inputs, n) for n in ARGS[self.func]]
        self.out = None

    def result(self):
        return self.out


@variant("transcendental", "loop", description="plain Python loop with math.exp / math.hypot",
         max_size={"n": 2**16})
class Loop(_Elementwise):
    def compute(self):
        if self.func == "gauss":
            self.out = [math.exp(-0.5 * float(x) * float(x)) * INV_SQRT_2PI for x in self.args[0]]
        else:
            self.out = [math.hypot(r1 * math.cos(t1) - r2 * math.cos(t2), r1 * math.sin(t1) - r2 * math.sin(t2))
                        for r1, t1, r2, t2 in zip(*(a.tolist() for a in self.args))]


@variant("transcendental", "numpy", description="NumPy ufunc expression (scipy.stats.norm.pdf's arithmetic)")
class Numpy(_Elementwise):
    def compute(self):
        import numpy as np
        self.out = (gaussian_pdf if self.func == "gauss" else polar_distance)(np, *self.args)


def _cpu_ufuncs(numba, target):
    sigs = ["float32(float32)", "float64(float64)"]
    sigs4 = ["float32(float32, float32, float32, float32)", "float64(float64, float64, float64, float64)"]

    @numba.vectorize(sigs, target=target)
    def gauss(x):
        return math.exp(-0.5 * x * x) * INV_SQRT_2PI

    @numba.vectorize(sigs4, target=target)
    def hypot(rho1, theta1, rho2, theta2):
        return math.hypot(rho1 * math.cos(theta1) - rho2 * math.cos(theta2),
                          rho1 * math.sin(theta1) - rho2 * math.sin(theta2))

    return {"gauss": gauss, "hypot": hypot}


@variant("transcendental", "numba", description="Numba @vectorize (target='cpu'), as the lessons",
         requires=["numba"])
class Numba(_Elementwise):
    target = "cpu"

    def setup(self):
        super().setup()
        numba = import_numba()
        if self.target == "parallel":
            numba.set_num_threads(max(1, min(self.threads, numba.config.NUMBA_NUM_THREADS)))
        self.ufunc = _cpu_ufuncs(numba, self.target)[self.func]

    def compute(self):
        self.out = self.ufunc(*self.args)


@variant("transcendental", "numba-parallel", kind="threads", requires=["numba"],
         description="Numba @vectorize(target='parallel')")
class NumbaParallel(Numba):
    target = "parallel"


@variant("transcendental", "cupy-lesson", kind="cuda", requires=["cupy"],
         description="CuPy ufunc expression, inputs copied in and the result out on every call")
class CupyLesson(_Elementwise):
    def setup(self):
        super().setup()
        self.cp = import_cupy()

    def transfer_in(self):
        self.dargs = [self.cp.asarray(a) for a in self.args]
        cupy_sync()

    def compute(self):
        self.dout = (gaussian_pdf if self.func == "gauss" else polar_distance)(self.cp, *self.dargs)
        cupy_sync()

    def transfer_out(self):
        self.out = self.cp.asnumpy(self.dout)
        self.dargs = self.dout = None


@variant("transcendental", "cupy", kind="cuda", requires=["cupy"], description="CuPy on device-resident inputs")
class Cupy(resident(CupyLesson)):
    def result(self):
        return self.dout


@variant("transcendental", "numba-cuda-lesson", kind="cuda", requires=["numba"],
         description="Numba @vectorize(target='cuda') on host arrays (copies inside every call), as the lessons")
class NumbaCudaLesson(_Elementwise):
    resident = False

    def setup(self):
        super().setup()
        numba, cuda = import_numba_cuda()
        self.ufunc = _cpu_ufuncs(numba, "cuda")[self.func]
        self.dargs = [cuda.to_device(a) for a in self.args] if self.resident else self.args
        numba_sync()

    def compute(self):
        self.out = self.ufunc(*self.dargs)
        numba_sync()


@variant("transcendental", "numba-cuda", kind="cuda", requires=["numba"],
         description="the same CUDA ufunc on device arrays")
class NumbaCuda(NumbaCudaLesson):
    resident = True
