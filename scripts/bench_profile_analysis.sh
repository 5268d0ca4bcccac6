#!/usr/bin/env bash
# Scale benchmark of the program analysis (issue 12): builds tests/bench and analyses a
# synthetic profile of 10 million activity records, once spread over 8 processes (read and
# summarized one at a time) and once as a single process whole in memory; prints the
# analysis wall and CPU time and the peak RSS (getrusage and /usr/bin/time -v). Not a test: run it on an
# otherwise idle machine.
#   scripts/bench_profile_analysis.sh [BUILD_DIR] [RECORDS]
set -euo pipefail
build=${1:-build}
records=${2:-10000000}
cmake --build "$build" --target speedlab_bench_program_analysis >/dev/null
bench="$build/tests/speedlab_bench_program_analysis"
for processes in 8 1; do
  echo "== $records records, $processes process(es)"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "$bench" --records "$records" --processes "$processes" 2>&1 |
      grep -E '^(records|generate_s|analyze_s|analyze_cpu_s|trace_rss_mib|peak_rss_mib|kernels)|Maximum resident|Elapsed \(wall|User time|System time|Percent of CPU'
  else
    "$bench" --records "$records" --processes "$processes"
  fi
done
