"""A small data-parallel training loop (PyTorch DDP) to profile ranks with.

    torchrun --nproc_per_node 2 examples/ddp_train.py [--steps 30]
    torchrun --nproc_per_node 2 examples/ddp_train.py --backend gloo     # two ranks on one GPU
    torchrun --nproc_per_node 2 examples/ddp_train.py --slow-rank 1 --slow-ms 5
    speedlab profile --out prof -- torchrun --nproc_per_node 2 examples/ddp_train.py
    torchrun --nproc_per_node 2 speedlab profile --out prof -- python3 examples/ddp_train.py

Each step is an NVTX range "train_step". --slow-rank R --slow-ms T gives rank R about T ms
of extra GPU work in every step's forward pass (a spin kernel), so R becomes the straggler
and the other ranks wait for it in the gradient all-reduce; the rank prints what the extra
kernel measured (CUDA events) so a report's figure can be checked against it.
Injected culprits (issue 42: the critical path must name them), each measured by the rank
that has it and printed in its JSON line:
--stall-rank R --stall-ms T: rank R sleeps T ms on the host before each step, in an NVTX
  range "load_batch" (a slow data loader); printed: stall_ms_per_step (perf_counter).
--pageable-rank R --pageable-mb M: rank R copies M MiB of pageable host memory to the GPU at
  the start of each step (torch.from_numpy(...).to(device)); printed: pageable_ms_per_step
  (CUDA events around the copy, median over the measured steps).
--sync-per-step: every rank reads the loss back (`loss.item()`) at the end of each step;
  printed: sync_ms_per_step (host time blocked in it, perf_counter, median). Without
  torchrun (no RANK in the environment) the script runs as one process, no process group.
Every rank prints step_ms (the median wall time of a measured step, perf_counter between
step starts) for checking a critical path's length.
--progress FILE has each rank append a line "STEPS UNIX_TIME_S" (steps finished, warm-up
included, and when) to FILE.rank<N> after each step, to check a stopped job's profile against
(the steps finished before the signal must be in it).
--torch-profile FILE has each rank write its own torch.profiler totals (kernels, NCCL) for
the same steps to FILE.rank<N>.json, for comparison (run it without speedlab: two CUPTI
clients in one process collide).
--backend picks the process group's backend: nccl (the default: all-reduce in NCCL kernels
on the GPU, one GPU per rank; NCCL refuses two ranks on one GPU) or gloo (all-reduce on the
host: the gradients are copied to the host, reduced there and copied back; it works with CUDA
tensors, also with two ranks sharing one GPU). With more ranks than GPUs, rank r uses GPU
LOCAL_RANK % device count.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5, help="steps before the measured ones (not profiled by --torch-profile)")
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-ms", type=float, default=0.0)
    p.add_argument("--stall-rank", type=int, default=-1)
    p.add_argument("--stall-ms", type=float, default=0.0)
    p.add_argument("--pageable-rank", type=int, default=-1)
    p.add_argument("--pageable-mb", type=float, default=0.0)
    p.add_argument("--sync-per-step", action="store_true")
    p.add_argument("--torch-profile", default="")
    p.add_argument("--progress", default="", help="after each measured step (synchronized), append its number and Unix "
                   "time to FILE.rank<N>: what a rank had finished when it was stopped")
    return p.parse_args()


def spin_cycles_for(ms, device):
    """Cycles of torch.cuda._sleep that take about `ms` milliseconds on this GPU. The clock
    ramps up under load (an idle H100 was seen at 345 MHz), so the rate is measured again
    with a spin of about the asked length until two measurements agree; the time the extra
    kernel really takes is measured once more (CUDA events) and printed."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles, last = 1_000_000, None
    for _ in range(8):
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        torch.cuda.synchronize(device)
        per_ms = cycles / start.elapsed_time(end)
        if last is not None and abs(per_ms / last - 1) < 0.02:
            break
        last = per_ms
        cycles = max(int(per_ms * ms), 1000)
    return int(per_ms * ms)


def launcher_env():
    """torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT; under mpirun or srun take
    them from the launcher's own variables (MASTER_ADDR/PORT must then be set by the user)."""
    for rank, size, local in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
                              ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
                              ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")):
        if "RANK" not in os.environ and rank in os.environ and size in os.environ:
            os.environ["RANK"], os.environ["WORLD_SIZE"] = os.environ[rank], os.environ[size]
            os.environ.setdefault("LOCAL_RANK", os.environ.get(local, os.environ[rank]))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")


