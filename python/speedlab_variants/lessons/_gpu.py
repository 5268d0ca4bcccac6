"""Helpers the GPU variants share: synchronizing before a phase returns."""

from speedlab_variants.compat import import_cupy, import_numba_cuda


def cupy_sync():
    import_cupy().cuda.Device().synchronize()


def numba_sync():
    _, cuda = import_numba_cuda()
    cuda.synchronize()


def set_numba_threads(numba, threads):
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
