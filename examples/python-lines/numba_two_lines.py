"""Ground truth for `speedlab profile`'s Python lines (issue 40), Numba CUDA.

Two kernels, each launched from its own line (LINE:scale, LINE:shift), inside NVTX ranges
of the markers' names; the final synchronize (LINE:sync) is timed with perf_counter and
written to SPEEDLAB_TRUTH (if set).
"""
import json
import os
import time

import numpy as np

np.row_stack = np.vstack  # numba 0.68 with numpy 2.5 (docs: GPU-MACHINE.md)
from ranges import push, pop  # noqa: E402
from numba import cuda  # noqa: E402


@cuda.jit
def scale(a, factor):
    i = cuda.grid(1)
    if i < a.size:
        for _ in range(2048):  # about 0.5 ms a launch: the final sync waits for them
            a[i] = a[i] * factor + 0.5


@cuda.jit
def shift(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i] + 1.0


steps = int(os.environ.get("STEPS", "50"))
n = 1 << 22
d_a = cuda.to_device(np.ones(n, dtype=np.float32))
d_b = cuda.device_array_like(d_a)
threads = 256
blocks = (n + threads - 1) // threads
for i in range(steps):
    push("scale")
    scale[blocks, threads](d_a, np.float32(0.5))  # LINE:scale
    pop()
    push("shift")
    shift[blocks, threads](d_a, d_b)  # LINE:shift
    pop()
push("sync")
t0 = time.perf_counter_ns()
cuda.synchronize()  # LINE:sync
blocked_ns = time.perf_counter_ns() - t0
pop()
print("b[0]", d_b.copy_to_host()[0])
if os.environ.get("SPEEDLAB_TRUTH"):
    with open(os.environ["SPEEDLAB_TRUTH"], "w") as f:
        json.dump({"sync": {"blocked_ns": blocked_ns, "count": 1}}, f)
