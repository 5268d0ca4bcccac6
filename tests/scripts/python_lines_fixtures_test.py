#!/usr/bin/env python3
"""The Python lines of the ground-truth programs, from their streams recorded on the GPU
machine (tests/fixtures/python-lines/<case>: scripts/gpu-python-lines.sh), on this build.

  python_lines_fixtures_test.py SPEEDLAB FIXTURES CHECKER

Each case folder is copied, reported again by `speedlab report`, and checked by
scripts/python_lines_check.py against its program's marked lines, its NVTX ranges and the
blocked times the program measured itself; then what each case is there to show: the
autograd engine's kernels given to the backward line (inferred), the compiled model's graph
replays given to the forward line.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def line_of(results, script, marker):
    with open(script, encoding="utf-8") as f:
        number = next(i for i, t in enumerate(f, 1) if f"# LINE:{marker}" in t)
    lines = results["program"]["python_lines"]["lines"]
    return next(l for l in lines if l["file"].endswith("/" + os.path.basename(script)) and l["line"] == number)


def main(argv):
    speedlab, fixtures, checker = argv[1:4]
    cases = sorted(d for d in os.listdir(fixtures) if os.path.isdir(os.path.join(fixtures, d)))
    if not cases:
        print("no recorded case under", fixtures)
        return 1
    failed = 0
    for case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, case)
            shutil.copytree(os.path.join(fixtures, case), folder)
            run = subprocess.run([speedlab, "report", folder, "-q"], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"{case}: speedlab report exited {run.returncode}: {run.stderr.strip()}")
                failed += 1
                continue
            script = next(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py"))
            check = subprocess.run([sys.executable, checker, os.path.join(folder, "results.json"), script,
                                    os.path.join(folder, "truth.json")], capture_output=True, text=True)
            print(f"== {case}\n{check.stdout}{check.stderr}", end="")
            failed += check.returncode != 0
            with open(os.path.join(folder, "results.json"), encoding="utf-8") as f:
                results = json.load(f)
            if case == "torch":
                backward = line_of(results, script, "backward")
                if not backward["inferred_calls"] > 0 or not backward["kernels"] > 0:
                    print("torch: the backward line got no kernels of the autograd engine's threads")
                    failed += 1
            if case == "torch_graphs":
                forward = line_of(results, script, "forward")
                if not forward["graph_launches"] > 0 or not forward["kernels"] > forward["graph_launches"]:
                    print("torch_graphs: the forward line got no graph replay with its kernels")
                    failed += 1
    print(f"{len(cases)} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
