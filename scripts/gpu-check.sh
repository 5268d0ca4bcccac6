#!/usr/bin/env bash
# On the GPU machine (device tool), over a working tree with .device-carry/ carried:
#   bash scripts/gpu-check.sh [stage ...]      stages: info tests calibrate suite sweep crossover lesson sanitize
#                                                      overhead nsys peers fixtures (default: all)
# Writes logs and reports under $OUT (or ./gpu-out) and prints a short table last.
# Build first on the development machine with scripts/gpu-prepare.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="$root/.device-carry"
out="${OUT:-$root/gpu-out}"
work="/tmp/speedlab-gpu"     # full results; packed into $OUT at the end (few files come back)
mkdir -p "$out" "$work/logs"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"
export SPEEDLAB_CACHE_DIR="$work/cache"
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
speedlab="$bin/speedlab"
# The test binaries were compiled with the build folder's absolute path: make it exist here.
if [[ -f "$bin/build-path" ]]; then
  build_path=$(cat "$bin/build-path")
  if [[ ! -e "$build_path/speedlab" ]]; then mkdir -p "$(dirname "$build_path")" && ln -sfn "$bin" "$build_path"; fi
fi
stages=("$@")
((${#stages[@]})) || stages=(info tests calibrate suite sweep crossover lesson sanitize overhead nsys peers fixtures)
summary="$work/summary.txt"
: >"$summary"
: >"$out/summary.txt"
note() { echo "$*" | tee -a "$summary" "$out/summary.txt"; }
has() { [[ " ${stages[*]} " == *" $1 "* ]]; }
t0=$(date +%s)

if has info; then
  nvidia-smi >"$work/logs/nvidia-smi.txt" 2>&1
  note "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null)"
  note "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
fi

if has tests; then
  "$bin/speedlab_gpu_tests" >"$work/logs/gpu-tests.txt" 2>&1
  note "gpu tests: exit $? ($(tail -2 "$work/logs/gpu-tests.txt" | tr '\n' ' '))"
  # The whole unit suite on the GPU machine too: plugin tests run their CUDA variants there.
  ( cd "$bin" && ./speedlab_tests >"$work/logs/unit-tests.txt" 2>&1 )
  note "unit tests: exit $? ($(tail -3 "$work/logs/unit-tests.txt" | tr '\n' ' '))"
fi

if has calibrate; then
  "$speedlab" calibrate --full >"$work/logs/calibrate.txt" 2>&1
  note "calibrate: exit $?"
  cat "$work/logs/calibrate.txt" >>"$summary"
fi

if has suite; then
  /usr/bin/time -v "$speedlab" run suites/gpu-lessons.yaml --out "$work/suite" >"$work/logs/suite.txt" 2>"$work/logs/suite.err"
  note "lesson suite: exit $? (see suite/report.md)"
fi

if has sweep; then
  "$speedlab" run suites/gpu-sweep.yaml --out "$work/sweep" >"$work/logs/sweep.txt" 2>"$work/logs/sweep.err"
  note "sweep suite: exit $?"
  "$speedlab" analyze "$work/sweep" >"$work/logs/sweep-analyze.txt" 2>&1
  grep '^crossover' "$work/logs/sweep-analyze.txt" | grep -v ' none' | head -40 >>"$summary"
fi

if has crossover; then
  # Predicted crossovers checked by measuring at half and twice the predicted size.
  python3 scripts/check_crossover.py "$speedlab" "$work/sweep" "$work/crossover" >"$work/logs/crossover-check.txt" 2>&1
  note "crossover check: exit $?"
  cat "$work/logs/crossover-check.txt" >>"$summary"
fi

if has lesson; then
  # One lesson with every report and trace format, for docs/results and the screenshot.
  "$speedlab" run --workload vector --param op=mul --out "$work/lesson-vector" >"$work/logs/lesson-vector.txt" 2>&1
  note "lesson vector: exit $?"
fi

if has sanitize; then
  # memcheck and racecheck over every CUDA variant at a small size that is not a multiple of
  # any block or tile (in-process, no CUPTI: the sanitizer is the only tool attached). Six at
  # a time; each bounded by a timeout.
  "$speedlab" list --json 2>/dev/null | python3 -c '
import json,sys
small = {"vector": "n=100003", "reduction": "n=100003", "montecarlo": "M=100003", "montecarlo_pi": "M=100003",
         "transcendental": "n=10007", "histogram": "n=100003", "convolution": "size=131", "transpose": "size=133",
         "mandelbrot": "size=67"}
for w in json.load(sys.stdin)["workloads"]:
    for v in w["variants"]:
        if v["kind"] == "cuda":
            for tool in ("memcheck", "racecheck"):
                print(tool, w["name"], v["name"], small.get(w["name"], ""))' >"$work/sanitize-jobs.txt"
  mkdir -p "$work/sanitize"
  export speedlab work
  xargs -P 6 -L 1 bash -c '
    tool=$0 w=$1 v=$2 p=$3; log="$work/sanitize/$w-$v-$tool.txt"
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 "$speedlab" run --workload "$w" --variant "$v" \
      ${p:+--param $p} --no-isolate --profilers host --reports json --calibrate off --max-samples 2 --min-samples 1 \
      --warmup 0 --out "$work/sanitize/out-$w-$v-$tool" >"$log" 2>&1
    echo "sanitize $tool $w/$v: exit $? $(grep -Eo "(ERROR|RACECHECK) SUMMARY: [0-9]+ (error|hazard)[s]?" "$log" | tail -1)"' \
    <"$work/sanitize-jobs.txt" | sort | tee -a "$summary" "$out/summary.txt" >/dev/null
  note "sanitize: $(grep -c ': exit 0 ' "$summary") of $(wc -l <"$work/sanitize-jobs.txt") runs with 0 errors"
fi

if has overhead; then
  # Same fixed work each time; alternate the modes and take the median of three walls each.
  for round in 1 2 3; do
    for mode in host host,cupti; do
      s=$(date +%s.%N)
      "$speedlab" run suites/gpu-overhead.yaml --profilers "$mode" --out "$work/overhead-${mode/,/-}" \
        >"$work/logs/overhead-${mode/,/-}-$round.txt" 2>&1
      e=$(date +%s.%N)
      echo "$mode $(python3 -c "print($e-$s)")" >>"$work/overhead-walls.txt"
    done
  done
  python3 - "$work/overhead-walls.txt" <<'PY' | tee -a "$summary"
import statistics, sys
walls = {}
for line in open(sys.argv[1]):
    mode, wall = line.split()
    walls.setdefault(mode, []).append(float(wall))
base, traced = statistics.median(walls["host"]), statistics.median(walls["host,cupti"])
print(f"overhead suite wall (median of {len(walls['host'])}): host {base:.2f} s, host+cupti {traced:.2f} s, "
      f"tracing overhead {100 * (traced / base - 1):+.1f}%")
PY
  if [[ -x "$bin/speedlab_launch_storm" ]]; then
    "$bin/speedlab_launch_storm" >"$work/logs/launch-storm.txt" 2>&1
    note "launch storm: $(tail -3 "$work/logs/launch-storm.txt" | tr '\n' ' ')"
  fi
fi

if has nsys && [[ -x $NSYS ]]; then
  db="$work/suite/trace.sqlite"
  if [[ -f $db ]]; then
    for r in cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum cuda_api_sum nvtx_sum cuda_gpu_trace; do
      "$NSYS" stats -q -r "$r" -f csv -o "$work/nsys-$r" "$db" >"$work/logs/nsys-stats-$r.txt" 2>&1
      note "nsys stats $r: exit $?"
    done
    "$NSYS" analyze "$db" >"$work/logs/nsys-analyze.txt" 2>&1
    note "nsys analyze: exit $?"
    # nsys's own totals vs speedlab's, to the nanosecond (exit 1 on any mismatch).
    python3 reports/nsys_sqlite/nsys_totals.py "$db" --nsys "$NSYS" >"$work/logs/nsys-totals.txt" 2>&1
    note "nsys totals vs speedlab: exit $?"
    tail -15 "$work/logs/nsys-totals.txt" >>"$summary"
  fi
  if [[ -x "$bin/speedlab_launch_storm" ]]; then
    s=$(date +%s.%N)
    "$NSYS" profile -t cuda,nvtx -o "$work/storm-nsys" --force-overwrite true "$bin/speedlab_launch_storm" --no-cupti \
      >"$work/logs/launch-storm-nsys.txt" 2>&1
    e=$(date +%s.%N)
    note "launch storm under nsys profile: exit $? wall $(python3 -c "print(f'{$e-$s:.2f} s')"); $(grep -h '{' "$work/logs/launch-storm-nsys.txt" | tail -1)"
  fi
fi

if has peers; then
  for f in scripts/peers/*.py; do
    [[ -f $f ]] || continue
    PYTHONUNBUFFERED=1 timeout 240 python3 "$f" >"$work/logs/peers-$(basename "$f" .py).jsonl" 2>"$work/logs/peers-$(basename "$f" .py).err"
    note "peers $(basename "$f"): exit $? ($(wc -l <"$work/logs/peers-$(basename "$f" .py).jsonl") lines)"
  done
fi

if has fixtures; then
  # Real recorded data for the CPU-side tests (tests/fixtures/gpu): small on purpose.
  # suite: vector, reduction and histogram points with their traces; sweep: results only.
  f="$work/fixtures"
  mkdir -p "$f/suite/traces" "$f/sweep"
  if [[ -d "$work/suite" ]]; then
    cp "$work/suite/run.json" "$work/suite/device.json" "$f/suite/" 2>/dev/null
    grep -E '"workload":"(vector|reduction|histogram)"' "$work/suite/results.jsonl" >"$f/suite/results.jsonl"
    python3 -c '
import json, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
for line in open(dst + "/results.jsonl"):
    t = json.loads(line).get("trace_file")
    if t: shutil.copy(src + "/" + t, dst + "/" + t)' "$work/suite" "$f/suite"
  fi
  if [[ -d "$work/sweep" ]]; then
    cp "$work/sweep/run.json" "$work/sweep/device.json" "$work/sweep/results.jsonl" "$f/sweep/" 2>/dev/null
  fi
  tar -C "$work" -czf "$out/fixtures.tar.gz" fixtures
  note "fixtures: $(du -sh "$f" | cut -f1) ($(du -h "$out/fixtures.tar.gz" | cut -f1) packed)"
fi

note "elapsed: $(( $(date +%s) - t0 )) s"
# Few files come back (8, 16 MiB each): logs and reports packed; traces and sqlite only of
# the one-lesson run.
tar -C "$work" -czf "$out/logs.tar.gz" logs summary.txt 2>/dev/null
tar -C "$work" -czf "$out/reports.tar.gz" --exclude='traces' --exclude='*.sqlite' --exclude='trace.json' \
  $(cd "$work" && ls -d suite sweep crossover 2>/dev/null) 2>/dev/null
[[ -d "$work/lesson-vector" ]] && tar -C "$work" -czf "$out/lesson-vector.tar.gz" lesson-vector
[[ -f "$work/suite/report.md" ]] && cp "$work/suite/report.md" "$out/report.md"
ls -la "$out"
echo "================ summary"
cat "$summary"
