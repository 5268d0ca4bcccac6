"""Ground truth for `speedlab profile`'s Python lines (issue 40), CuPy.

One line (LINE:heavy) launches nearly all the kernel time (a 4096x4096 matrix product), one
(LINE:light) a small elementwise kernel, and one (LINE:sync) synchronizes every iteration.
Each marked line sits inside an NVTX range of its marker's name, so the profile's own range
table says what the line launched (scripts/python_lines_check.py compares), and the time
the host spends in the sync line is measured here with perf_counter and written to the JSON
file named by SPEEDLAB_TRUTH (if set).
"""
import json
import os
import time

import cupy as cp
from ranges import push, pop

steps = int(os.environ.get("STEPS", "40"))
a = cp.random.random((4096, 4096), dtype=cp.float32)
x = cp.random.random(1 << 22, dtype=cp.float32)
blocked_ns = 0
for i in range(steps):
    push("heavy")
    b = a @ a  # LINE:heavy
    pop()
    push("light")
    y = x * 2.0 + 1.0  # LINE:light
    pop()
    push("sync")
    t0 = time.perf_counter_ns()
    cp.cuda.Stream.null.synchronize()  # LINE:sync
    blocked_ns += time.perf_counter_ns() - t0
    pop()
print("checksum", float(b[0, 0]) + float(y[0]))
if os.environ.get("SPEEDLAB_TRUTH"):
    with open(os.environ["SPEEDLAB_TRUTH"], "w") as f:
        json.dump({"sync": {"blocked_ns": blocked_ns, "count": steps}}, f)
