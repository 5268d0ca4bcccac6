#!/usr/bin/env bash
# The sanitizer pass CI runs after scripts/test.sh: a clang build with ASan+UBSan and the
# libFuzzer targets (no CUDA: CI has no GPU), then
#   1. the unit tests (CTest label "unit"),
#   2. a fuzz smoke: each fuzz target for SPEEDLAB_FUZZ_SMOKE_S seconds (default 12; 6 targets),
#   3. the bad-input table's cases against this build (no sanitizer report allowed).
# Only speedlab, the unit-test binary, the test plugins and the fuzz targets are built.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SPEEDLAB_SANITIZE_BUILD:-build-asan}
jobs=$(nproc 2>/dev/null || echo 2)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

start=$(date +%s)
# -O1 with line tables only: sanitizer reports name file:line, and the build stays short.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DSPEEDLAB_ENABLE_SANITIZERS=ON -DSPEEDLAB_ENABLE_FUZZING=ON \
  -DSPEEDLAB_ENABLE_CUDA=OFF -DSPEEDLAB_ENABLE_GPU_TESTING=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target speedlab speedlab_tests fuzz_suite fuzz_sweep fuzz_plan fuzz_results fuzz_trace fuzz_stream
built=$(date +%s)
echo "sanitize: build took $((built - start)) s"

# handle_segv=0: a deliberately crashing variant (the isolation tests) must die of SIGSEGV as
# it does without the sanitizer, not of ASan's abort.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:handle_segv=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# bad_inputs runs below against this build; doc_numbers and man_pages check the docs and the
# pages this build does not make (only the targets above), and ran in
# scripts/test.sh (its default-suite run would only be slower here).
ctest --test-dir "$build" -L unit -E "bad_inputs|doc_numbers|man_pages" --output-on-failure -j "$jobs"
tested=$(date +%s)
echo "sanitize: unit tests took $((tested - built)) s"

SPEEDLAB_FUZZ_BUILD=$build scripts/fuzz.sh "${SPEEDLAB_FUZZ_SMOKE_S:-12}"
fuzzed=$(date +%s)
echo "sanitize: fuzz smoke took $((fuzzed - tested)) s"

python3 scripts/bad_inputs.py --speedlab "$build/speedlab" -j "$jobs"
echo "sanitize: bad inputs took $(($(date +%s) - fuzzed)) s; all $(($(date +%s) - start)) s"
