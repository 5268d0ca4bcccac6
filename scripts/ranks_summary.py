#!/usr/bin/env python3
"""The table of scripts/gpu-ranks.sh: what speedlab's merged reports found against what was
injected and against torch.profiler.

    ranks_summary.py WORK_DIR STEPS

For each profile (in-/out-: speedlab inside each rank / outside around torchrun; plain /
slow: rank 1 given extra GPU work every step; mpi-slow: under mpirun): the ranks found, the
straggler named, rank 0's wait per step against the extra time rank 1's spin kernel took
(its own CUDA events, printed by ddp_train.py), and each rank's kernel time over the
measured steps (the last STEPS steps found) against torch.profiler's total for the same
steps in a run of its own (torch-plain, torch-slow). Writes WORK_DIR/summary.json.
"""
import glob
import json
import os
import re
import sys


def rank_lines(path):
    # Each rank prints one flat JSON object; two ranks writing at once can put both on one line.
    out = {}
    for f in glob.glob(path):
        for m in re.finditer(r'\{"rank"[^{}]*\}', open(f, errors="replace").read()):
            try:
                d = json.loads(m.group(0))
                out[d["rank"]] = d
            except ValueError:
                pass
    return out


def main():
    work, steps = sys.argv[1], int(sys.argv[2])
    rows, result = [], {}
    for name in ["in-plain", "out-plain", "in-slow", "out-slow", "mpi-slow"]:
        f = os.path.join(work, f"{name}.analysis.json")
        if not os.path.exists(f):
            continue
        try:
            j = json.load(open(f))
        except ValueError as e:
            rows.append(f"{name:<10} analysis unreadable: {e}")
            continue
        ranks = j.get("program", {}).get("ranks")
        if not ranks:
            rows.append(f"{name:<10} no ranks in the merged analysis ({len(j.get('program', {}).get('processes', []))} processes)")
            continue
        mode = name.split("-")[1]
        printed = rank_lines(os.path.join(work, "logs", f"{name}.out")) or rank_lines(os.path.join(work, "logs", f"{name}.err"))
        extra_ms = printed.get(1, {}).get("extra_ms_per_step", 0.0)
        torch = {}
        for tf in glob.glob(os.path.join(work, f"torch-{mode}.rank*.json")):
            d = json.load(open(tf))
            torch[d["rank"]] = d
        entry = {"straggler": ranks.get("straggler"), "wait_method": ranks.get("wait_method"),
                 "steps": ranks.get("steps"), "step_method": ranks.get("step_method"), "extra_ms": extra_ms,
                 "ranks": []}
        for x in ranks["ranks"]:
            figs = x.get("step_figures", [])
            measured = figs[-steps:] if len(figs) >= steps else []
            kernel_ms = sum(s[4] for s in measured) / 1e6 if measured else None
            kernel_count = sum(s[5] for s in measured) if measured else None
            # Without the collectives (NCCL kernels): their length is mostly waiting for the
            # other rank, which differs from run to run; the rest is the rank's own work.
            compute_ms = kernel_ms - sum(s[3] for s in measured) / 1e6 if measured else None
            t = torch.get(x["rank"])
            torch_ms = t["kernel_us"] / 1e3 if t else None
            torch_compute_ms = (t["kernel_us"] - t.get("nccl_us", 0)) / 1e3 if t else None
            diff = (kernel_ms / torch_ms - 1) if kernel_ms and torch_ms else None
            cdiff = (compute_ms / torch_compute_ms - 1) if compute_ms and torch_compute_ms else None
            entry["ranks"].append({"rank": x["rank"], "gpu": x.get("gpu"), "steps": x.get("steps"),
                                   "kernels": x.get("kernels"), "measured_kernels": kernel_count,
                                   "torch_kernels": t["kernels"] if t else None, "measured_kernel_ms": kernel_ms,
                                   "torch_kernel_ms": torch_ms, "vs_torch": diff,
                                   "measured_compute_kernel_ms": compute_ms, "torch_compute_kernel_ms": torch_compute_ms,
                                   "compute_vs_torch": cdiff,
                                   "wait_per_step_ms": x.get("wait_per_step_ns", 0) / 1e6,
                                   "wait_total_ms": x.get("wait_total_ns", 0) / 1e6,
                                   "compute_ms": x.get("compute_ns", 0) / 1e6, "idle_ms": x.get("idle_ns", 0) / 1e6})
            rows.append(f"{name:<10} rank {x['rank']} steps {x.get('steps'):>3} measured steps: {kernel_count} kernels "
                        f"{kernel_ms if kernel_ms is None else round(kernel_ms, 3)} ms vs torch.profiler "
                        f"{t['kernels'] if t else '-'} kernels {torch_ms if torch_ms is None else round(torch_ms, 3)} ms "
                        f"({'-' if diff is None else f'{diff * 100:+.1f}%'}); without collectives "
                        f"{compute_ms if compute_ms is None else round(compute_ms, 3)} vs "
                        f"{torch_compute_ms if torch_compute_ms is None else round(torch_compute_ms, 3)} ms "
                        f"({'-' if cdiff is None else f'{cdiff * 100:+.1f}%'}), wait/step "
                        f"{x.get('wait_per_step_ns', 0) / 1e6:.3f} ms")
        if mode == "slow":
            w0 = next((r["wait_per_step_ms"] for r in entry["ranks"] if r["rank"] == 0), None)
            err = (w0 / extra_ms - 1) if w0 is not None and extra_ms else None
            entry["rank0_wait_vs_injected"] = err
            rows.append(f"{name:<10} straggler: rank {ranks.get('straggler')} (wanted 1); rank 0 waits {w0:.3f} ms/step "
                        f"vs injected {extra_ms:.3f} ms ({'-' if err is None else f'{err * 100:+.1f}%'}); "
                        f"wait seen as {ranks.get('wait_method')}")
        else:
            rows.append(f"{name:<10} straggler: {ranks.get('straggler')} (wanted none); wait seen as {ranks.get('wait_method')}")
        result[name] = entry
    json.dump(result, open(os.path.join(work, "summary.json"), "w"), indent=1)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
