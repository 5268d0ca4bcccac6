"""Lesson 7: matrix transpose of n x n int32 (the Carpentries' shared-memory tile, 32 x 33)."""

from speedlab_variants import Variant, variant
from speedlab_variants.compat import import_cupy, import_numba_cuda
from speedlab_variants.lessons._common import compile_numba, cupy_sync, numba_sync, resident

TILE = 32
TILE_PADDED = TILE + 1  # a module constant: Numba CUDA needs shared-array shapes it can read at compile time


class _Transpose(Variant):
    def setup(self):
        self.a = self.inputs.a
        self.out = None

    def result(self):
        return self.out


@variant("transpose", "loop", description="plain Python double loop", max_size={"size": 256})
class Loop(_Transpose):
    def compute(self):
        a, n = self.a, self.a.shape[0]
        out = self.outputs.out
        for r in range(n):
            for c in range(n):
                out[r, c] = a[c, r]
        self.out = out


@variant("transpose", "numpy", description="np.ascontiguousarray(a.T): the copy a transposed view needs")
class Numpy(_Transpose):
    def compute(self):
        import numpy as np
        self.out = np.ascontiguousarray(self.a.T)


def _numba_transpose(numba, parallel):
    loop = numba.prange if parallel else range

    @numba.njit(parallel=parallel)
    def transpose(a, out):
        n = a.shape[0]
        for rb in loop((n + 31) // 32):
            for cb in range(0, n, 32):
                for r in range(rb * 32, min(rb * 32 + 32, n)):
                    for c in range(cb, min(cb + 32, n)):
                        out[r, c] = a[c, r]

    return transpose


@variant("transpose", "numba", description="Numba @njit, 32 x 32 tiles", requires=["numba"])
class Numba(_Transpose):
    parallel = False

    def setup(self):
        import numpy as np
        super().setup()
        self.kernel = compile_numba(self, _numba_transpose)
        self.out = np.empty_like(self.a)

    def compute(self):
        self.kernel(self.a, self.out)


@variant("transpose", "numba-parallel", kind="threads", requires=["numba"],
         description="Numba @njit(parallel=True), prange over row tiles")
class NumbaParallel(Numba):
    parallel = True


@variant("transpose", "cupy-lesson", kind="cuda", requires=["cupy"],
         description="CuPy ascontiguousarray(d.T), the matrix copied in and out on every call")
class CupyLesson(_Transpose):
    def setup(self):
        super().setup()
        self.cp = import_cupy()

    def transfer_in(self):
        self.da = self.cp.asarray(self.a)
        cupy_sync()

    def compute(self):
        self.dout = self.cp.ascontiguousarray(self.da.T)
        cupy_sync()

    def transfer_out(self):
        self.out = self.cp.asnumpy(self.dout)


@variant("transpose", "cupy", kind="cuda", requires=["cupy"], description="CuPy on a device-resident matrix")
class Cupy(resident(CupyLesson)):
    def result(self):
        return self.dout


def _cuda_tiled():
    numba, cuda = import_numba_cuda()

    @cuda.jit
    def transpose(a, out):
        tile = cuda.shared.array((TILE, TILE_PADDED), dtype=numba.int32)  # +1 column: no bank conflicts
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        n = a.shape[0]
        x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
        if x < n and y < n:
            tile[ty, tx] = a[y, x]
        cuda.syncthreads()
        x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
        if x < n and y < n:
            out[y, x] = tile[tx, ty]

    return cuda, transpose


@variant("transpose", "numba-cuda", kind="cuda", requires=["numba"],
         description="Numba @cuda.jit with a 32 x 33 shared-memory tile, device-resident (the lesson's kernel)")
class NumbaCuda(_Transpose):
    def setup(self):
        super().setup()
        self.cuda, self.kernel = _cuda_tiled()
        self.da = self.cuda.to_device(self.a)
        self.dout = self.cuda.device_array_like(self.da)
        n = (self.a.shape[0] + TILE - 1) // TILE
        self.grid = ((n, n), (TILE, TILE))
        numba_sync()

    def compute(self):
        blocks, threads = self.grid
        self.kernel[blocks, threads](self.da, self.dout)
        numba_sync()

    def result(self):
        return self.dout
