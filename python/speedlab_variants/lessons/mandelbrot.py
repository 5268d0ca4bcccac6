"""Lesson 8: Mandelbrot escape counts on a size x size grid over [-2, 2]^2 (complex128)."""

from speedlab_variants import Variant, variant
from speedlab_variants.compat import import_numba_cuda
from speedlab_variants.lessons._common import compile_numba, numba_sync


def escape(c, iterations):
    z = 0j
    for i in range(iterations):
        z = z * z + c
        if z.real * z.real + z.imag * z.imag >= 4.0:
            return i
    return iterations


class _Mandelbrot(Variant):
    def setup(self):
        self.size, self.iterations = self.params["size"], self.params["iterations"]
        self.image = self.outputs.image  # written in place: no result copy

    def coordinate(self, index):
        return -2.0 + index * (4.0 / self.size)


@variant("mandelbrot", "loop", description="plain Python loop over pixels (complex numbers)", max_size={"size": 64})
class Loop(_Mandelbrot):
    def compute(self):
        for row in range(self.size):
            cy = self.coordinate(row)
            for col in range(self.size):
                self.image[row, col] = escape(complex(self.coordinate(col), cy), self.iterations)


@variant("mandelbrot", "numpy", description="NumPy over the whole complex grid, a masked update per iteration")
class Numpy(_Mandelbrot):
    def compute(self):
        import numpy as np
        axis = -2.0 + np.arange(self.size) * (4.0 / self.size)
        c = axis[None, :] + 1j * axis[:, None]
        z = np.zeros_like(c)
        counts = np.full(c.shape, self.iterations, dtype=np.int32)
        alive = np.ones(c.shape, dtype=bool)
        for i in range(self.iterations):
            z[alive] = z[alive] * z[alive] + c[alive]
            escaped = alive & (z.real * z.real + z.imag * z.imag >= 4.0)
            counts[escaped] = i
            alive &= ~escaped
            if not alive.any():
                break
        self.image[:] = counts


def escape_count(cx, cy, iterations):
    """The C++ variants' iteration (mandelbrot_problem.hpp), compiled by Numba for the CPU
    and for CUDA: the first i at which |z|^2 >= 4, or iterations for a member."""
    x = y = x2 = y2 = 0.0
    for i in range(iterations):
        y = 2 * x * y + cy
        x = x2 - y2 + cx
        x2 = x * x
        y2 = y * y
        if x2 + y2 >= 4.0:
            return i
    return iterations


def _numba_render(numba, parallel):
    loop = numba.prange if parallel else range
    escape_cpu = numba.njit(escape_count)

    @numba.njit(parallel=parallel)
    def render(image, iterations):
        size = image.shape[0]
        for row in loop(size):
            cy = -2.0 + row * (4.0 / size)
            for col in range(size):
                image[row, col] = escape_cpu(-2.0 + col * (4.0 / size), cy, iterations)

    return render


@variant("mandelbrot", "numba", description="Numba @njit loop", requires=["numba"])
class Numba(_Mandelbrot):
    def setup(self):
        super().setup()
        self.render = compile_numba(self, _numba_render)

    def compute(self):
        self.render(self.image, self.iterations)


@variant("mandelbrot", "numba-parallel", kind="threads", requires=["numba"],
         description="Numba @njit(parallel=True), prange over rows")
class NumbaParallel(Numba):
    parallel = True


def _cuda_render():
    _, cuda = import_numba_cuda()
    escape_gpu = cuda.jit(device=True)(escape_count)

    @cuda.jit
    def render(image, iterations):
        col, row = cuda.grid(2)
        size = image.shape[0]
        if row < size and col < size:
            image[row, col] = escape_gpu(-2.0 + col * (4.0 / size), -2.0 + row * (4.0 / size), iterations)

    return cuda, render


@variant("mandelbrot", "numba-cuda-lesson", kind="cuda", requires=["numba"],
         description="Numba @cuda.jit, 16x16 blocks; the image copied back on every call, as the lesson")
class NumbaCudaLesson(_Mandelbrot):
    copy_back = True

    def setup(self):
        super().setup()
        self.cuda, self.kernel = _cuda_render()
        self.dimage = self.cuda.device_array(self.image.shape, dtype=self.image.dtype)
        n = (self.size + 15) // 16
        self.grid = ((n, n), (16, 16))
        numba_sync()

    def compute(self):
        blocks, threads = self.grid
        self.kernel[blocks, threads](self.dimage, self.iterations)
        numba_sync()

    def transfer_out(self):
        if self.copy_back:
            self.dimage.copy_to_host(self.image)

    def result(self):
        return None if self.copy_back else self.dimage


@variant("mandelbrot", "numba-cuda", kind="cuda", requires=["numba"],
         description="Numba @cuda.jit, 16x16 blocks, the image stays on the device")
class NumbaCuda(NumbaCudaLesson):
    copy_back = False
    transfer_out = Variant.transfer_out  # nothing to copy: not even requested
