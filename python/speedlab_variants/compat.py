"""Imports the lessons' packages the way every interpreter speedlab meets can take them."""

import importlib


def import_numba():
    """numba, imported after the one NumPy shim it needs with NumPy >= 2.4 (numba 0.68
    still reads np.row_stack, which NumPy removed; see docs/python-variants.md)."""
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    return importlib.import_module("numba")


def import_numba_cuda():
    numba = import_numba()
    from numba import cuda
    return numba, cuda


def import_cupy():
    return importlib.import_module("cupy")
