"""What the lessons' variants share: compiling Numba code for serial or parallel variants,
the device-resident twin of a copy-every-call (-lesson) variant, and synchronizing before a
phase returns."""

from speedlab_variants import Variant
from speedlab_variants.compat import import_cupy, import_numba, import_numba_cuda


def compile_numba(run, make):
    """make(numba, parallel) with the thread count of a parallel variant (run.parallel) set."""
    numba = import_numba()
    parallel = getattr(run, "parallel", False)
    if parallel:
        numba.set_num_threads(max(1, min(run.threads, numba.config.NUMBA_NUM_THREADS)))
    return make(numba, parallel)


def resident(lesson):
    """The device-resident twin of a -lesson class: its transfer_in runs once in setup and no
    repetition copies (the inherited no-op phases are not even requested)."""

    class Resident(lesson):
        def setup(self):
            super().setup()
            lesson.transfer_in(self)

        transfer_in = Variant.transfer_in
        transfer_out = Variant.transfer_out

    return Resident


def cupy_sync():
    import_cupy().cuda.Device().synchronize()


def numba_sync():
    _, cuda = import_numba_cuda()
    cuda.synchronize()
