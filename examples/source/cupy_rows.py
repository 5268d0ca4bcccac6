"""CuPy program for `speedlab profile --source` (scripts/gpu-check.sh profile-source): the
naive row sum of rows_kernel.cu as a RawKernel compiled by NVRTC with -lineinfo. The
`#line` directive names the real file, so file:line points at rows_kernel.cu and speedlab
can print the line's text; without it NVRTC names the code after CuPy's own file name.

  python3 cupy_rows.py [--rows 16384] [--cols 1024] [--launches 40] [--no-lineinfo]
"""
import argparse
import os

import cupy

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=16384)
parser.add_argument("--cols", type=int, default=1024)
parser.add_argument("--launches", type=int, default=40)
parser.add_argument("--no-lineinfo", action="store_true")
args = parser.parse_args()

path = os.path.join(here, "rows_kernel.cu")
code = '#line 1 "%s"\n' % path + open(path).read()
options = () if args.no_lineinfo else ("-lineinfo",)
kernel = cupy.RawKernel(code, "rows_naive", options=options)
x = cupy.random.random((args.rows, args.cols), dtype=cupy.float32)
out = cupy.empty(args.rows, dtype=cupy.float32)
block = 128
grid = (args.rows + block - 1) // block
for _ in range(args.launches):
    kernel((grid,), (block,), (x, out, cupy.int32(args.rows), cupy.int32(args.cols)))
cupy.cuda.Device().synchronize()
expected = x.sum(axis=1)
print("cupy_rows: max error", float(cupy.abs(out - expected).max()))
