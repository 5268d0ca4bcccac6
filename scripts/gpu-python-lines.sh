#!/usr/bin/env bash
# On the GPU machine (device tool): `speedlab profile`'s Python lines (issue 40) against the
# ground-truth programs of examples/python-lines, and what capturing the lines costs.
#   SPEEDLAB_CARRY=$PWD/.device-carry bash .device-carry/scripts/gpu-python-lines.sh [cases|cost ...]
#   cases  each program under speedlab profile (SPEEDLAB_TRUTH: its own perf_counter times
#          around the synchronizing line), checked by scripts/python_lines_check.py; the
#          profile folders (streams and the truth) packed as python-lines-fixtures.tar.gz
#   lessons  the C++ CUDA variants of convolution, histogram, mandelbrot and transpose: all ok
#   cost   scripts/bench/torch_loop.py under speedlab profile with the lines and with
#          --no-python-lines, alternated (order swapped every round), COST_ROUNDS rounds:
#          us per step of each, the paired difference per round, its median and range
#   inproc torch_loop.py --alternate-capture python under speedlab profile, INPROC_PROCS
#          processes of INPROC_BLOCKS pairs of INPROC_STEPS-step blocks: the lines switched on
#          for one block of each pair and off for the other (speedlab_inject_capture), so the
#          capture's cost is paired inside one process
#   runlines the lessons' CuPy and Numba variants under speedlab run with the cupti profiler:
#          each point's Python lines checked by scripts/python_lines_run_check.py
# Writes under $OUT (or ./gpu-out); prints a short table last.
set -uo pipefail
start_dir=$(pwd)
cd "$(dirname "$0")/.."
root=$(pwd)
carry="${SPEEDLAB_CARRY:-.device-carry}"
[[ $carry == /* ]] || carry="$start_dir/$carry"
speedlab="$carry/speedlab"
out="${OUT:-$root/gpu-out}"
work=/tmp/speedlab-pylines
rm -rf "$work"
mkdir -p "$out" "$work/logs"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"
stages=("$@")
((${#stages[@]})) || stages=(cases cost)
has() { [[ " ${stages[*]} " == *" $1 "* ]]; }
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
note "python: $(python3 --version 2>&1); gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

if has cases; then
  while read -r name script env_args; do
    [[ -n $name ]] || continue
    dir="$work/$name"
    env $env_args SPEEDLAB_TRUTH="$work/$name.truth.json" timeout 400 "$speedlab" profile --out "$dir" -- \
      python3 "examples/python-lines/$script" >"$work/logs/$name.txt" 2>&1
    note "case $name: speedlab exit $?"
    cp "$work/$name.truth.json" "$dir/truth.json" 2>/dev/null
    cp "examples/python-lines/$script" "$dir/" # the marked lines, for the CPU test of the fixture
    python3 scripts/python_lines_check.py "$dir/results.json" "examples/python-lines/$script" "$dir/truth.json" \
      >"$work/logs/$name.check.txt" 2>&1
    note "check $name: exit $?"
    sed 's/^/  /' "$work/logs/$name.check.txt" | tee -a "$summary"
  done <<CASES
cupy cupy_lines.py STEPS=40
numba numba_two_lines.py STEPS=50
torch torch_item.py STEPS=30
torch_graphs torch_item.py STEPS=30 COMPILE=1
CASES
  # The streams (and the truth) for the CPU tests: tests/fixtures/python-lines/<case>/.
  (cd "$work" && for d in cupy numba torch torch_graphs; do
     mkdir -p "fixtures/$d" && cp "$d"/*.slstream "$d"/*.py "$d/truth.json" "$d/profile.json" "fixtures/$d/" 2>/dev/null; done
   tar czf "$out/python-lines-fixtures.tar.gz" fixtures)
  note "fixtures: $(du -sh "$out/python-lines-fixtures.tar.gz" | cut -f1)"
fi

if has lessons; then
  # The lessons' C++ CUDA variants written once in plugins/common/cuda_variants.hpp (issue 39's
  # duplicates): each validates its result; every point must be ok.
  # Each workload with each of its CUDA variants (a name a workload lacks is refused: exit 2).
  for w in convolution histogram mandelbrot transpose; do
    for v in cuda-lesson cuda cuda-naive cuda-tuned cuda-cardioid; do
      timeout 120 "$speedlab" run -w "$w" --variant "$v" --no-python --max-samples 5 --max-time 1 --profilers host \
        --reports json --force --out "$work/lessons/$w-$v" >>"$work/logs/lessons.txt" 2>&1
      rc=$?
      ((rc == 2)) || note "lessons: $w/$v: speedlab exit $rc"
    done
  done
  python3 - "$work/lessons" <<'PY' | tee -a "$summary"
import collections, glob, json, sys
points = []
for f in glob.glob(sys.argv[1] + "/*/results.json"):
    try:
        points += json.load(open(f))["points"]
    except (OSError, ValueError, KeyError) as e:
        print("lessons: unreadable", f, e)
by = collections.Counter((p["workload"], p["variant"], p["status"]) for p in points)
for (w, v, s), n in sorted(by.items()):
    print(f"lessons: {w}/{v}: {n} point(s) {s}")
PY
fi

if has cost; then
  rounds=${COST_ROUNDS:-8}
  : >"$work/cost.tsv"
  loop=(python3 scripts/bench/torch_loop.py --steps "${COST_STEPS:-300}" --repeats "${COST_REPEATS:-3}")
  # Every process on the same CPUs (COST_CPUS; empty: unpinned): unpinned, a torch process's
  # step time moved by 25% from one process to the next on a shared VM (profile_overhead.sh).
  pin=()
  [[ -n ${COST_CPUS-2-5} ]] && command -v taskset >/dev/null && pin=(taskset -c "${COST_CPUS-2-5}")
  for ((r = 0; r < rounds; r++)); do
    order=(lines nolines)
    ((r % 2)) && order=(nolines lines)
    for tool in "${order[@]}"; do
      flag=()
      [[ $tool == nolines ]] && flag=(--no-python-lines)
      line=$(timeout 180 "${pin[@]}" "$speedlab" profile "${flag[@]}" --out "$work/cost-$tool-$r" -- "${loop[@]}" 2>"$work/logs/cost-$tool-$r.err" |
        grep '"bench": "torch_loop"' | tail -1)
      us=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["us_per_step"])' "$line" 2>/dev/null || echo nan)
      printf '%s\t%s\t%s\n' "$r" "$tool" "$us" >>"$work/cost.tsv"
    done
  done
  python3 - "$work/cost.tsv" <<'PY' | tee -a "$summary"
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
by = {}
for r, tool, us in rows:
    by.setdefault(int(r), {})[tool] = float(us)
pairs = [(v["lines"], v["nolines"]) for v in by.values() if "lines" in v and "nolines" in v
         and v["lines"] == v["lines"] and v["nolines"] == v["nolines"]]
if not pairs:
    print("cost: no paired rounds"); sys.exit(0)
rel = sorted(100 * (a - b) / b for a, b in pairs)
print(f"cost torch_loop: {len(pairs)} paired rounds; with lines {statistics.median(a for a, _ in pairs):.1f} us/step, "
      f"without {statistics.median(b for _, b in pairs):.1f} us/step; paired difference median {statistics.median(rel):+.1f}% "
      f"(range {rel[0]:+.1f}% .. {rel[-1]:+.1f}%)")
sys.path.insert(0, "scripts")
from paired_interval import median_interval
_, lo, hi = median_interval(rel)
print(f"cost torch_loop: 95% interval of the median difference {lo:+.1f}% .. {hi:+.1f}%" if lo is not None
      else "cost torch_loop: too few rounds for a 95% interval of the median")
PY
  cp "$work/cost.tsv" "$out/" 2>/dev/null
fi
if has inproc; then
  pin=()
  [[ -n ${COST_CPUS-2-5} ]] && command -v taskset >/dev/null && pin=(taskset -c "${COST_CPUS-2-5}")
  : >"$work/inproc.jsonl"
  for ((r = 0; r < ${INPROC_PROCS:-3}; r++)); do
    # --full: every launch's stack (under the light default the windows switch the capture).
    timeout 300 "${pin[@]}" "$speedlab" profile --full --out "$work/inproc-$r" -- python3 scripts/bench/torch_loop.py \
      --alternate-capture python --steps "${INPROC_STEPS:-50}" --blocks "${INPROC_BLOCKS:-40}" \
      2>"$work/logs/inproc-$r.err" | grep '"bench": "torch_loop_alternate"' | tail -1 >>"$work/inproc.jsonl"
    note "inproc process $r: exit ${PIPESTATUS[0]}"
  done
  python3 scripts/paired_interval.py "$work/inproc.jsonl" capture_on_us capture_off_us "inproc torch_loop" --relative |
    tee -a "$summary"
  cp "$work/inproc.jsonl" "$out/" 2>/dev/null
fi

if has runlines; then
  for w in vector reduction; do
    timeout 300 "$speedlab" run -w "$w" --variant py-cupy --variant py-cupy-lesson --variant py-numba-cuda \
      --param n=2^20 --profilers cupti --max-samples 20 --max-time 1 --reports json,markdown,html --force \
      --out "$work/runlines-$w" >"$work/logs/runlines-$w.txt" 2>&1
    note "runlines $w: speedlab exit $?"
    python3 scripts/python_lines_run_check.py "$work/runlines-$w/results.json" 2>&1 | tee -a "$summary"
  done
  (cd "$work" && tar czf "$out/runlines.tar.gz" runlines-*/results.json runlines-*/report*.md runlines-*/report.html)
fi

tar czf "$out/logs.tar.gz" -C "$work" logs 2>/dev/null
echo "================ summary"
cat "$summary"
