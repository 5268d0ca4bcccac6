#!/usr/bin/env python3
"""Checks the Python lines `speedlab run` gives its Python variants' points (issue 40, item 4).

    python3 scripts/python_lines_run_check.py RUN_DIR/results.json

For every traced Python point with CUDA work: its `python_lines` section is there, at least
95% of its kernel time went to lines of the variant's own code, and the line that launched
the most kernel time is in the variant's lesson file (python/speedlab_variants/lessons/
<workload>.py). Prints each point's top lines; exit 1 when a check fails, 2 when nothing
could be checked.
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        results = json.load(f)
    checked = failed = 0
    for p in results.get("points", []):
        if p.get("language") != "python" or p.get("status") != "ok":
            continue
        lines = p.get("python_lines")
        name = p.get("id", "?")
        if lines is None:
            if p.get("kind") == "cuda":
                print(f"FAIL {name}: no python_lines section")
                failed += 1
            continue
        checked += 1
        cov = lines["coverage"]
        share = cov["kernel_ns_own"] / cov["kernel_ns"] if cov["kernel_ns"] > 0 else 0.0
        by_kernel = sorted(lines["lines"], key=lambda l: -l["kernel_ns"])
        top = by_kernel[0] if by_kernel else None
        lesson = name.split("/")[0] + ".py"  # id: workload/variant/params
        ok = share >= 0.95 and top is not None and os.path.basename(top["file"]) == lesson
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {100 * share:.1f}% of {cov['kernel_ns'] / 1e6:.3f} ms kernel time "
              f"on the variant's lines; {cov['calls']} calls, {cov['calls_own']} with a line")
        for l in lines["lines"][:4]:
            print(f"       {os.path.basename(l['file'])}:{l['line']} {l['text'].strip()[:60]!r}: {l['calls']} calls, "
                  f"{l['kernels']} kernels {l['kernel_ns'] / 1e6:.3f} ms, {l['syncs']} syncs {l['sync_ns'] / 1e6:.3f} ms, "
                  f"{l['copies']} copies")
    if checked == 0 and failed == 0:
        print("nothing to check: no traced Python point with CUDA work")
        sys.exit(2)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
