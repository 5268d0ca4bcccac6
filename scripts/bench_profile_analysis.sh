#!/usr/bin/env bash
# Scale benchmark of the program analysis (issue 12): builds tests/bench, writes a synthetic
# profile of RECORDS activity records as stream files (binary records chunks, as the
# injection library writes them) once in 1 process and once spread over 8, then analyses
# each folder RUNS times (analysis::analyze_stream_folder: from the files to the findings)
# and prints each run's wall and CPU time and peak RSS (the bench's getrusage and
# /usr/bin/time -v) and their medians. Not a test: run it on an otherwise idle machine.
#   scripts/bench_profile_analysis.sh [BUILD_DIR] [RECORDS] [RUNS] [EXTRA...]
# EXTRA goes to both steps: `--json` writes JSON chunks and `--whole` reads every process
# whole before analysing it (the way before streaming), for a before/after comparison.
set -euo pipefail
build=${1:-build}
records=${2:-10000000}
runs=${3:-3}
shift $(($# < 3 ? $# : 3))
write_extra=() analyze_extra=()
for a in "$@"; do
  case $a in
  --json) write_extra+=("$a") ;;
  --whole) analyze_extra+=("$a") ;;
  *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done
cmake --build "$build" --target speedlab_bench_program_analysis >/dev/null
bench="$build/tests/speedlab_bench_program_analysis"
work=$(mktemp -d "${TMPDIR:-/tmp}/speedlab-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
for processes in 1 8; do
  dir=$work/p$processes
  echo "== $records records, $processes process(es) ${write_extra[*]} ${analyze_extra[*]}"
  "$bench" write "$dir" --records "$records" --processes "$processes" "${write_extra[@]}"
  walls=() rss=() cpus=()
  for ((r = 1; r <= runs; r++)); do
    out=$(/usr/bin/time -v "$bench" analyze "$dir" "${analyze_extra[@]}" 2>&1)
    wall=$(awk '/^analyze_s/ {print $2}' <<<"$out")
    cpu=$(awk '/^analyze_cpu_s/ {print $2}' <<<"$out")
    peak=$(awk '/Maximum resident/ {printf "%.0f", $6 / 1024}' <<<"$out")
    echo "run $r: analyze_s $wall  analyze_cpu_s $cpu  peak_rss_mib $peak  ($(grep -E '^records|^kernels' <<<"$out" | tr '\n' ' '))"
    walls+=("$wall") cpus+=("$cpu") rss+=("$peak")
  done
  echo "median of $runs: analyze_s $(printf '%s\n' "${walls[@]}" | median)  analyze_cpu_s $(printf '%s\n' "${cpus[@]}" | median)  peak_rss_mib $(printf '%s\n' "${rss[@]}" | median)"
  rm -rf "$dir"
done
