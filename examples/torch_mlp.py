"""A small PyTorch training loop: a few hundred steps of an MLP on synthetic data.

    python3 examples/torch_mlp.py [--steps 300] [--batch 512]
    speedlab profile --out prof -- python3 examples/torch_mlp.py
    python3 examples/torch_mlp.py --torch-profile   # torch.profiler with CUDA activities, for comparison

Each step is an NVTX range "train_step" (torch.cuda.nvtx). The loss must fall (the target
is a fixed linear map of the input, which the MLP can learn). Prints one JSON line with the
loop's wall time, so the overhead of a tracer can be read from several runs.
"""
import argparse
import json
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--torch-profile", action="store_true")
    args = p.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
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
    torch.cuda.synchronize()
    prof = None
    if args.torch_profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    last = loss.item()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    kernels = None
    if prof is not None:
        prof.__exit__(None, None, None)
        kernels = sum(e.count for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA)
    assert last < first, f"loss did not fall ({first} -> {last})"
    print(json.dumps({"example": "torch_mlp", "steps": args.steps, "loop_s": wall, "us_per_step": wall / args.steps * 1e6,
                      "loss_first": first, "loss_last": last, "torch_profiler_kernels": kernels}))


if __name__ == "__main__":
    main()