def main():
    args = parse()
    launcher_env()
    if args.slow_ms < 0:
        raise SystemExit("--slow-ms must be >= 0")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if not torch.cuda.is_available():
        raise SystemExit("ddp_train.py needs a CUDA GPU")
    device = torch.device("cuda", local % torch.cuda.device_count())
    if args.backend == "nccl" and int(os.environ.get("LOCAL_WORLD_SIZE", "1")) > torch.cuda.device_count():
        raise SystemExit("--backend nccl needs one GPU per rank (NCCL refuses two ranks on one GPU); "
                         "use --backend gloo to share a GPU")
    torch.cuda.set_device(device)
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group(args.backend)
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    for name in ("slow_rank", "stall_rank", "pageable_rank"):
        if getattr(args, name) >= world:
            raise SystemExit(f"--{name.replace('_', '-')} {getattr(args, name)}: the job has ranks 0..{world - 1}")
    torch.manual_seed(rank)

    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, 10)).to(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index]) if distributed else model
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.width, device=device)
    y = torch.randint(0, 10, (args.batch,), device=device)
    slow = rank == args.slow_rank and args.slow_ms > 0
    cycles = spin_cycles_for(args.slow_ms, device) if slow else 0
    stall_s = args.stall_ms / 1000 if rank == args.stall_rank else 0.0
    pageable = None
    if rank == args.pageable_rank and args.pageable_mb > 0:
        import numpy as np
        pageable = np.ones(int(args.pageable_mb * (1 << 20)) // 4, dtype=np.float32)
    measured = {"stall": [], "pageable": [], "sync": []}
    copy_events = []

    def step():
        if stall_s:
            with torch.cuda.nvtx.range("load_batch"):
                t = time.perf_counter()
                time.sleep(stall_s)
                measured["stall"].append(time.perf_counter() - t)
        with torch.cuda.nvtx.range("train_step"):
            if pageable is not None:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                torch.from_numpy(pageable).to(device)
                b.record()
                copy_events.append((a, b))
            opt.zero_grad(set_to_none=True)
            if slow:
                torch.cuda._sleep(cycles)
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            loss.backward()
            opt.step()
            if args.sync_per_step:
                t = time.perf_counter()
                loss.item()
                measured["sync"].append(time.perf_counter() - t)
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize(device)

    extra_ms = 0.0
    if slow:  # what the injected kernel itself takes, for checking the report's figure
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        torch.cuda._sleep(cycles)
        b.record()
        torch.cuda.synchronize(device)
        extra_ms = a.elapsed_time(b)
    if distributed:
        dist.barrier()  # every rank starts the measured steps together
    for key in measured:
        measured[key].clear()
    copy_events.clear()

    profiler = None
    if args.torch_profile:
        from torch.profiler import ProfilerActivity, profile
        profiler = profile(activities=[ProfilerActivity.CUDA])
        profiler.__enter__()
    t0 = time.perf_counter()
    starts = []
    for i in range(args.steps):
        starts.append(time.perf_counter())
        loss = step()
        if args.progress:
            torch.cuda.synchronize(device)
            with open(f"{args.progress}.rank{rank}", "a") as f:  # "steps unix_time_s", one line a step
                f.write(f"{args.warmup + i + 1} {time.time():.6f}\n")
    torch.cuda.synchronize(device)
    wall = time.perf_counter() - t0
    starts.append(time.perf_counter())
    measured["pageable"] = [a.elapsed_time(b) / 1000 for a, b in copy_events]
    median_ms = lambda v: round(sorted(v)[len(v) // 2] * 1000, 4) if v else 0.0
    injected = {f"{key}_ms_per_step": median_ms(v) for key, v in measured.items() if v}
    step_ms = median_ms([b - a for a, b in zip(starts, starts[1:])])
    if profiler is not None:
        profiler.__exit__(None, None, None)
        # Each GPU kernel of the measured steps, by its own start/end (copies and memsets apart).
        kernels_us = nccl_us = copies_us = 0.0
        count = 0
        for e in profiler.events():
            if e.device_type != torch.autograd.DeviceType.CUDA:
                continue
            us = e.time_range.elapsed_us()
            if "memcpy" in e.name.lower() or "memset" in e.name.lower():
                copies_us += us
                continue
            count += 1
            kernels_us += us
            if "nccl" in e.name.lower():
                nccl_us += us
        with open(f"{args.torch_profile}.rank{rank}.json", "w") as f:
            json.dump({"rank": rank, "steps": args.steps, "kernels": count, "kernel_us": kernels_us,
                       "nccl_us": nccl_us, "copies_us": copies_us}, f)
    print(json.dumps({"rank": rank, "world": world, "backend": args.backend, "steps": args.steps, "wall_s": round(wall, 4),
                      "loss": round(float(loss), 4), "extra_ms_per_step": round(extra_ms, 4), "step_ms": step_ms,
                      **injected}), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
