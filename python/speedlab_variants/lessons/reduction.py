"""Lesson 2: mean(a) and dot(a, b) over float32, accumulated in float64 (as the C++ variants)."""

from speedlab_variants import Variant, variant
from speedlab_variants.compat import import_cupy, import_numba_cuda
from speedlab_variants.lessons._common import compile_numba, cupy_sync, numba_sync, resident


class _Reduction(Variant):
    def setup(self):
        self.dot = self.params["op"] == "dot"
        self.a = self.inputs.a
        self.b = self.inputs.b if self.dot else None
        self.value = None

    def result(self):
        return float(self.value)


@variant("reduction", "loop", description="plain Python loop with a float accumulator", max_size={"n": 2**16})
class Loop(_Reduction):
    def compute(self):
        s = 0.0
        if self.dot:
            for x, y in zip(self.a, self.b):
                s += float(x) * float(y)
        else:
            for x in self.a:
                s += float(x)
        self.value = s if self.dot else s / len(self.a)


@variant("reduction", "numpy", description="np.sum(a * b) and np.mean(a), float64 accumulators")
class Numpy(_Reduction):
    def compute(self):
        import numpy as np
        self.value = np.sum(self.a * self.b, dtype=np.float64) if self.dot else np.mean(self.a, dtype=np.float64)


def _numba_reductions(numba, parallel):
    loop = numba.prange if parallel else range

    @numba.njit(parallel=parallel)
    def dot(a, b):
        s = 0.0
        for i in loop(a.shape[0]):
            s += numba.float64(a[i]) * numba.float64(b[i])
        return s

    @numba.njit(parallel=parallel)
    def mean(a):
        s = 0.0
        for i in loop(a.shape[0]):
            s += numba.float64(a[i])
        return s / a.shape[0]

    return dot, mean


@variant("reduction", "numba", description="Numba @njit loop, float64 accumulator", requires=["numba"])
class Numba(_Reduction):
    parallel = False

    def setup(self):
        super().setup()
        self.dot_fn, self.mean_fn = compile_numba(self, _numba_reductions)

    def compute(self):
        self.value = self.dot_fn(self.a, self.b) if self.dot else self.mean_fn(self.a)


@variant("reduction", "numba-parallel", kind="threads", requires=["numba"],
         description="Numba @njit(parallel=True) prange reduction")
class NumbaParallel(Numba):
    parallel = True


@variant("reduction", "cupy-lesson", kind="cuda", requires=["cupy"],
         description="CuPy as the lessons: arrays copied in on every call, the scalar copied out")
class CupyLesson(_Reduction):
    def setup(self):
        super().setup()
        self.cp = import_cupy()

    def transfer_in(self):
        cp = self.cp
        self.da = cp.asarray(self.a)
        self.db = cp.asarray(self.b) if self.dot else None
        cupy_sync()

    def compute(self):
        cp = self.cp
        self.dv = cp.sum(self.da * self.db, dtype=cp.float64) if self.dot else cp.mean(self.da, dtype=cp.float64)
        cupy_sync()

    def transfer_out(self):
        self.value = float(self.dv)
        self.da = self.db = None


@variant("reduction", "cupy", kind="cuda", requires=["cupy"], description="CuPy on device-resident arrays")
class Cupy(resident(CupyLesson)):
    def result(self):
        return float(self.dv)


def _cuda_kernels():
    numba, cuda = import_numba_cuda()

    @cuda.jit
    def dot(a, b, out):  # grid-stride partial sums, one float64 atomic per thread
        s = 0.0
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            s += numba.float64(a[i]) * numba.float64(b[i])
        cuda.atomic.add(out, 0, s)

    @cuda.jit
    def total(a, out):
        s = 0.0
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            s += numba.float64(a[i])
        cuda.atomic.add(out, 0, s)

    return cuda, dot, total


@variant("reduction", "numba-cuda", kind="cuda", requires=["numba"],
         description="Numba @cuda.jit grid-stride sums + float64 atomics on device-resident arrays")
class NumbaCuda(_Reduction):
    def setup(self):
        import numpy as np
        super().setup()
        self.cuda, self.dot_k, self.total_k = _cuda_kernels()
        self.da = self.cuda.to_device(self.a)
        self.db = self.cuda.to_device(self.b) if self.dot else None
        self.out = self.cuda.device_array(1, dtype=np.float64)
        sms = self.cuda.get_current_device().MULTIPROCESSOR_COUNT
        self.grid = (min(4 * sms, (len(self.a) + 255) // 256), 256)
        numba_sync()

    def compute(self):
        self.out[:] = 0.0  # a device-side memset
        blocks, threads = self.grid
        if self.dot:
            self.dot_k[blocks, threads](self.da, self.db, self.out)
        else:
            self.total_k[blocks, threads](self.da, self.out)
        numba_sync()

    def result(self):
        s = float(self.out.copy_to_host()[0])
        return s if self.dot else s / len(self.a)
