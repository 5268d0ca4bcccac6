"""The training loop of the overhead benchmark (scripts/bench/profile_overhead.sh): a
Linear-ReLU-Linear model, batch 256, SGD, on synthetic data, each step an NVTX range.

    python3 scripts/bench/torch_loop.py [--steps 300] [--repeats 3] [--torch-profile]

After 20 warm-up steps the loop of --steps steps runs --repeats times, each timed to a
synchronize; prints one JSON line: us_per_step (the fastest repeat: the others hold the
same work plus noise), every repeat, and the kernels torch.profiler saw (--torch-profile:
CPU and CUDA activities around the timed loops, as a user would start it).
"""
import argparse
import json
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--torch-profile", action="store_true")
    args = p.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, args.width), torch.nn.ReLU(),
                                torch.nn.Linear(args.width, 16)).to(dev)
    target_map = torch.randn(256, 16, device=dev) / 16
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = torch.nn.MSELoss()

    def step():
        with torch.cuda.nvtx.range("train_step"):
            x = torch.randn(args.batch, 256, device=dev)
            loss = loss_fn(model(x), x @ target_map)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return loss

    first = step().item()
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    prof = None
    if args.torch_profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    per_step = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for _ in range(args.steps):
            loss = step()
        torch.cuda.synchronize()
        per_step.append((time.perf_counter() - t0) / args.steps * 1e6)
    last = loss.item()
    kernels = None
    if prof is not None:
        prof.__exit__(None, None, None)
        kernels = sum(e.count for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA)
    assert last < first, f"loss did not fall ({first} -> {last})"
    print(json.dumps({"bench": "torch_loop", "steps": args.steps, "repeats_us_per_step": per_step,
                      "us_per_step": min(per_step), "torch_profiler_kernels": kernels}), flush=True)


if __name__ == "__main__":
    main()
