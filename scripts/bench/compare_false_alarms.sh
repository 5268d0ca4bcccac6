#!/usr/bin/env bash
# Measures `speedlab compare` on real, noisy CPU runs (docs/reports.md, "speedlab compare"):
#  1. PAIRS self-comparisons: two independent runs (A, B) of the same short CPU suite each
#     time; a false alarm is a comparison that exits 1 (a "slower" verdict where nothing changed).
#  2. Power: the same pairs with one variant made 10% slower on purpose (its samples, per
#     round, and its summary scaled by 1.1 in a copy of B): a hit is a comparison that exits
#     1 naming that variant slower.
#     Exit 3 (compare could not decide: every point unclear) is neither; it is counted apart.
#  3. The suite's run time: every run is timed; with BEFORE_ROUNDS set (e.g. 1: one process
#     per point, as runs were measured before rounds), one more run per pair with --rounds
#     BEFORE_ROUNDS is timed, between the others so that both see the same load.
#  4. A run against itself: every point "same", exit 0.
# With INTERLEAVE=1 each pair is one interleaved command instead of two runs:
#   `speedlab compare --base-plugins P --new-plugins P SUITE --out i<N>` with P = BUILD_DIR/plugins
#   on both sides (a self-comparison: its exit code is the false alarm), its NEW side then
#   slowed as above and compared with its BASE side (paired, same interleave_id) for power;
#   with BEFORE_ROUNDS, two sequential runs with --rounds BEFORE_ROUNDS are timed per pair (what
#   a gate ran before: main's run, then the PR's).
# Usage: scripts/bench/compare_false_alarms.sh BUILD_DIR [PAIRS=20] [THRESHOLD=compare's default]
# Environment: CMDLINE (the runs select on the command line instead of the suite file, e.g.
#   "--workload vector --workload reduction --variant serial --variant threads --param n=2^16..2^20:2":
#   a command-line suite at its default rounds), INTERLEAVE (1: see above), MEASURE_ARGS (interleaved: more options for the command,
#   e.g. "--min-time 0.5 --max-time 2"; the BEFORE_ROUNDS runs keep the suite's budget), ROUNDS (default: the suite's; interleaved: compare's), SLOW=workload/variant (default vector/threads),
#   FACTOR (default 1.1), BEFORE_ROUNDS (unset: no timing runs), KEEP_DIR (keep the runs there),
#   REUSE_DIR (a KEEP_DIR of an earlier benchmark: re-compare its runs a1..aN / b1..bN without
#   running the suite again, e.g. after a change to compare; its files are only read, the new
#   comparisons and slowed copies go to a temporary folder; no run times are printed).
set -euo pipefail
build=${1:?build dir}; pairs=${2:-20}; threshold=${3:-}
speedlab="$build/speedlab"
suite="$(dirname "$0")/compare-noise.yaml"
# What is measured: the suite file, or the selection in CMDLINE (word-split on purpose).
if [ -n "${CMDLINE:-}" ]; then read -r -a what <<<"$CMDLINE"; else what=("$suite"); fi
slow_variant=${SLOW:-vector/threads}; factor=${FACTOR:-1.1}
work=${KEEP_DIR:-$(mktemp -d)}; [ -n "${KEEP_DIR:-}" ] || trap 'rm -rf "$work"' EXIT; mkdir -p "$work"
runs=$work # where a<i>, b<i> are; with REUSE_DIR the kept runs, read only
if [ -n "${REUSE_DIR:-}" ]; then
  [ -n "${KEEP_DIR:-}" ] && { echo "REUSE_DIR and KEEP_DIR together: the re-comparisons go to a temporary folder" >&2; exit 2; }
  runs=$REUSE_DIR
  for i in $(seq 1 "$pairs"); do
    [ -f "$runs/a$i/results.jsonl" ] && [ -f "$runs/b$i/results.jsonl" ] || { echo "REUSE_DIR $runs: no run a$i/b$i (results.jsonl)" >&2; exit 2; }
  done
