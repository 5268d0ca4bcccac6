"""A GPU loop that runs until it is signalled, for checking how a terminated program ends.

    python3 examples/signal_loop.py --framework cupy|torch [--seconds 60] [--progress FILE]
    speedlab profile --out prof -- python3 examples/signal_loop.py --framework torch

Each step launches a few kernels and synchronizes (CuPy: an elementwise multiply and a sum
copied back; PyTorch: a Linear-ReLU-Linear forward, backward and SGD step, and `.item()` of
the loss), so a signal lands while the main thread is inside the CUDA driver as often as
not. After each step the step count is written to FILE (rewritten in place), so the caller
knows when the loop runs and how many steps finished. Installs no signal handler of its
own: SIGTERM and SIGHUP end it by the default action (exit status 143 / 129 under a shell),
SIGINT by Python's KeyboardInterrupt (exit status 130 after the traceback).
"""
import argparse
import os
import time


def cupy_step():
    import cupy as cp
    x = cp.arange(1 << 22, dtype=cp.float32)

    def step():
        y = x * 1.0001
        return float(y.sum())  # the copy back synchronizes
    return step


def torch_step():
    import torch
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = torch.randn(256, 1024, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(data).square().mean()
        loss.backward()
        opt.step()
        return loss.item()  # synchronizes
    return step


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--framework", choices=["cupy", "torch"], required=True)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--progress", default="")
    args = p.parse_args()
    step = cupy_step() if args.framework == "cupy" else torch_step()
    end = time.monotonic() + args.seconds
    steps = 0
    while time.monotonic() < end:
        step()
        steps += 1
        if args.progress and steps % 10 == 0:
            with open(args.progress + ".tmp", "w") as f:
                f.write(f"{steps} {os.getpid()}\n")
            os.replace(args.progress + ".tmp", args.progress)
    print(f"signal_loop: {steps} steps, not signalled")


if __name__ == "__main__":
    main()
