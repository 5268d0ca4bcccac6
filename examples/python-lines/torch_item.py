"""Ground truth for `speedlab profile`'s Python lines (issue 40), PyTorch eager training.

A training loop with one `.item()` per step (LINE:item). The forward (LINE:forward), the
backward (LINE:backward: its kernels run on the autograd engine's threads, which have no
Python frames, so the profile gives them to this line as "inferred") and the optimizer step
(LINE:step) are each inside an NVTX range of the marker's name; the host's time in the
`.item()` line is measured with perf_counter and written to SPEEDLAB_TRUTH (if set). With
COMPILE=1 the model runs under torch.compile(mode="reduce-overhead") (CUDA graphs), forward
only, so the forward line replays a graph.
"""
import json
import os
import time

import torch
import torch.nn.functional as F

steps = int(os.environ.get("STEPS", "30"))
compile_graphs = os.environ.get("COMPILE") == "1"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda()
x = torch.randn(512, 4096, device="cuda")
target = torch.randn(512, 4096, device="cuda")
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
if compile_graphs:
    model.eval()
    run = torch.compile(model, mode="reduce-overhead")
    with torch.no_grad():
        for _ in range(3):  # compile, record the graph, warm up
            run(x)
        torch.cuda.synchronize()
# One read-back before the loop: its first use allocates the pinned staging buffer, which
# is start-up, not the per-step wait the loop's marked line measures.
total = model(x).sum().item()
torch.cuda.synchronize()
blocked_ns = 0
for step in range(steps):
    if compile_graphs:
        with torch.no_grad():
            torch.cuda.nvtx.range_push("forward")
            out = run(x)  # LINE:forward
            torch.cuda.nvtx.range_pop()
            loss = (out - target).square().mean()
    else:
        torch.cuda.nvtx.range_push("forward")
        out = model(x)  # LINE:forward
        torch.cuda.nvtx.range_pop()
        loss = F.mse_loss(out, target)
        opt.zero_grad(set_to_none=True)
        torch.cuda.nvtx.range_push("backward")
        loss.backward()  # LINE:backward
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("step")
        opt.step()  # LINE:step
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("item")
    t0 = time.perf_counter_ns()
    total += loss.item()  # LINE:item
    blocked_ns += time.perf_counter_ns() - t0
    torch.cuda.nvtx.range_pop()
print("loss sum", total)
if os.environ.get("SPEEDLAB_TRUTH"):
    with open(os.environ["SPEEDLAB_TRUTH"], "w") as f:
        json.dump({"item": {"blocked_ns": blocked_ns, "count": steps}}, f)
