"""Numba program for `speedlab profile --source` (scripts/gpu-check.sh profile-source): the
naive row sum (one thread per row: uncoalesced loads) compiled with lineinfo=True, so its
SASS carries this file's line numbers.

  python3 numba_rows.py [--rows 16384] [--cols 1024] [--launches 40]
"""
import argparse

import numpy as np

if not hasattr(np, "row_stack"):  # numba 0.68 still names it; numpy 2.5 dropped it
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=16384)
parser.add_argument("--cols", type=int, default=1024)
parser.add_argument("--launches", type=int, default=40)
args = parser.parse_args()


@cuda.jit(lineinfo=True)
def rows_naive(x, out):
    row = cuda.grid(1)
    if row >= x.shape[0]:
        return
    acc = 0.0
    for c in range(x.shape[1]):
        acc += x[row, c]  # the uncoalesced load
    out[row] = acc


x = cuda.to_device(np.random.random((args.rows, args.cols)).astype(np.float32))
out = cuda.device_array(args.rows, dtype=np.float32)
block = 128
grid = (args.rows + block - 1) // block
for _ in range(args.launches):
    rows_naive[grid, block](x, out)
cuda.synchronize()
print("numba_rows: max error", float(np.abs(out.copy_to_host() - x.copy_to_host().sum(axis=1)).max()))
