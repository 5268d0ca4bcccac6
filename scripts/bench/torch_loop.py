"""The training loop of the overhead benchmark (scripts/bench/profile_overhead.sh): a
Linear-ReLU-Linear model, batch 256, SGD, on synthetic data, each step an NVTX range.

    python3 scripts/bench/torch_loop.py [--steps 300] [--repeats 3] [--warmup-s S] [--compile] [--torch-profile [--torch-trace PATH]]
    speedlab profile -- python3 scripts/bench/torch_loop.py --alternate-capture python [--blocks 40]

After 20 warm-up steps the loop of --steps steps runs --repeats times, each timed to a
synchronize; prints one JSON line: us_per_step (the fastest repeat: the others hold the
same work plus noise), every repeat, their mean (mean_us_per_step: all the timed steps'
time over their count, what a capture that records in windows costs on average), and the kernels torch.profiler saw (--torch-profile:
CPU and CUDA activities around the timed loops, as a user would start it; --torch-trace PATH
also writes its Chrome trace there, as a user would keep it: what the overhead bench sizes).

--warmup-s S: after the 20 warm-up steps, more steps until S seconds have passed since the
first, so that the timed repeats start in the steady state of a profiler that records its
start-up whole (speedlab's light default: until 200 ms after the first launch call).

--compile: the forward and the loss through torch.compile(mode="reduce-overhead"), so that
inductor's kernels run as CUDA graphs (cudagraph trees; backward graphed too, the optimizer
step eager). Compiling and recording the graphs happen in the 20 warm-up steps (the first
call compiles, the next few warm up and record), so the timed loops replay graphs. Set
TORCHINDUCTOR_CACHE_DIR to a folder kept between processes, or every process compiles anew.

--alternate-capture BACKEND (under `speedlab profile`): instead of the repeats, --blocks pairs
of blocks of --steps steps, BACKEND's per-call capture switched on for one block of each pair
and off for the other (speedlab_inject_capture, the order swapped every pair), so that the
capture's cost is read inside one process: prints capture_on_us and capture_off_us per pair.
"""
import argparse
import ctypes
import json
import os
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--torch-profile", action="store_true")
    p.add_argument("--torch-trace", metavar="PATH", default=None,
                   help="with --torch-profile: write torch.profiler's Chrome trace to PATH")
    p.add_argument("--warmup-s", type=float, default=0.0,
                   help="after the 20 warm-up steps, step until this many seconds since the first")
    p.add_argument("--compile", action="store_true", help='torch.compile(mode="reduce-overhead"): CUDA graphs')
    p.add_argument("--alternate-capture", metavar="BACKEND")
    p.add_argument("--blocks", type=int, default=40)
    args = p.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, args.width), torch.nn.ReLU(),
                                torch.nn.Linear(args.width, 16)).to(dev)
    target_map = torch.randn(256, 16, device=dev) / 16
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = torch.nn.MSELoss()

    def forward_loss(x):
        return loss_fn(model(x), x @ target_map)

    if args.compile:
        forward_loss = torch.compile(forward_loss, mode="reduce-overhead")

    def step():
        with torch.cuda.nvtx.range("train_step"):
            if args.compile:
                # A new iteration for the cudagraph trees: the last step's outputs may be
                # overwritten by this replay (the loop keeps only the last step's loss). The
                # gradients (the backward graph's outputs) dropped before the forward replay
                # reuses the graphs' memory (set_to_none: no kernel).
                torch.compiler.cudagraph_mark_step_begin()
                opt.zero_grad(set_to_none=True)
            x = torch.randn(args.batch, 256, device=dev)
            loss = forward_loss(x)
            if not args.compile:
                opt.zero_grad(set_to_none=True)  # where it always was: the eager loop unchanged
            loss.backward()
            opt.step()
        return loss

    t_first = time.perf_counter()
    first = step().item()
    # --compile: these steps also compile (the call above), warm up and record the CUDA graphs.
    for _ in range(20):
        step()
    while time.perf_counter() - t_first < args.warmup_s:
        step()
    torch.cuda.synchronize()
    prof = None
    if args.torch_profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    if args.alternate_capture:
        return alternate(args, step, first)
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
        if args.torch_trace:
            prof.export_chrome_trace(args.torch_trace)
    assert last < first, f"loss did not fall ({first} -> {last})"
    print(json.dumps({"bench": "torch_loop", "steps": args.steps, "repeats_us_per_step": per_step,
                      "us_per_step": min(per_step),
                      "mean_us_per_step": sum(per_step) / len(per_step), "torch_profiler_kernels": kernels,
                      "compile": args.compile, "threads": thread_cpus()}), flush=True)


def thread_cpus():
    """Each thread of this process and the CPU it last ran on (/proc/self/task/*/stat: the name,
    field 2, and the CPU, field 39): the placement behind a process's figure."""
    out = []
    for tid in sorted(os.listdir("/proc/self/task"), key=int):
        try:
            stat = open(f"/proc/self/task/{tid}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out.append({"tid": int(tid), "name": name, "cpu": int(fields[36])})
    return out


def timed_block(step, steps):
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e6, loss


def alternate(args, step, first):
    """Pairs of blocks, the capture on in one and off in the other, inside this process."""
    path = os.environ.get("CUDA_INJECTION64_PATH")
    if not path:
        raise SystemExit("--alternate-capture: not run under speedlab profile (no CUDA_INJECTION64_PATH)")
    lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    lib.speedlab_inject_capture.argtypes = [ctypes.c_char_p, ctypes.c_int]
    backend = args.alternate_capture.encode()
    if not lib.speedlab_inject_capture(backend, 1):
        raise SystemExit(f"--alternate-capture: {args.alternate_capture} has no capture to switch in this process")
    on_us, off_us = [], []
    for b in range(args.blocks):
        for on in ((1, 0) if b % 2 == 0 else (0, 1)):
            lib.speedlab_inject_capture(backend, on)
            us, loss = timed_block(step, args.steps)
            (on_us if on else off_us).append(us)
    lib.speedlab_inject_capture(backend, 1)
    last = loss.item()
    assert last < first, f"loss did not fall ({first} -> {last})"
    print(json.dumps({"bench": "torch_loop_alternate", "backend": args.alternate_capture, "steps": args.steps,
                      "capture_on_us": on_us, "capture_off_us": off_us}), flush=True)


if __name__ == "__main__":
    main()
