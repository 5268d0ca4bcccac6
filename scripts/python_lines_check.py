#!/usr/bin/env python3
"""Checks `speedlab profile`'s Python lines against a ground-truth program (issue 40).

  scripts/python_lines_check.py RESULTS_JSON SCRIPT [TRUTH_JSON]

SCRIPT marks lines with `# LINE:<name>` and wraps each in an NVTX range named <name>
(examples/python-lines/*.py). For each marked line this prints the GPU time the range
launched (the profile's own NVTX table: kernels, copies and memsets whose call started in
the range, on any thread) against the GPU time the Python lines table gave that line, and,
where TRUTH_JSON (written by the script: SPEEDLAB_TRUTH) has the line's blocked time as the
script measured it around the line with perf_counter, that time against the line's
`sync_ns`. Fails (exit 1) when a line got less than 95% (or more than 105%) of its range's
GPU time, or its blocked time is off by more than 10%.
"""
import json
import re
import sys


def marked_lines(script):
    """name -> the lines that carry its marker (one program may mark a line per mode)."""
    out = {}
    with open(script, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"#\s*LINE:(\w+)", text)
            if m:
                out.setdefault(m.group(1), []).append(number)
    return out


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        program = json.load(f).get("program", {})
    truth = {}
    if len(argv) == 4:
        with open(argv[3], encoding="utf-8") as f:
            truth = json.load(f)
    script = argv[2].rsplit("/", 1)[-1]
    lines = [l for l in program.get("python_lines", {}).get("lines", []) if l["file"].rsplit("/", 1)[-1] == script]
    ranges = {r["name"]: r for r in program.get("nvtx_ranges", [])}
    failed = False
    print(f"{'line':<8} {'at':>5} {'range GPU':>12} {'line GPU':>12} {'share':>7} {'blocked truth':>14} "
          f"{'line blocked':>13} {'diff':>7}")
    for name, numbers in marked_lines(argv[2]).items():
        rows = [l for l in lines if l["line"] in numbers]
        number = ",".join(str(n) for n in numbers)
        got = sum(r["kernel_ns"] + r["copy_ns"] + r["memset_ns"] for r in rows)
        want = (ranges.get(name) or {}).get("launched_gpu_ns") or 0.0
        share = got / want if want > 0 else None
        blocked = truth.get(name, {}).get("blocked_ns")
        line_blocked = sum(r["sync_ns"] for r in rows)
        diff = (line_blocked - blocked) / blocked if blocked else None
        bad = (share is not None and want > 1e5 and not 0.95 <= share <= 1.05) or (
            diff is not None and abs(diff) > 0.10)
        failed |= bad
        print(f"{name:<8} {number:>5} {want / 1e6:>10.3f}ms {got / 1e6:>10.3f}ms "
              f"{'' if share is None else f'{100 * share:.1f}%':>7} "
              f"{'' if blocked is None else f'{blocked / 1e6:.3f}ms':>14} {line_blocked / 1e6:>11.3f}ms "
              f"{'' if diff is None else f'{100 * diff:+.1f}%':>7}{'  FAIL' if bad else ''}")
    cov = program.get("python_lines", {}).get("coverage", {})
    if cov.get("kernel_ns"):
        print(f"coverage: {100 * cov['kernel_ns_own'] / cov['kernel_ns']:.1f}% of kernel time from the program's "
              f"own lines, {100 * cov['kernel_ns_inferred'] / cov['kernel_ns']:.1f}% inferred; "
              f"{cov.get('calls_library', 0) + cov.get('calls_unknown', 0)} of {cov.get('calls', 0)} calls without a line")
    if not lines:
        print("no Python line of", script, "in", argv[1])
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
