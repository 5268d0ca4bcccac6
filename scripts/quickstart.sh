#!/usr/bin/env bash
# Quick start, command 1: install what running needs, build what it runs (the program, the
# injection library, the plugins; no tests: scripts/test.sh installs and builds those), run
# the default lesson suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# Where the time goes, per phase (README.md's quick start table): wall seconds since the start
# and the CPU time of the finished child processes so far (bash's `times`, second line). The
# background Python install counts in the phase it finishes in (bash reaps it then: the build).
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
phase_done() {
  { times; } >"$times_file" # in this shell: $(times) would run in a subshell with no children
  echo "quickstart: $1 done at ${SECONDS} s; CPU of finished steps so far (user sys): $(tail -1 "$times_file")" >&2
}
scripts/install-deps.sh build
phase_done "installing the build set"
# NumPy and Numba (the py-* variants) are only needed when the suite runs: they download
# and unpack while the compiler works (apt runs one at a time, so after the build set).
# A sudo that would ask for a password cannot do so from the background: then it installs first.
mkdir -p build
python_install=""
if [[ $(id -u) -eq 0 ]] || sudo -n true 2>/dev/null; then
  scripts/install-deps.sh python >build/install-python.log 2>&1 &
  python_install=$!
else
  scripts/install-deps.sh python
fi
# Unity batches: a clean build compiles each batch of sources once (cmake/SpeedlabBuildSpeed.cmake).
# CI's fresh build (scripts/test.sh) compiles source by source, as incremental work and ccache want.
scripts/build.sh -DSPEEDLAB_ENABLE_TESTING=OFF -DSPEEDLAB_UNITY_BUILD=ON
phase_done "configuring and building"
if [[ -n $python_install ]] && ! wait "$python_install"; then
  echo "quickstart: installing NumPy/Numba failed (build/install-python.log); the py-* variants will be skipped:" >&2
  tail -5 build/install-python.log >&2
fi
phase_done "installing NumPy/Numba (in the background)"
# --force: a second quick start replaces the first one's demo results (said on stderr).
./build/speedlab run --force --out speedlab-out
phase_done "the default suite"
echo "quickstart: the program is ./build/speedlab; reports in speedlab-out/ (report.md, report.html)"
