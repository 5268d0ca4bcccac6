#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, Debian's clang, ASan+UBSan) into build-asan and runs
# each for SECONDS (default 600), then prints executions and findings per target.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     targets: suite sweep plan results trace stream
# The seed corpus (fuzz/corpus/<target>) is copied, never written; new inputs and findings
# go to build-asan/fuzz-work/<target>/. Exit 1 when any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(suite sweep plan results trace stream)
build=${SPEEDLAB_FUZZ_BUILD:-build-asan}

if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSPEEDLAB_ENABLE_SANITIZERS=ON -DSPEEDLAB_ENABLE_FUZZING=ON -DSPEEDLAB_ENABLE_CUDA=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
total_findings=0
printf '%-8s %12s %9s %s\n' target executions findings "(corpus, log)"
for t in "${targets[@]}"; do
  work=$build/fuzz-work/$t
  # Findings of an earlier run are not this run's: they are cleared (a finding worth keeping
  # goes into fuzz/corpus/<target> as a regression seed).
  rm -rf "$work/corpus" "$work/findings" && mkdir -p "$work/corpus" "$work/findings"
  cp -r "fuzz/corpus/$t/." "$work/corpus/" 2>/dev/null || true
  set +e
  "$build/fuzz/fuzz_$t" "$work/corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$work/findings/" -print_final_stats=1 >"$work/log.txt" 2>&1
  set -e
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/log.txt" | grep -Eo '[0-9]+$' | tail -1)
  findings=$(find "$work/findings" -type f | wc -l)
  total_findings=$((total_findings + findings))
  printf '%-8s %12s %9s %s\n' "$t" "${runs:-?}" "$findings" "($work/corpus, $work/log.txt)"
  if ((findings)); then find "$work/findings" -type f -printf '           finding: %p\n'; fi
done
((total_findings == 0))