fi
rounds_arg=(); [ -n "${ROUNDS:-}" ] && rounds_arg=(--rounds "$ROUNDS")
threshold_arg=(); [ -n "$threshold" ] && threshold_arg=(--threshold "$threshold")
run_times=(); before_times=()
run() { # run DIR [extra args]: one suite run, its seconds in $last_time
  local t0; t0=$(date +%s.%N)
  "$speedlab" run "${what[@]}" --reports json --out "$@" >/dev/null 2>&1 || { echo "run $1 failed"; exit 2; }
  last_time=$(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.3f}')" "$t0")
}
compare() { # compare BASE NEW OUT: prints the exit code
  set +e; "$speedlab" compare "$1" "$2" "${threshold_arg[@]}" --format json,md --out "$3" >/dev/null 2>&1; local rc=$?; set -e
  { [ "$rc" -eq 2 ] || [ "$rc" -gt 3 ]; } && { echo "compare $1 $2 failed with exit $rc" >&2; exit 2; }
  echo "$rc"
}
# The largest change either way in the self-comparisons (what one_round_allowance is read from).
largest() {
  python3 - "$@" <<'PY'
import json, math, sys
worst = (1.0, "-", "-")
for f in sys.argv[1:]:
    for p in json.load(open(f))["points"]:
        r = p.get("ratio") or 0
        if r > 0 and abs(math.log(r)) > abs(math.log(worst[0])): worst = (r, p["id"], f)
print(f"largest change in a self-comparison: x{max(worst[0], 1 / worst[0]):.3f} (NEW / BASE {worst[0]:.3f}, {worst[1]}, {worst[2]})")
PY
}
verdicts() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(p["verdict"] for p in d["points"]))' "$1"; }
slower_ids() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(p["id"] for p in d["points"] if p["verdict"]=="slower") or "-")' "$1"; }
# A copy of a run with one variant's samples (every round's) and summary scaled by FACTOR.
slow() {
  cp -r "$1" "$2"
  python3 - "$2/results.jsonl" "$slow_variant" "$factor" <<'PY'
import json, sys
path, variant, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
workload, name = variant.split("/")
out = []
for line in open(path):
    p = json.loads(line)
    if p["workload"] == workload and p["variant"] == name:
        p["samples_ns"] = [s * factor for s in p["samples_ns"]]  # sample_rounds stays parallel
        for k in ("median", "mean", "stddev", "min", "max", "q1", "q3", "ci_low", "ci_high"):
            p["wall"][k] *= factor
    out.append(json.dumps(p))
open(path, "w").write("\n".join(out) + "\n")
PY
}

interleaved() { # one interleaved self-comparison per pair, then its NEW side slowed
  local start alarms=0 undecided=0 hits=0 i rc src v named t0 before0; start=$(date +%s)
  for i in $(seq 1 "$pairs"); do
    t0=$(date +%s.%N)
    set +e; "$speedlab" compare "${what[@]}" --base-plugins "$build/plugins" --new-plugins "$build/plugins" \
      --out "$work/i$i" --reports json --format json,md "${rounds_arg[@]}" "${threshold_arg[@]}" ${MEASURE_ARGS:-} \
      >/dev/null 2>"$work/i$i.log"
    rc=$?; set -e
    { [ "$rc" -eq 2 ] || [ "$rc" -gt 3 ]; } && { echo "interleaved pair $i failed with exit $rc:"; cat "$work/i$i.log"; exit 2; }
    run_times+=("$(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.3f}')" "$t0")")
    if [ -n "${BEFORE_ROUNDS:-}" ]; then # main's run, then the PR's: what a gate did before
      before0=$(date +%s.%N)
      run "$work/before$i-a" --rounds "$BEFORE_ROUNDS"; run "$work/before$i-b" --rounds "$BEFORE_ROUNDS"
      before_times+=("$(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.3f}')" "$before0")")
    fi
    [ "$rc" -eq 1 ] && alarms=$((alarms + 1))
    [ "$rc" -eq 3 ] && undecided=$((undecided + 1))
    v=$(verdicts "$work/i$i/compare.json")
    slow "$work/i$i/new" "$work/i$i/new-slow"
    src=$(compare "$work/i$i/base" "$work/i$i/new-slow" "$work/s$i")
    named=$(slower_ids "$work/s$i/compare.json")
    [ "$src" -eq 1 ] && [[ " $named" == *" $slow_variant/"* ]] && hits=$((hits + 1))
    echo "pair $i: interleaved self exit $rc: $v | $slow_variant x$factor: exit $src, slower: $named"
  done
  echo "interleaved self-comparisons: $pairs, false alarms (exit 1): $alarms, could not decide (exit 3): $undecided"
  largest "$work"/i*/compare.json
  echo "$slow_variant x$factor, NEW side of the same command: $hits of $pairs exit 1 naming it"
  echo "threshold: ${threshold:-default}; rounds: ${ROUNDS:-compare default}; options: ${MEASURE_ARGS:-none}; $(( $(date +%s) - start )) s"
  python3 -c 'import statistics,sys; t=[float(x) for x in sys.argv[1:]]; print(f"interleaved command time: median {statistics.median(t):.2f} s (min {min(t):.2f}, max {max(t):.2f}) over {len(t)} commands")' "${run_times[@]}"
  if [ -n "${BEFORE_ROUNDS:-}" ]; then
    python3 -c 'import statistics,sys; t=[float(x) for x in sys.argv[2:]]; print(f"two sequential runs with --rounds {sys.argv[1]}: median {statistics.median(t):.2f} s (min {min(t):.2f}, max {max(t):.2f}) over {len(t)} pairs")' "$BEFORE_ROUNDS" "${before_times[@]}"
    python3 -c 'import statistics,sys; n=len(sys.argv)//2; a=[float(x) for x in sys.argv[1:n+1]]; b=[float(x) for x in sys.argv[n+1:]]; print(f"ratio of medians (interleaved / two sequential runs): {statistics.median(a)/statistics.median(b):.2f}x")' "${run_times[@]}" "${before_times[@]}"
  fi
}
if [ -n "${INTERLEAVE:-}" ]; then
  [ -n "${REUSE_DIR:-}" ] && { echo "INTERLEAVE and REUSE_DIR together are not offered" >&2; exit 2; }
  interleaved; exit 0
