"""Lesson 6: 2-D convolution of a float32 image with a normalized mask, zero padding.

out[y, x] = sum over i, j of image[y + i - h, x + j - h] * mask[i, j] (h = mask side // 2;
the mask is applied unflipped and taps outside the image count as zero), as the workload's
C++ variants compute it. The lesson (the Numba talk's image-convolution notebook) writes a
CPU version and a Numba @cuda.jit kernel with one thread per output pixel on a 2-D grid,
each tap read from global memory behind a bounds check; called on host arrays, Numba copies
them in and the result out on every call.
"""

from speedlab_variants import Variant, variant
from speedlab_variants.compat import import_cupy, import_numba_cuda
from speedlab_variants.lessons._common import compile_numba, cupy_sync, numba_sync, resident

BLOCK = 16  # the lesson's 2-D thread block: 16 x 16 threads, one output pixel each


class _Convolution(Variant):
    def setup(self):
        self.image, self.mask = self.inputs.image, self.inputs.mask
        self.out = None

    def result(self):
        return self.out


@variant("convolution", "loop", description="plain Python loop over pixels and taps", max_size={"size": 64})
class Loop(_Convolution):
    def compute(self):
        image, mask, out = self.image, self.mask, self.outputs.out
        n, m = image.shape[0], mask.shape[0]
        h = m // 2
        for y in range(n):
            for x in range(n):
                acc = 0.0
                for i in range(m):
                    yy = y + i - h
                    if 0 <= yy < n:
                        for j in range(m):
                            xx = x + j - h
                            if 0 <= xx < n:
                                acc += float(image[yy, xx]) * float(mask[i, j])
                out[y, x] = acc
        self.out = out


@variant("convolution", "numpy", description="NumPy: one scaled, shifted slice of the zero-padded image per tap")
class Numpy(_Convolution):
    def compute(self):
        import numpy as np
        image, mask = self.image, self.mask
        n, m = image.shape[0], mask.shape[0]
        h = m // 2
        padded = np.zeros((n + 2 * h, n + 2 * h), dtype=np.float32)
        padded[h:h + n, h:h + n] = image
        out = np.zeros((n, n), dtype=np.float32)
        for i in range(m):
            for j in range(m):
                out += mask[i, j] * padded[i:i + n, j:j + n]
        self.out = out


def _numba_convolve(numba, parallel):
    import numpy as np
    loop = numba.prange if parallel else range

    @numba.njit(parallel=parallel, fastmath=False)
    def convolve(image, mask, out):
        n, m = image.shape[0], mask.shape[0]
        h = m // 2
        for y in loop(n):
            for x in range(n):
                acc = np.float32(0.0)
                for i in range(m):
                    yy = y + i - h
                    if yy >= 0 and yy < n:
                        for j in range(m):
                            xx = x + j - h
                            if xx >= 0 and xx < n:
                                acc += image[yy, xx] * mask[i, j]
                out[y, x] = acc

    return convolve


@variant("convolution", "numba", description="Numba @njit loops over pixels and taps", requires=["numba"])
class Numba(_Convolution):
    parallel = False

    def setup(self):
        import numpy as np
        super().setup()
        self.kernel = compile_numba(self, _numba_convolve)
        self.out = np.empty_like(self.image)

    def compute(self):
        self.kernel(self.image, self.mask, self.out)


@variant("convolution", "numba-parallel", kind="threads", requires=["numba"],
         description="Numba @njit(parallel=True), prange over rows")
class NumbaParallel(Numba):
    parallel = True


def _cuda_kernel():
    numba, cuda = import_numba_cuda()

    @cuda.jit
    def convolve(image, mask, out):
        x, y = cuda.grid(2)  # x along threadIdx.x: neighbouring threads read neighbouring pixels
        n, m = image.shape[0], mask.shape[0]
        if y >= n or x >= n:
            return
        h = m // 2
        acc = numba.float32(0.0)
        for i in range(m):
            yy = y + i - h
            if yy >= 0 and yy < n:
                for j in range(m):
                    xx = x + j - h
                    if xx >= 0 and xx < n:
                        acc += image[yy, xx] * mask[i, j]
        out[y, x] = acc

    return cuda, convolve


def _grid(n):
    blocks = (n + BLOCK - 1) // BLOCK
    return (blocks, blocks), (BLOCK, BLOCK)


@variant("convolution", "numba-cuda-lesson", kind="cuda", requires=["numba"],
         description="Numba @cuda.jit, one thread per pixel, called on host arrays: Numba copies image and mask "
                     "in and the result out inside every call")
class NumbaCudaLesson(_Convolution):
    def setup(self):
        import numpy as np
        super().setup()
        self.cuda, self.kernel = _cuda_kernel()
        # Writable host copies (untimed): Numba copies every host argument back after the call.
        self.image, self.mask = np.array(self.image), np.array(self.mask)
        self.out = np.empty_like(self.image)
        self.grid = _grid(self.image.shape[0])

    def compute(self):
        blocks, threads = self.grid
        self.kernel[blocks, threads](self.image, self.mask, self.out)
        numba_sync()


@variant("convolution", "numba-cuda", kind="cuda", requires=["numba"],
         description="the same kernel on device arrays (image and mask copied once)")
class NumbaCuda(_Convolution):
    def setup(self):
        super().setup()
        self.cuda, self.kernel = _cuda_kernel()
        self.dimage, self.dmask = self.cuda.to_device(self.image), self.cuda.to_device(self.mask)
        self.dout = self.cuda.device_array_like(self.dimage)
        self.grid = _grid(self.image.shape[0])
        numba_sync()

    def compute(self):
        blocks, threads = self.grid
        self.kernel[blocks, threads](self.dimage, self.dmask, self.dout)
        numba_sync()

    def result(self):
        return self.dout


@variant("convolution", "cupy-lesson", kind="cuda", requires=["cupy"],
         description="CuPy's cupyx.scipy.ndimage.correlate (mode='constant'), image and mask copied in and the "
                     "result out on every call")
class CupyLesson(_Convolution):
    def setup(self):
        super().setup()
        self.cp = import_cupy()
        from cupyx.scipy import ndimage
        self.ndimage = ndimage

    def transfer_in(self):
        self.dimage, self.dmask = self.cp.asarray(self.image), self.cp.asarray(self.mask)
        cupy_sync()

    def compute(self):
        self.dout = self.ndimage.correlate(self.dimage, self.dmask, mode="constant", cval=0.0)
        cupy_sync()

    def transfer_out(self):
        self.out = self.cp.asnumpy(self.dout)


@variant("convolution", "cupy", kind="cuda", requires=["cupy"],
         description="the same CuPy filter on a device-resident image")
class Cupy(resident(CupyLesson)):
    def result(self):
        return self.dout
