#!/usr/bin/env python3
"""README's numbers against the real thing (CTest doc_numbers).

    scripts/check_doc_numbers.py --speedlab BUILD/speedlab [--source SRC] [--no-build-steps]

Claims read from README.md, each compared with what this checkout does now:
- "the default suite, N points" (the quick start's table: a build without CUDA), "N in a CUDA
  build" and "measured M of its N points" (the Debian package: a CUDA build): the points of a real run of
  the default suite (each point cut short, one round), counted in its results.jsonl. A build
  without CUDA has no C++ CUDA variant, so the CPU-only count is the run's points less those of
  the C++ CUDA variants `speedlab list --json` names; the CUDA count is checked only where this
  build has CUDA.
- "is N build steps" (the quick start's build today; the measured table beside it keeps the
  count of its day): the steps Ninja plans
  (`ninja -n`) for a fresh configure as scripts/quickstart.sh configures it, without CUDA.
- No shell error text in any docs/*.md, README.md or CONTRIBUTING.md (a generated table once
  kept "integer expression expected" lines of its script).
Exits 1 naming each claim that does not hold, with the real figure and how it was counted.
"""
import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


def run_default_suite(speedlab, work):
    out = work / "default"
    cmd = [speedlab, "run", "--rounds", "1", "--max-time", "0.02", "--min-time", "0", "--min-samples", "3",
           "--max-samples", "5", "--warmup", "0", "--calibrate", "off", "--reports", "json", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    results = out / "results.jsonl"
    if not results.exists():
        sys.exit(f"doc_numbers: the default suite's run wrote no results.jsonl (exit {r.returncode}):\n{r.stderr[-3000:]}")
    points = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    listing = json.loads(subprocess.run([speedlab, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    cpp_cuda = {(w["name"], v["name"]) for w in listing["workloads"] for v in w.get("variants", [])
                if v["kind"] == "cuda" and v.get("language", "c++") != "python"}
    in_cpp_cuda = sum(1 for p in points if (p["workload"], p["variant"]) in cpp_cuda)
    return len(points), len(points) - in_cpp_cuda, bool(cpp_cuda)


def build_steps(source, work):
    """The steps Ninja plans for the quick start's configure (no CUDA, unity batches, no tests)."""
    build = work / "quickstart-build"
    subprocess.run(["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DSPEEDLAB_ENABLE_TESTING=OFF", "-DSPEEDLAB_UNITY_BUILD=ON", "-DSPEEDLAB_ENABLE_CUDA=OFF"],
                   check=True, capture_output=True, text=True)
    plan = subprocess.run(["ninja", "-C", str(build), "-n"], check=True, capture_output=True, text=True).stdout
    # Man pages are made only where help2man is installed, which the quick start's build set
    # (install-deps.sh build) does not install: they are not its steps.
    steps = [line for line in plan.splitlines() if re.match(r"\[\d+/\d+\] ", line)]
    return sum(1 for line in steps if not re.search(r"Generating \S*\.[1-8](\.gz)?$", line))


def shell_errors(source):
    pattern = re.compile(r"integer expression expected|command not found|: line \d+: |syntax error near unexpected")
    found = []
    for doc in [source / "README.md", source / "CONTRIBUTING.md", *sorted((source / "docs").glob("*.md"))]:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if pattern.search(line) and "`" not in line:
                found.append(f"{doc.relative_to(source)}:{n}: {line.strip()[:120]}")
    return found


def claims(readme, regex):
    return [int(m.group(1).replace(",", "")) for m in re.finditer(regex, readme)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--speedlab", required=True)
    ap.add_argument("--source", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("--no-build-steps", action="store_true", help="skip the configure that counts build steps")
    a = ap.parse_args()
    source = pathlib.Path(a.source)
    readme = (source / "README.md").read_text()
    problems = shell_errors(source)

    cpu_claims = claims(readme, r"the default suite, ([\d,]+) points")
    cuda_claims = claims(readme, r"measured \d+ of its ([\d,]+) points") + claims(readme, r"([\d,]+) in a CUDA build")
    if not cpu_claims or not cuda_claims:
        problems.append("README.md no longer says 'the default suite, N points' and 'measured M of its N points': "
                        "update this test with it")
    with tempfile.TemporaryDirectory(prefix="speedlab-doc-numbers.") as tmp:
        work = pathlib.Path(tmp)
        total, cpu_only, has_cuda = run_default_suite(a.speedlab, work)
        print(f"default suite: {total} points in this build, {cpu_only} without the C++ CUDA variants")
        for n in cpu_claims:
            if n != cpu_only:
                problems.append(f"README.md: 'the default suite, {n} points' (a build without CUDA): a real run has "
                                f"{cpu_only} such points ({total} in this build, less its C++ CUDA variants' points)")
        for n in cuda_claims:
            if has_cuda and n != total:
                problems.append(f"README.md: 'of its {n} points' (a CUDA build): a real run of this CUDA build has {total}")
        if not has_cuda:
            print("note: this build has no CUDA: the CUDA build's count is not checked here")
        if not a.no_build_steps and shutil.which("ninja"):
            steps = build_steps(source, work)
            print(f"quick start build: {steps} steps (ninja -n after the quick start's configure, without CUDA)")
            # The claims about today's build (not the "123 build steps" of the build before the batches).
            current = claims(readme, r"\bis ([\d,]+) build steps")
            if not current:
                problems.append("README.md no longer says how many build steps the quick start has: update this test")
            for n in current:
                if n != steps:
                    problems.append(f"README.md: '{n} build steps': the quick start's configure plans {steps} "
                                    "(ninja -n; scripts/quickstart.sh's options, no CUDA)")
    for p in problems:
        print("doc_numbers: FALSE: " + p, file=sys.stderr)
    if problems:
        return 1
    print("doc_numbers: README's numbers hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
