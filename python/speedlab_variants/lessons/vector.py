"""Lesson 1: c = a + b or c = a * b over float32 (Numba ufuncs, PyShop's PyCUDA multiply)."""

from speedlab_variants import Variant, variant
from speedlab_variants.compat import import_cupy, import_numba_cuda
from speedlab_variants.lessons._common import compile_numba, cupy_sync, numba_sync


class _Vector(Variant):
    def setup(self):
        self.a, self.b, self.c = self.inputs.a, self.inputs.b, None
        self.mul = self.params["op"] == "mul"

    def result(self):
        return self.c


@variant("vector", "loop", description="plain Python loop over NumPy elements", max_size={"n": 2**16})
class Loop(_Vector):
    def compute(self):
        a, b, n = self.a, self.b, len(self.a)
        c = [0.0] * n
        for i in range(n):
            c[i] = a[i] * b[i] if self.mul else a[i] + b[i]
        self.c = c


@variant("vector", "numpy", description="NumPy a * b (a new array each call, as the lessons)")
class Numpy(_Vector):
    def compute(self):
        self.c = self.a * self.b if self.mul else self.a + self.b


def _numba_kernels(numba, parallel):
    loop = numba.prange if parallel else range

    @numba.njit(parallel=parallel, fastmath=False)
    def mul(a, b, c):
        for i in loop(a.shape[0]):
            c[i] = a[i] * b[i]

    @numba.njit(parallel=parallel, fastmath=False)
    def add(a, b, c):
        for i in loop(a.shape[0]):
            c[i] = a[i] + b[i]

    return mul, add


@variant("vector", "numba", description="Numba @njit loop", requires=["numba"])
class Numba(_Vector):
    parallel = False

    def setup(self):
        super().setup()
        mul, add = compile_numba(self, _numba_kernels)
        self.kernel = mul if self.mul else add
        import numpy as np
        self.c = np.empty_like(self.a)

    def compute(self):
        self.kernel(self.a, self.b, self.c)


@variant("vector", "numba-parallel", kind="threads", description="Numba @njit(parallel=True) prange loop",
         requires=["numba"])
class NumbaParallel(Numba):
    parallel = True


@variant("vector", "cupy-lesson", kind="cuda", requires=["cupy"],
         description="CuPy as the lessons: host arrays copied in and the result out on every call")
class CupyLesson(_Vector):
    def setup(self):
        super().setup()
        self.cp = import_cupy()

    def transfer_in(self):
        self.da, self.db = self.cp.asarray(self.a), self.cp.asarray(self.b)
        cupy_sync()

    def compute(self):
        self.dc = self.da * self.db if self.mul else self.da + self.db
        cupy_sync()

    def transfer_out(self):
        self.c = self.cp.asnumpy(self.dc)
        self.da = self.db = self.dc = None


@variant("vector", "cupy", kind="cuda", requires=["cupy"], description="CuPy on device-resident arrays (out=)")
class Cupy(_Vector):
    def setup(self):
        super().setup()
        cp = self.cp = import_cupy()
        self.da, self.db = cp.asarray(self.a), cp.asarray(self.b)
        self.dc = cp.empty_like(self.da)
        cupy_sync()

    def compute(self):
        (self.cp.multiply if self.mul else self.cp.add)(self.da, self.db, out=self.dc)
        cupy_sync()

    def result(self):
        return self.dc


def _cuda_ufuncs():
    numba, _ = import_numba_cuda()

    @numba.vectorize(["float32(float32, float32)"], target="cuda")
    def mul(a, b):
        return a * b

    @numba.vectorize(["float32(float32, float32)"], target="cuda")
    def add(a, b):
        return a + b

    return mul, add


@variant("vector", "numba-cuda-lesson", kind="cuda", requires=["numba"],
         description="Numba @vectorize(target='cuda') on host arrays: copies in and out inside every call")
class NumbaCudaLesson(_Vector):
    def setup(self):
        super().setup()
        mul, add = _cuda_ufuncs()
        self.ufunc = mul if self.mul else add

    def compute(self):
        self.c = self.ufunc(self.a, self.b)
        numba_sync()


@variant("vector", "numba-cuda", kind="cuda", requires=["numba"],
         description="the same CUDA ufunc on device arrays (cuda.to_device once, out= device array)")
class NumbaCuda(_Vector):
    def setup(self):
        super().setup()
        mul, add = _cuda_ufuncs()
        self.ufunc = mul if self.mul else add
        _, cuda = import_numba_cuda()
        self.da, self.db = cuda.to_device(self.a), cuda.to_device(self.b)
        self.dc = cuda.device_array_like(self.da)
        numba_sync()

    def compute(self):
        self.ufunc(self.da, self.db, out=self.dc)
        numba_sync()

    def result(self):
        return self.dc
