#!/usr/bin/env python3
"""The critical path on the recorded culprit jobs (tests/fixtures/culprits, issue 42) as a
Markdown table: what was injected and what the program measured of it (expected.jsonl),
what speedlab's first finding names and its cost, and the path's length per measured step
against the program's measured step (wall_s / steps). docs/results/critical-path.md is its
output.

Usage: scripts/critical_path_table.py SPEEDLAB [FIXTURES]   (FIXTURES: tests/fixtures/culprits)
"""
import json
import pathlib
import subprocess
import sys

# Per fixture: what was injected, and the expected.jsonl keys that measured it.
INJECTED = {
    "gpu": ("rank 1: spin kernel in its forward", ["extra_ms_per_step"]),
    "stall": ("rank 1: host sleep before each step (load_batch)", ["stall_ms_per_step"]),
    "pageable": ("rank 1: 128 MiB pageable host-to-device copy per step", ["pageable_ms_per_step"]),
    "sync": ("one process: loss.item() per step, then 10 ms host work", ["sync_ms_per_step", "stall_ms_per_step"]),
    "none": ("nothing: two identical ranks", []),
}


def expected(folder):
    return [json.loads(l) for l in (folder / "expected.jsonl").read_text().splitlines() if l.strip()]


def row(speedlab, folder):
    lines = expected(folder)
    what, keys = INJECTED[folder.name]
    measured = [max(l.get(k, 0.0) for l in lines) for k in keys]
    r = subprocess.run([speedlab, "analyze", "--json", "--quiet", str(folder)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"speedlab analyze {folder} exited {r.returncode}: {r.stderr.strip()}")
    out = json.loads(r.stdout)
    path = out["program"].get("critical_path") or {}
    first = out["analysis"]["findings"][0] if out["analysis"]["findings"] else {}
    named = first.get("title", "—") if first.get("rule") == "critical-path" else "no culprit named (first finding: " + first.get("rule", "none") + ")"
    culprit = path.get("culprit") or {}
    cost = [culprit.get("sync_wait_ns", 0) / 1e6, culprit.get("cost_ns", 0) / 1e6] if len(keys) == 2 else \
        ([culprit.get("cost_ns", 0) / 1e6] if culprit else [])
    steps = lines[0]["steps"]
    measured_step = max(l["wall_s"] for l in lines) * 1e3 / steps
    lengths = [s["length_ns"] for s in path.get("steps", [])][-steps:]
    path_step = sum(lengths) / len(lengths) / 1e6 if lengths else 0
    fmt = lambda v: " + ".join(f"{x:.2f}" for x in v) if v else "—"
    off = lambda a, b: f"{100 * (a / b - 1):+.1f}%" if b else "—"
    cost_off = ", ".join(off(a, b) for a, b in zip(cost, measured)) if cost and measured else "—"
    return (f"| `{folder.name}/` | {what} | {fmt(measured)} | {named} | {fmt(cost)} ({cost_off}) | "
            f"{path_step:.2f} vs {measured_step:.2f} ({off(path_step, measured_step)}) |")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    fixtures = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "tests/fixtures/culprits")
    print("| fixture | injected | measured by the program (ms per step) | speedlab's first finding | its cost "
          "(ms per step, vs measured) | path per measured step vs wall_s / steps (ms) |")
    print("|---|---|---:|---|---:|---:|")
    for name in INJECTED:
        print(row(sys.argv[1], fixtures / name))


if __name__ == "__main__":
    main()