fi

start=$(date +%s)
alarms=0; undecided=0; hits=0; total_points=0; declare -A count=()
for i in $(seq 1 "$pairs"); do
  if [ -z "${REUSE_DIR:-}" ]; then
    run "$work/a$i" "${rounds_arg[@]}"; run_times+=("$last_time")
    run "$work/b$i" "${rounds_arg[@]}"; run_times+=("$last_time")
    # Timing runs as before rounds, between the others so both see the same load.
    if [ -n "${BEFORE_ROUNDS:-}" ] && [ -z "${REUSE_DIR:-}" ]; then run "$work/before$i" --rounds "$BEFORE_ROUNDS"; before_times+=("$last_time"); fi
  fi
  rc=$(compare "$runs/a$i" "$runs/b$i" "$work/c$i")
  [ "$rc" -eq 1 ] && alarms=$((alarms + 1))
  [ "$rc" -eq 3 ] && undecided=$((undecided + 1))
  v=$(verdicts "$work/c$i/compare.json")
  for x in $v; do total_points=$((total_points + 1)); count[$x]=$(( ${count[$x]:-0} + 1 )); done
  rm -rf "$work/b$i-slow"; slow "$runs/b$i" "$work/b$i-slow"
  src=$(compare "$runs/a$i" "$work/b$i-slow" "$work/s$i")
  named=$(slower_ids "$work/s$i/compare.json")
  [ "$src" -eq 1 ] && [[ " $named" == *" $slow_variant/"* ]] && hits=$((hits + 1))
  echo "pair $i: self exit $rc: $v | $slow_variant x$factor: exit $src, slower: $named"
done
summary=""; for k in "${!count[@]}"; do summary+="${count[$k]} $k, "; done
echo "self-comparisons: $pairs, false alarms (exit 1): $alarms, could not decide (exit 3): $undecided; points: $total_points (${summary%, })"
largest "$work"/c*/compare.json
echo "$slow_variant x$factor against an independent run: $hits of $pairs exit 1 naming it"
echo "threshold: ${threshold:-default}; rounds: ${ROUNDS:-suite default}; $(( $(date +%s) - start )) s${REUSE_DIR:+; runs reused from $REUSE_DIR}"
[ -n "${REUSE_DIR:-}" ] || python3 -c 'import statistics,sys; t=[float(x) for x in sys.argv[1:]]; print(f"suite run time: median {statistics.median(t):.2f} s (min {min(t):.2f}, max {max(t):.2f}) over {len(t)} runs")' "${run_times[@]}"

if [ -n "${BEFORE_ROUNDS:-}" ] && [ -z "${REUSE_DIR:-}" ]; then
  python3 -c 'import statistics,sys; t=[float(x) for x in sys.argv[2:]]; print(f"suite run time with --rounds {sys.argv[1]}: median {statistics.median(t):.2f} s (min {min(t):.2f}, max {max(t):.2f}) over {len(t)} runs")' "$BEFORE_ROUNDS" "${before_times[@]}"
fi

rc=$(compare "$runs/a1" "$runs/a1" "$work/self")
echo "a run against itself: exit $rc: $(verdicts "$work/self/compare.json")"
