#!/usr/bin/env bash
# Measures `speedlab compare` on real, noisy CPU runs (docs/reports.md, "speedlab compare"):
#  1. PAIRS self-comparisons: two independent runs of the same short CPU suite each time;
#     a false alarm is a comparison that exits 1 (a "slower" verdict where nothing changed).
#  2. A run against itself: every point "same", exit 0.
#  3. A copy of a run with one variant's samples scaled by 1.2 (20% slower on purpose),
#     against the original and against an independent run: that variant "slower", exit 1.
# Usage: scripts/bench/compare_false_alarms.sh BUILD_DIR [PAIRS=20] [THRESHOLD=10]
set -euo pipefail
build=${1:?build dir}; pairs=${2:-20}; threshold=${3:-10}
speedlab="$build/speedlab"
suite="$(dirname "$0")/compare-noise.yaml"
work=${KEEP_DIR:-$(mktemp -d)}; [ -n "${KEEP_DIR:-}" ] || trap 'rm -rf "$work"' EXIT; mkdir -p "$work"
run() { "$speedlab" run "$suite" --reports json --out "$1" >/dev/null 2>&1; }
verdicts() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(p["verdict"] for p in d["points"]))' "$1"; }

start=$(date +%s)
alarms=0; slower_points=0; faster_points=0; unclear_points=0; same_points=0; total_points=0
for i in $(seq 1 "$pairs"); do
  run "$work/a$i"; run "$work/b$i"
  set +e; "$speedlab" compare "$work/a$i" "$work/b$i" --threshold "$threshold" --format json --out "$work/c$i" >/dev/null 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && alarms=$((alarms + 1))
  [ "$rc" -gt 1 ] && { echo "compare failed with exit $rc"; exit 2; }
  v=$(verdicts "$work/c$i/compare.json")
  for x in $v; do
    total_points=$((total_points + 1))
    case $x in slower) slower_points=$((slower_points + 1));; faster) faster_points=$((faster_points + 1));;
      unclear) unclear_points=$((unclear_points + 1));; same) same_points=$((same_points + 1));; esac
  done
  echo "pair $i: exit $rc: $v"
done
echo "self-comparisons: $pairs, false alarms (exit 1): $alarms; points: $total_points ($same_points same, $unclear_points unclear, $slower_points slower, $faster_points faster); threshold $threshold%; $(( $(date +%s) - start )) s"

# A run against itself.
set +e; "$speedlab" compare "$work/a1" "$work/a1" --format json --out "$work/self" >/dev/null 2>&1; rc=$?; set -e
echo "a run against itself: exit $rc: $(verdicts "$work/self/compare.json")"

# One variant 20% slower on purpose: its samples and summary scaled by 1.2 in a copy.
slow() {
  cp -r "$1" "$2"
  python3 - "$2/results.jsonl" <<'PY'
import json, sys
path = sys.argv[1]
out = []
for line in open(path):
    p = json.loads(line)
    if p["workload"] == "vector" and p["variant"] == "threads":
        p["samples_ns"] = [s * 1.2 for s in p["samples_ns"]]
        for k in ("median", "mean", "stddev", "min", "max", "q1", "q3", "ci_low", "ci_high"):
            p["wall"][k] *= 1.2
    out.append(json.dumps(p))
open(path, "w").write("\n".join(out) + "\n")
PY
}
slow "$work/a1" "$work/a1-slow"
set +e; "$speedlab" compare "$work/a1" "$work/a1-slow" --format json,md --out "$work/slow1" >/dev/null 2>&1; rc=$?; set -e
echo "run vs its copy with vector/threads x1.2: exit $rc"
python3 -c 'import json,sys; [print("  ", p["id"], p["verdict"], round(p["ratio"],3)) for p in json.load(open(sys.argv[1]))["points"]]' "$work/slow1/compare.json"
slow "$work/b1" "$work/b1-slow"
set +e; "$speedlab" compare "$work/a1" "$work/b1-slow" --format json --out "$work/slow2" >/dev/null 2>&1; rc=$?; set -e
echo "run vs an independent run with vector/threads x1.2: exit $rc"
python3 -c 'import json,sys; [print("  ", p["id"], p["verdict"], round(p["ratio"],3)) for p in json.load(open(sys.argv[1]))["points"]]' "$work/slow2/compare.json"
