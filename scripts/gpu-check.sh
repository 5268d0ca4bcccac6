#!/usr/bin/env bash
# On the GPU machine (device tool), over a working tree with .device-carry/ carried
# (another folder laid out the same way: SPEEDLAB_CARRY=.device-carry-NAME):
#   bash scripts/gpu-check.sh [stage ...]      stages: info tests calibrate suite sweep crossover lesson sanitize
#                                                      overhead storm scaling nsys peers fixtures profile flush python counters
#                                                      counters-sass counters-degrade terminate source profile-source sol
#                                                      overhead-bench overhead-breakdown interleave
#                                                      cost-probe-storm cost-probe-torch cost-probe-parts cost-record cost-ab
#                                                      launch-sampling signals
#                                                      (default: all but overhead-bench and overhead-breakdown,
#                                                      each with its own call: about 8.5 and 5 minutes)
# Writes logs and reports under $OUT (or ./gpu-out) and prints a short table last.
# Build first on the development machine with scripts/gpu-prepare.sh.
# SPEEDLAB_CARRY names the carried folder (default .device-carry; relative to the directory
# the script is started from, else to the tree). A carry made by gpu-prepare.sh holds its
# own scripts/ and suites/: `SPEEDLAB_CARRY=.device-carry-x bash .device-carry-x/scripts/gpu-check.sh`
# runs that tree's stages over its binaries.
set -uo pipefail
start_dir=$(pwd)
cd "$(dirname "$0")/.."
root=$(pwd)
carry="${SPEEDLAB_CARRY:-.device-carry}"
if [[ $carry != /* ]]; then
  if [[ -d "$start_dir/$carry" ]]; then carry="$start_dir/$carry"; else carry="$root/$carry"; fi
fi
bin=$(cd "$carry" 2>/dev/null && pwd) || { echo "gpu-check: no carry folder $carry (SPEEDLAB_CARRY)" >&2; exit 2; }
out="${OUT:-$root/gpu-out}"
work="/tmp/speedlab-gpu"     # full results; packed into $OUT at the end (few files come back)
mkdir -p "$out" "$work/logs"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"
export SPEEDLAB_CACHE_DIR="$work/cache"
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
speedlab="$bin/speedlab"
# The test binaries find speedlab, plugins and fixtures beside themselves (the carry is a
# test root, tests/test_root.hpp): no path to link or rewrite.
stages=("$@")
((${#stages[@]})) || stages=(info tests calibrate suite sweep crossover lesson sanitize overhead storm scaling nsys peers fixtures profile flush python counters-sass counters-degrade counters terminate source profile-source)
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
  # SUITE_TIMEOUT: SIGTERM after that many seconds (speedlab then reports the finished points).
  /usr/bin/time -v timeout "${SUITE_TIMEOUT:-900}" "$speedlab" run suites/gpu-lessons.yaml --force --out "$work/suite" >"$work/logs/suite.txt" 2>"$work/logs/suite.err"
  note "lesson suite: exit $? (see suite/report.md)"
fi

if has interleave; then
  # compare --base-plugins/--new-plugins on CUDA points: both sides of each round in one child,
  # repetition by repetition, under one CUPTI session (docs/reports.md, "speedlab compare").
  # A self-comparison: expect exit 0, every point "paired", each side's CUDA points ok with a
  # time split of their own (kernel > 0) and a device trace in round 1. 8 C++ CUDA points and 4
  # rounds (all of vector and reduction's 48 points at 10 rounds took over 170 s on an H100).
  rm -rf "$work/interleave"
  /usr/bin/time -f "%e s" timeout 150 "$speedlab" compare suites/gpu-lessons.yaml -w vector -w reduction \
    --variant cuda --variant cuda-lesson -p n=4194304 --rounds 4 \
    --base-plugins "$bin/plugins" --new-plugins "$bin/plugins" --out "$work/interleave" --format json,md \
    >"$work/logs/interleave.txt" 2>&1
  note "interleave: exit $? ($(tail -1 "$work/logs/interleave.txt"); $(grep -m1 'speedlab compare:' "$work/logs/interleave.txt"))"
  python3 - "$work/interleave" >>"$work/logs/interleave.txt" 2>&1 <<'PY'
import json, sys, os
out = sys.argv[1]
c = json.load(open(os.path.join(out, "compare.json")))
methods = sorted({p["method"] for p in c["points"]})
print("interleave check: methods", methods, "verdicts", sorted(p["verdict"] for p in c["points"]))
for side in ("base", "new"):
    for line in open(os.path.join(out, side, "results.jsonl")):
        p = json.loads(line)
        if p["kind"] != "cuda":
            continue
        split = p.get("split_median") or {}
        print(f"interleave check: {side} {p['id']}: {p['status']}, rounds {p['rounds']}, samples {len(p['samples_ns'])},"
              f" kernel {split.get('kernel', 0):.0f} ns, h2d {split.get('h2d', 0):.0f} ns, trace {p.get('trace_file', '')!r}")
PY
  grep "interleave check:" "$work/logs/interleave.txt" | head -18 | tee -a "$summary" "$out/summary.txt" >/dev/null
fi

if has python; then
  # The lessons' own Python variants beside the C++ ones (suites/gpu-python.yaml), then the
  # bridge's cost (an empty compute) and the four failure modes (tests/fixtures/python).
  PYTHONPATH=python python3 -c 'from speedlab_variants.compat import import_numba; import numpy, cupy; numba = import_numba()
print("python:", numpy.__version__, numba.__version__, cupy.__version__)' \
    >"$work/logs/python-packages.txt" 2>&1
  note "$(tail -1 "$work/logs/python-packages.txt")"
  # PY_SUITE_TIMEOUT: SIGTERM after that many seconds (speedlab then reports the finished
  # points); PY_SUITE_ARGS: e.g. "-w convolution -w mandelbrot" to run a part of the suite.
  timeout "${PY_SUITE_TIMEOUT:-400}" "$speedlab" run suites/gpu-python.yaml ${PY_SUITE_ARGS:-} --force --out "$work/python" \
    >"$work/logs/python-suite.txt" 2>"$work/logs/python-suite.err"
  note "python lesson suite: exit $? (see python/report.md)"
  timeout 90 "$speedlab" run --force --out "$work/python-bridge" -w vector -p n=1024 -p op=mul --max-time 1 --min-time 0.5 \
    --max-samples 5000 --profilers host --reports markdown,json --calibrate off \
    --python-variants tests/fixtures/python/faulty_variants.py \
    --variant serial --variant py-noop --variant py-numpy --variant py-abort --variant py-raise --variant py-hang --variant py-wrong --timeout 5 \
    >"$work/logs/python-bridge.txt" 2>"$work/logs/python-bridge.err"
  note "python bridge and failures: exit $? (1 expected: four variants fail on purpose)"
  # The same CuPy code as a script under `speedlab profile`: its kernel times against those of
  # the suite's py-cupy points (the Python worker traced through the injection library).
  timeout 60 "$speedlab" profile --force --out "$work/python-profile" -- python3 examples/cupy_vector.py --n 16777216 \
    --calls 50 >"$work/logs/python-profile.txt" 2>&1
  note "python cupy script under speedlab profile: exit $?"
  python3 scripts/python_kernels_check.py "$work/python" "$work/python-profile" vector/py-cupy-lesson/n=16777216 \
    vector/py-cupy/n=16777216 2>&1 | tee -a "$summary" "$out/summary.txt"
  python3 - "$work/python/results.jsonl" "$work/python-bridge/results.jsonl" "$work/python/results.json" <<'PY' | tee -a "$summary" "$out/summary.txt"
import json, statistics, sys
def points(f):
    return [json.loads(l) for l in open(f)]
suite = points(sys.argv[1])
py = [p for p in suite if p.get("language") == "python"]
by = {}
for p in py:
    by.setdefault(p["status"], []).append(p["id"])
print("python points:", {k: len(v) for k, v in by.items()})
for s in ("failed", "invalid", "timeout", "crashed"):
    for i in by.get(s, []):
        print(f"  {s}: {i}: {next(p['reason'] for p in py if p['id'] == i)[:200]}")
for p in py:
    if p["status"] == "skipped":
        print(f"  skipped: {p['id']}: {p['reason'][:120]}")
try:
    a = json.load(open(sys.argv[3])).get("analysis", {})
    for s in a.get("cpp_over_python", []):
        print(f"best C++ over best Python {s['workload']} {s['params_key']}: {s['variant']} vs {s['baseline']}: "
              f"{s['ratio']:.3g}x [{s['ci_low']:.3g}, {s['ci_high']:.3g}] {s['verdict']}")
except OSError as e:
    print("no results.json:", e)
for p in points(sys.argv[2]):
    own = p.get("self_timed_ns", {}).get("python compute")
    extra = ""
    if own and p["status"] == "ok":
        phase = p["phase_median_ns"]["compute"]
        extra = (f" compute {phase / 1e3:.2f} us (speedlab) vs {statistics.median(own) / 1e3:.2f} us (python):"
                 f" bridge {(phase - statistics.median(own)) / 1e3:.2f} us per request; wall median {p['wall']['median'] / 1e3:.2f} us")
    print(f"bridge run {p['variant']}: {p['status']} {p['reason'][:140]}{extra}")
PY
fi

if has sweep; then
  "$speedlab" run suites/gpu-sweep.yaml --force --out "$work/sweep" >"$work/logs/sweep.txt" 2>"$work/logs/sweep.err"
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
  "$speedlab" run --workload vector --param op=mul --self-timing --timeout 30 --force --out "$work/lesson-vector" \
    >"$work/logs/lesson-vector.txt" 2>&1
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
      --warmup 0 --force --out "$work/sanitize/out-$w-$v-$tool" >"$log" 2>&1
    echo "sanitize $tool $w/$v: exit $? $(grep -Eo "(ERROR|RACECHECK) SUMMARY: [0-9]+ (error|hazard)[s]?" "$log" | tail -1)"' \
    <"$work/sanitize-jobs.txt" | sort | tee -a "$summary" "$out/summary.txt" >/dev/null
  note "sanitize: $(grep -c '^sanitize .*: exit 0 ' "$summary") of $(wc -l <"$work/sanitize-jobs.txt") runs with 0 errors (the racy variant is meant to fail racecheck)"
fi

if has overhead; then
  # Same fixed work each time; alternate the modes and take the median of three walls each.
  for round in 1 2 3; do
    for mode in host host,cupti; do
      s=$(date +%s.%N)
      "$speedlab" run suites/gpu-overhead.yaml --profilers "$mode" --force --out "$work/overhead-${mode/,/-}" \
        >"$work/logs/overhead-${mode/,/-}-$round.txt" 2>&1
      e=$(date +%s.%N)
      echo "$mode $(python3 -c "print($e-$s)")" >>"$work/overhead-walls.txt"
      cp "$work/overhead-${mode/,/-}/results.jsonl" "$work/overhead-${mode/,/-}-$round.jsonl" 2>/dev/null
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
  # Per point: a suite-wide figure can hide one point that tracing slows a lot. The five
  # largest ratios of median repetition walls, with the traced split of the largest.
  python3 - "$work" <<'PY' | tee -a "$summary" "$out/summary.txt"
import glob, json, os, statistics, sys
walls, split = {}, {}
for mode in ("host", "host-cupti"):
    for f in glob.glob(os.path.join(sys.argv[1], f"overhead-{mode}-*.jsonl")):
        for line in open(f):
            r = json.loads(line)
            if r.get("status") == "ok" and r.get("wall"):
                walls.setdefault(r["id"], {}).setdefault(mode, []).append(r["wall"]["median"])
                if mode == "host-cupti" and r.get("split_median"):
                    split[r["id"]] = r["split_median"]
ratios = sorted(((statistics.median(m["host-cupti"]) / statistics.median(m["host"]), pid, m)
                 for pid, m in walls.items() if m.get("host") and m.get("host-cupti")), reverse=True)
for ratio, pid, m in ratios[:5]:
    print(f"overhead point {pid}: {statistics.median(m['host']) / 1e3:.1f} -> {statistics.median(m['host-cupti']) / 1e3:.1f} us "
          f"per repetition ({100 * (ratio - 1):+.1f}%)")
if ratios and ratios[0][1] in split:
    sp = split[ratios[0][1]]
    print("overhead point " + ratios[0][1] + " traced split (us): " +
          ", ".join(f"{k} {v / 1e3:.1f}" for k, v in sp.items() if isinstance(v, (int, float)) and v))
PY
fi

if has scaling; then
  # Thread scaling of the compute-bound host variants at 1..16 threads, so the efficiency
  # at 16 can be read against the curve (SMT siblings, clock drop, preemption).
  lscpu >"$work/logs/lscpu.txt" 2>&1
  note "lscpu: $(grep -E '^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|CPU max MHz|Hypervisor vendor|L3 cache):' "$work/logs/lscpu.txt" | tr -s ' ' | tr '\n' ';')"
  scaling="$work/scaling"
  rm -rf "$scaling"
  # Serial and threads side by side in each run, at the lesson suite's default sizes.
  while read -r name args; do
    for t in 1 4 8 12 16; do
      "$speedlab" run suites/gpu-lessons.yaml $args --variant serial --variant threads --threads $t --profilers host \
        --reports json --calibrate off --force --out "$scaling/$name-t$t" >"$work/logs/scaling-$name-t$t.txt" 2>&1
    done
  done <<'CASES'
montecarlo --workload montecarlo
montecarlo_pi --workload montecarlo_pi
gauss-f32 --workload transcendental --param func=gauss --param dtype=float32
gauss-f64 --workload transcendental --param func=gauss --param dtype=float64
mandelbrot --workload mandelbrot
convolution --workload convolution
CASES
  python3 - "$scaling" <<'PY' | tee -a "$summary" "$out/summary.txt"
import glob, json, os, re, sys
root = sys.argv[1]
rows = {}
for f in glob.glob(os.path.join(root, "*", "results.jsonl")):
    name, t = re.match(r"(.*)-t(\d+)$", os.path.basename(os.path.dirname(f))).groups()
    walls = {}
    for line in open(f):
        p = json.loads(line)
        if p.get("status") == "ok":
            walls[p["variant"]] = p["wall"]["median"]
    if "serial" in walls and "threads" in walls:
        rows.setdefault(name, {})[int(t)] = (walls["serial"], walls["threads"])
for name, by_t in sorted(rows.items()):
    cells = [f"{t}:{s / w:.2f}x/{100 * s / w / t:.0f}%" for t, (s, w) in sorted(by_t.items())]
    serial = by_t[max(by_t)][0] / 1e6
    print(f"scaling {name} (serial {serial:.2f} ms in the 16-thread run): threads:speedup/efficiency " + " ".join(cells))
PY
fi

if has storm && [[ -x "$bin/speedlab_launch_storm" ]]; then
  # What tracing adds per launch. One process per figure: CUPTI cannot be switched off in a
  # process once it traced, and launch cost moves by ~0.7 us from process to process on this
  # VM, so the default session runs in 8 processes, alternated with 4 without API records
  # (docs/results/storm-matrix: kernel tracing is nearly all of the cost). The summary gives
  # the median with a bootstrap 95% interval, and the median launch call timed one by one.
  note "clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
  rm -f "$work"/logs/launch-storm-*.txt
  for i in 1 2 3 4 5 6 7 8; do
    configs=("activity-$i")
    ((i % 2)) && configs+=("no-api-$i --no-api")
    for entry in "${configs[@]}"; do
      read -r name args <<<"$entry"
      "$bin/speedlab_launch_storm" --rounds 7 $args >"$work/logs/launch-storm-$name.txt" 2>&1
      note "launch storm ($name: ${args:-defaults}): $(tail -1 "$work/logs/launch-storm-$name.txt" | python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())
except ValueError:
    print("no JSON line"); sys.exit()
keys = ("plain_us_per_launch", "cupti_us_per_launch", "added_us_per_launch", "residual_us_per_launch", "clock_read_ns")
calls = d.get("launch_call", {})
med = "/".join(str(round(calls.get(k, {}).get("median_ns", 0))) for k in ("plain", "cupti"))
print(", ".join(f"{k} {d[k]:.3f}" for k in keys if k in d), "| call median ns plain/cupti", med,
      "| kernels", d.get("kernels_recorded"), "api", d.get("api_records"), "correlated",
      d.get("kernels_with_launch_record"), "dropped", d.get("dropped_records"), "|", d.get("cupti"))')"
    done
  done
  python3 - "$work/logs" <<'PY' | tee -a "$summary" "$out/summary.txt"
import glob, json, os, random, re, statistics, sys
added, calls = {}, {}
for f in glob.glob(os.path.join(sys.argv[1], "launch-storm-*.txt")):
    name = re.sub(r"-\d+$", "", os.path.basename(f)[len("launch-storm-"):-4])
    lines = [l for l in open(f) if l.startswith("{")]
    if lines and "added_us_per_launch" in (d := json.loads(lines[-1])):
        added.setdefault(name, []).append(d["added_us_per_launch"])
        c = d.get("launch_call", {})
        if "plain" in c and "cupti" in c:
            calls.setdefault(name, []).append((c["cupti"]["median_ns"] - c["plain"]["median_ns"]) / 1e3)
rng = random.Random(1)
def interval(v):  # bootstrap 95% interval of the median
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(2000))
    return meds[50], meds[1949]
for name, v in sorted(added.items()):
    lo, hi = interval(v)
    line = (f"launch storm {name}: added per launch median {statistics.median(v):.2f} us over {len(v)} processes "
            f"(95% interval {lo:.2f}-{hi:.2f}; min {min(v):.2f}, max {max(v):.2f})")
    if calls.get(name):
        line += f"; median launch call +{statistics.median(calls[name]):.2f} us"
    print(line)
PY
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
    # The same storm three ways, side by side in one run, one process each, four rounds:
    # plain (CUPTI never touched), speedlab's default CUPTI session, and plain under
    # `nsys profile -t cuda,nvtx`. Each tool's cost per launch is its median minus the plain
    # median; the ratio of the two is speedlab's cost in units of nsys's.
    rm -f "$work"/logs/nsys-storm-*.txt
    for round in 1 2 3 4; do
      "$bin/speedlab_launch_storm" --no-cupti >"$work/logs/nsys-storm-plain-$round.txt" 2>&1
      "$bin/speedlab_launch_storm" >"$work/logs/nsys-storm-speedlab-$round.txt" 2>&1
      "$NSYS" profile -t cuda,nvtx -o "$work/storm-nsys-$round" --force-overwrite true \
        "$bin/speedlab_launch_storm" --no-cupti >"$work/logs/nsys-storm-nsys-$round.txt" 2>&1
    done
    python3 - "$work/logs" <<'PY' | tee -a "$summary" "$out/summary.txt"
import glob, json, os, statistics, sys
def per_launch(kind, key):
    v = []
    for f in sorted(glob.glob(os.path.join(sys.argv[1], f"nsys-storm-{kind}-*.txt"))):
        lines = [l for l in open(f) if l.startswith("{")]
        if lines and key in (d := json.loads(lines[-1])):
            v.append(d[key])
    return v
plain = per_launch("plain", "plain_us_per_launch")
speedlab = per_launch("speedlab", "cupti_us_per_launch")
nsys = per_launch("nsys", "plain_us_per_launch")
if plain and nsys and speedlab:
    p, s, n = (statistics.median(v) for v in (plain, speedlab, nsys))
    print(f"launch storm side by side (medians of {len(plain)}/{len(speedlab)}/{len(nsys)} processes): plain {p:.2f}, "
          f"speedlab cupti {s:.2f}, nsys -t cuda,nvtx {n:.2f} us/launch: speedlab adds {s - p:.2f} us, nsys adds "
          f"{n - p:.2f} us, ratio speedlab/nsys {(s - p) / (n - p):.2f}" if n > p else
          f"launch storm side by side: plain {p:.2f}, speedlab {s:.2f}, nsys {n:.2f} us/launch (nsys not slower: no ratio)")
else:
    print("launch storm side by side: no figures (see logs/nsys-storm-*.txt)")
PY
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

if has profile; then
  # `speedlab profile` on unmodified programs (examples/): kernel counts and total kernel
  # time against ncu over the same program (a separate run: ncu refuses to start while
  # CUDA_INJECTION64_PATH is set), overhead against plain and another tracer (median of
  # several processes), a SIGKILLed program, children. Streams of small runs come back as
  # fixtures (profile-fixtures.tar.gz).
  pw="$work/profile"; rm -rf "$pw"; mkdir -p "$pw/fixtures"
  storm="$bin/speedlab_launch_storm"
  prof() { local name=$1; shift; timeout 240 "$speedlab" profile --out "$pw/$name" -- "$@" >"$work/logs/profile-$name.txt" 2>&1; echo $?; }
  ncu_totals() { local name=$1; shift
    timeout 150 ncu --clock-control none --cache-control none --target-processes all --metrics gpu__time_duration.sum --csv --print-units base \
      "$@" >"$work/logs/ncu-$name.csv" 2>"$work/logs/ncu-$name.err"; echo $?; }
  # Same program, same arguments, under speedlab and under ncu.
  while read -r name args; do
    rc=$(prof "$name" $args); nrc=$(ncu_totals "$name" $args)
    note "profile $name: speedlab exit $rc, ncu exit $nrc"
  done <<CASES
cupy_vector python3 examples/cupy_vector.py --n 4194304 --calls 20
numba_pi python3 examples/numba_pi.py --launches 10
torch_mlp python3 examples/torch_mlp.py --steps 50
storm_small $bin/speedlab_launch_storm --no-cupti --launches 500 --rounds 1
CASES
  python3 - "$pw" "$work/logs" <<'PY' | tee -a "$summary" "$out/summary.txt"
import csv, io, json, os, sys
pw, logs = sys.argv[1], sys.argv[2]
for name in ("cupy_vector", "numba_pi", "torch_mlp", "storm_small"):
    try:
        facts = json.load(open(os.path.join(pw, name, "profile.json")))
    except (OSError, ValueError) as e:
        print(f"profile {name}: no profile.json ({e})"); continue
    k = sum(p["kernels"] for p in facts["processes"]); t = sum(p["kernel_ns"] for p in facts["processes"])
    text = open(os.path.join(logs, f"ncu-{name}.csv"), errors="replace").read()
    rows = [r for r in csv.reader(io.StringIO(text[text.find('"ID"'):])) if len(r) > 5] if '"ID"' in text else []
    head = rows[0] if rows else []
    vals = [float(r[head.index("Metric Value")].replace(",", "")) for r in rows[1:]
            if head and r[head.index("Metric Name")] == "gpu__time_duration.sum"]
    nk, nt = len(vals), sum(vals)
    diff = f"{100 * (t / nt - 1):+.2f}%" if nt else "n/a"
    print(f"profile {name}: speedlab {k} kernels {t / 1e6:.3f} ms | ncu {nk} kernels {nt / 1e6:.3f} ms | "
          f"counts {'equal' if k == nk else 'DIFFER'}, time {diff} | exit {facts['exit_code']} "
          f"| processes {len(facts['processes'])} | notes {facts['notes']}")
PY
  cp "$pw"/cupy_vector/*.slstream "$pw/fixtures/cupy_vector.slstream" 2>/dev/null
  cp "$pw"/numba_pi/*.slstream "$pw/fixtures/numba_pi.slstream" 2>/dev/null
  cp "$pw"/torch_mlp/*.slstream "$pw/fixtures/torch_mlp.slstream" 2>/dev/null
  # A program killed halfway: data up to the last flush survives, marked truncated.
  "$speedlab" profile --out "$pw/killed" --flush-interval 200 -- python3 examples/numba_pi.py --launches 100000 \
    --samples-per-thread 65536 >"$work/logs/profile-killed.txt" 2>&1 & sp=$!
  sleep 12; kill -KILL $(pgrep -P $sp) 2>/dev/null; wait $sp; note "profile killed: speedlab exit $? (137 expected)"
  grep -E "truncated|exited" "$work/logs/profile-killed.txt" | head -3 | tee -a "$summary" "$out/summary.txt"
  cp "$pw"/killed/*.slstream "$pw/fixtures/killed_numba.slstream" 2>/dev/null
  # Long kernels in flight across many periodic flushes (every 5 ms): none may be lost (a
  # forced periodic flush hands over in-flight records without timestamps; docs/profile-format.md).
  timeout 120 "$speedlab" profile --out "$pw/inflight" --flush-interval 5 -- python3 examples/numba_pi.py --launches 40 \
    --samples-per-thread 262144 >"$work/logs/profile-inflight.txt" 2>&1
  note "profile in-flight kernels: exit $?; $(python3 -c 'import json, sys
p = [q for q in json.load(open(sys.argv[1]))["processes"] if q["used_cuda"]]
print(sum(q["kernels"] for q in p), "kernels of 40,", sum(q["dropped_records"] for q in p), "records dropped")' \
    "$pw/inflight/profile.json" 2>&1 | tail -1)"
  # NVTX from Python's nvtx package (default domain, a named domain, start/end) and torch;
  # the package is not on every GPU machine (PyPI only): then said and skipped.
  if ! python3 -c 'import nvtx' 2>/dev/null; then
    note "profile nvtx_py: skipped: the Python nvtx package is not installed on this machine"
  else
  rc=$(prof nvtx_py python3 -c 'import nvtx, cupy
with nvtx.annotate("plain"): cupy.ones(8).sum()
with nvtx.annotate("in_domain", domain="mine"): cupy.ones(8).sum()
r = nvtx.start_range("started"); cupy.cuda.Device().synchronize(); nvtx.end_range(r)
print("nvtx", getattr(nvtx, "__version__", "?"), nvtx.__file__)')
  note "profile nvtx_py: exit $rc; $(grep -E '^nvtx|pid|Error' "$work/logs/profile-nvtx_py.txt" | head -3 | tr '\n' ' ')"
  fi
  # Children: a shell that starts the real program (the shell never uses CUDA).
  rc=$(prof shell sh -c 'python3 examples/cupy_vector.py --n 1048576 --calls 5 && exit 4'); note "profile shell: exit $rc (4 expected)"
  grep -E "pid|note" "$work/logs/profile-shell.txt" | head -4 | tee -a "$summary" "$out/summary.txt"
  # Children: multiprocessing spawn workers (they end with os._exit).
  rc=$(prof mp_spawn python3 examples/mp_spawn.py); note "profile mp_spawn: exit $rc"
  grep -E "pid|note" "$work/logs/profile-mp_spawn.txt" | head -5 | tee -a "$summary" "$out/summary.txt"
  mkdir -p "$pw/fixtures/mp_spawn" && cp "$pw"/mp_spawn/*.slstream "$pw/fixtures/mp_spawn/" 2>/dev/null
  # Another CUPTI client in the program: torch.profiler.
  rc=$(prof torchprof python3 examples/torch_mlp.py --steps 20 --torch-profile); note "profile under torch.profiler: exit $rc"
  grep -E "CUPTI|note" "$work/logs/profile-torchprof.txt" | head -3 | tee -a "$summary" "$out/summary.txt"
  # Another CUPTI client around the program: speedlab profile under nsys.
  if [[ -x $NSYS ]]; then
    timeout 150 "$NSYS" profile -t cuda,nvtx -o "$pw/under-nsys" --force-overwrite true "$speedlab" profile \
      --out "$pw/under-nsys-prof" -- python3 examples/numba_pi.py --launches 3 >"$work/logs/profile-under-nsys.txt" 2>&1
    note "profile under nsys: exit $?"
    grep -E "pid|note|CUPTI" "$work/logs/profile-under-nsys.txt" | head -4 | tee -a "$summary" "$out/summary.txt"
  fi
  # Overhead: plain, speedlab profile, the other tracer; one process each, alternated
  # (PROFILE_ROUNDS rounds, default 3).
  for round in $(seq "${PROFILE_ROUNDS:-3}"); do
    "$storm" --no-cupti --rounds 3 >"$work/logs/ovh-storm-plain-$round.txt" 2>&1
    "$speedlab" profile --out "$pw/ovh-storm-$round" -- "$storm" --no-cupti --rounds 3 >"$work/logs/ovh-storm-speedlab-$round.txt" 2>&1
    [[ -x $NSYS ]] && timeout 120 "$NSYS" profile -t cuda,nvtx -o "$pw/ovh-storm-nsys-$round" --force-overwrite true \
      "$storm" --no-cupti --rounds 3 >"$work/logs/ovh-storm-nsys-$round.txt" 2>&1
    python3 examples/torch_mlp.py >"$work/logs/ovh-torch-plain-$round.txt" 2>&1
    "$speedlab" profile --out "$pw/ovh-torch-$round" -- python3 examples/torch_mlp.py >"$work/logs/ovh-torch-speedlab-$round.txt" 2>&1
    python3 examples/torch_mlp.py --torch-profile >"$work/logs/ovh-torch-torchprof-$round.txt" 2>&1
    rm -rf "$pw/ovh-storm-$round"/*.slstream "$pw"/ovh-storm-nsys-*.nsys-rep
  done
  python3 - "$work/logs" <<'PY' | tee -a "$summary" "$out/summary.txt"
import glob, json, os, statistics, sys
def vals(pattern, key):
    v = []
    for f in sorted(glob.glob(os.path.join(sys.argv[1], pattern))):
        for line in open(f, errors="replace"):
            if line.startswith("{"):
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                if key in d: v.append(d[key])
    return v
for prog, key, tools in (("storm", "plain_us_per_launch", ("plain", "speedlab", "nsys")),
                         ("torch", "us_per_step", ("plain", "speedlab", "torchprof"))):
    med = {t: statistics.median(v) for t in tools if (v := vals(f"ovh-{prog}-{t}-*.txt", key))}
    if "plain" not in med:
        print(f"overhead {prog}: no plain figures"); continue
    p = med["plain"]
    cells = [f"{t} {m:.2f} us ({m - p:+.2f} us, {100 * (m / p - 1):+.1f}%)" for t, m in med.items()]
    n = min(len(vals(f"ovh-{prog}-{t}-*.txt", key)) for t in med)
    print(f"overhead {prog} ({key}, median of {n}+ processes each): " + "; ".join(cells))
PY
  # What the profile run itself recorded of the loop (records, drops).
  grep -h "exited\|pid" "$work"/logs/ovh-storm-speedlab-1.txt "$work"/logs/ovh-torch-speedlab-1.txt | head -6 >>"$summary"
  tar -C "$pw" -czf "$out/profile-fixtures.tar.gz" fixtures $(cd "$pw" && ls -d */profile.json 2>/dev/null)
  note "profile fixtures: $(du -h "$out/profile-fixtures.tar.gz" | cut -f1)"
fi

if has flush; then
  # The injection library's forced-flush fallback (profilers/inject/flush_policy.hpp), each
  # case with the default (force once no GPU record came for 5 s while work was launched) and
  # with SPEEDLAB_PROFILE_FORCE_AFTER_MS=0 (never force):
  #   busy   a GPU never idle at a flush (10 ms kernels queued back to back, no sync), the
  #          program SIGKILLed after 15 s: what survives of the kernels that ran;
  #   long   one 8 s kernel: a forced flush while it runs hands its record over unfinished.
  fw="$work/flush"; rm -rf "$fw"; mkdir -p "$fw"
  flush_facts() { python3 - "$1/profile.json" <<'PY' 2>&1 | tail -1
import json, sys
p = [q for q in json.load(open(sys.argv[1]))["processes"] if q["used_cuda"]]
print(sum(q["kernels"] for q in p), "kernels,", sum(q["dropped_records"] for q in p), "records dropped,",
      "truncated" if any(q["truncated"] for q in p) else "complete", "| notes:",
      " / ".join(n[:90] for q in p for n in q["notes"]) or "none")
PY
  }
  for force in default 0; do
    ( [[ $force == 0 ]] && export SPEEDLAB_PROFILE_FORCE_AFTER_MS=0
      exec "$speedlab" profile --out "$fw/busy-$force" -- python3 examples/numba_pi.py --no-sync --launches 100000 \
        --samples-per-thread 65536 ) >"$work/logs/flush-busy-$force.txt" 2>&1 & sp=$!
    sleep 15; kill -KILL $(pgrep -P $sp) 2>/dev/null; wait $sp; rc=$?
    note "flush busy, killed at 15 s (force after: $force): exit $rc; $(flush_facts "$fw/busy-$force")"
    grep -E "truncated" "$work/logs/flush-busy-$force.txt" | head -2 | tee -a "$summary" "$out/summary.txt"
  done
  for force in default 0; do
    ( [[ $force == 0 ]] && export SPEEDLAB_PROFILE_FORCE_AFTER_MS=0
      exec timeout 120 "$speedlab" profile --out "$fw/long-$force" -- python3 examples/numba_pi.py --launches 1 \
        --samples-per-thread 56000000 ) >"$work/logs/flush-long-$force.txt" 2>&1
    note "flush one 8 s kernel (force after: $force): exit $?; $(flush_facts "$fw/long-$force")"
  done
  tar -C "$work" -czf "$out/flush.tar.gz" --exclude='*.html' --exclude='*.sqlite' --exclude='trace*.json' flush
fi

if has counters-sass; then
  # The SASS instruction counters behind FLOPs, read for the same kernels by ncu and by
  # speedlab in several metric sets: the default set, the same configured one metric per
  # CUPTI call (as before the fix: every metric its own replay), without the launch gate,
  # the instruction counters alone (sm__ and smsp__ forms), one counter alone, the op-group
  # counters, beside a non-instruction metric, and non-opcode reference counters.
  # vector mul executes exactly one FMUL per element (2^24); ncu says the rest.
  cs="$work/counters-sass"; rm -rf "$cs"; mkdir -p "$cs"
  op=sm__sass_thread_inst_executed_op; ops=sm__sass_thread_inst_executed_ops
  sm6="${op}_ffma_pred_on.sum,${op}_fadd_pred_on.sum,${op}_fmul_pred_on.sum,${op}_dfma_pred_on.sum,${op}_dadd_pred_on.sum,${op}_dmul_pred_on.sum"
  smsp6=${sm6//sm__sass/smsp__sass}
  groups="${ops}_fadd_fmul_ffma_pred_on.sum,${ops}_dadd_dmul_dfma_pred_on.sum,${op}_ffma_pred_on.sum,${op}_dfma_pred_on.sum"
  # Counters that are not per-opcode, as a reference for the same launches.
  ref="gpu__time_duration.sum,sm__threads_launched.sum,smsp__inst_executed.sum,sm__sass_thread_inst_executed.sum,sm__inst_executed_pipe_fp64.sum,sm__inst_executed_pipe_fma.sum"
  # The kernels' SASS, to count what each thread executes.
  for f in "$bin"/plugins/*.so; do
    case $f in *vector*|*mandelbrot*|*transcendental*|*montecarlo*) cuobjdump -sass "$f" >"$cs/sass-$(basename "$f" .so).txt" 2>&1;; esac
  done
  timeout 120 ncu --clock-control none --cache-control none --print-kernel-base mangled --csv --print-units base \
    --metrics "$sm6,$smsp6,$groups,${op}_hadd_pred_on.sum,${op}_hfma_pred_on.sum,$ref" \
    "$speedlab" run suites/counters-diag.yaml --no-isolate --profilers host --reports json --force --out "$cs/ncu-run" \
    >"$cs/ncu.csv" 2>"$cs/ncu.err"
  note "counters-sass: ncu exit $?"
  while read -r name env metrics; do
    env $env "$speedlab" run suites/counters-diag.yaml --metrics "$metrics" --reports json --force --out "$cs/$name" \
      >"$cs/$name.txt" 2>&1
    echo "counters-sass: $name ($env) exit $?" >>"$summary"
  done <<CASES
default SPEEDLAB_COUNTERS_GATE=on default
each SPEEDLAB_COUNTERS_ADD=each default
nogate SPEEDLAB_COUNTERS_GATE=off default
sm6 SPEEDLAB_COUNTERS_GATE=on $sm6
smsp6 SPEEDLAB_COUNTERS_GATE=on $smsp6
fmul SPEEDLAB_COUNTERS_GATE=on ${op}_fmul_pred_on.sum
groups SPEEDLAB_COUNTERS_GATE=on $groups
sm6time SPEEDLAB_COUNTERS_GATE=on gpu__time_duration.sum,$sm6
ref SPEEDLAB_COUNTERS_GATE=on $ref
CASES
  python3 scripts/counters_sass_table.py "$cs" | tee -a "$summary" "$out/summary.txt"
  tar -C "$work" -czf "$out/counters-sass.tar.gz" counters-sass
fi

if has counters-degrade; then
  # Counters unavailable: each case must leave one note naming the cause and a finished run.
  cd_="$work/counters-degrade"; rm -rf "$cd_"; mkdir -p "$cd_"
  one() { python3 - "$1" <<'PY'
import json, sys
try:
    for line in open(sys.argv[1] + "/results.jsonl"):
        p = json.loads(line)
        c = p.get("counters") or {}
        print(f"  {p['id']}: {p['status']}, {len(c.get('kernels', []))} kernels with counters; notes: {p.get('profiler_messages')}")
except OSError as e:
    print("  no results:", e)
PY
  }
  # Nsight Compute holds the counters of the process it profiles.
  timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum "$speedlab" run suites/counters-diag.yaml \
    --workload vector --variant cuda --no-isolate --profilers host,counters --reports json --force --out "$cd_/under-ncu" \
    >"$cd_/under-ncu.txt" 2>&1
  note "counters-degrade under ncu: exit $?"; one "$cd_/under-ncu" | tee -a "$summary" "$out/summary.txt"
  # Nsight Systems tracing the process (CUPTI activity held by nsys).
  if [[ -x $NSYS ]]; then
    timeout 90 "$NSYS" profile -t cuda -o "$cd_/under-nsys" --force-overwrite true "$speedlab" run suites/counters-diag.yaml \
      --workload vector --variant cuda --no-isolate --profilers host,cupti,counters --reports json --force --out "$cd_/under-nsys-run" \
      >"$cd_/under-nsys.txt" 2>&1
    note "counters-degrade under nsys: exit $?"; one "$cd_/under-nsys-run" | tee -a "$summary" "$out/summary.txt"
  fi
  # Two processes reading counters at once (full set: many replays, so the passes overlap).
  for i in 1 2; do
    timeout 90 "$speedlab" run suites/counters-diag.yaml --workload mandelbrot --metrics full --reports json \
      --out "$cd_/concurrent-$i" >"$cd_/concurrent-$i.txt" 2>&1 &
  done
  wait
  note "counters-degrade two processes at once:"; one "$cd_/concurrent-1" | tee -a "$summary" "$out/summary.txt"
  one "$cd_/concurrent-2" | tee -a "$summary" "$out/summary.txt"
  # A user without admin rights: the driver's profiling restriction decides.
  note "counters-degrade driver: $(grep -i profil /proc/driver/nvidia/params 2>/dev/null | tr '\n' ' ')"
  if command -v setpriv >/dev/null; then
    mkdir -p "$cd_/nobody" && chmod 777 "$cd_/nobody"
    timeout 90 setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp SPEEDLAB_CACHE_DIR="$cd_/nobody/cache" \
      "$speedlab" run suites/counters-diag.yaml --workload vector --variant cuda --profilers host,cupti,counters \
      --reports json --force --out "$cd_/nobody/run" >"$cd_/nobody.txt" 2>&1
    note "counters-degrade as uid 65534: exit $?"; one "$cd_/nobody/run" | tee -a "$summary" "$out/summary.txt"
    tail -3 "$cd_/nobody.txt" >>"$summary"
  else
    note "counters-degrade: no setpriv; the non-root case is not run"
  fi
  tar -C "$work" -czf "$out/counters-degrade.tar.gz" --exclude='*.nsys-rep' --exclude='*.qdstrm' --exclude='*.sqlite' --exclude='traces' --exclude='trace.json' --exclude='*.html' counters-degrade
fi

if has counters; then
  # Hardware counters (the counters backend), in parts (COUNTERS_PARTS, default all):
  #   cost      the lesson suite with and without counters at the default K (wall times)
  #   ncu       speedlab's counters against Nsight Compute per lesson kernel (same metrics,
  #             --cache-control none: neither flushes caches), from the cost run
  #   sets      passes and pass wall of each metric set on one point
  #   fixtures  the CUDA variants with the full metric set (fixtures for the CPU-side tests)
  #   slow      the slowest kernels at the issue's sizes with the full set
  parts=" ${COUNTERS_PARTS:-cost ncu sets fixtures slow} "
  c="$work/counters"
  mkdir -p "$c"
  if [[ -x "$bin/speedlab_gpu_tests" ]]; then
    "$bin/speedlab_gpu_tests" "[counters]" >"$work/logs/counters-gpu-tests.txt" 2>&1
    note "counters gpu tests: exit $? ($(tail -2 "$work/logs/counters-gpu-tests.txt" | tr '\n' ' '))"
  fi
  if [[ $parts == *" cost "* ]]; then
    # COUNTERS_COST_MODES: the --profilers of each run (one run of the suite is about 5 min).
    for mode in ${COUNTERS_COST_MODES:-host,cupti,counters host,cupti}; do
      s=$(date +%s.%N)
      "$speedlab" run suites/gpu-lessons.yaml --profilers "$mode" --reports json,markdown --force --out "$c/lessons-${mode//,/-}" \
        >"$work/logs/counters-lessons-${mode//,/-}.txt" 2>&1
      rc=$?
      e=$(date +%s.%N)
      note "counters: lesson suite --profilers $mode: exit $rc, wall $(python3 -c "print(f'{$e-$s:.1f}')") s"
    done
  fi
  if [[ $parts == *" ncu "* ]]; then
    # ncu refuses to start under CUPTI injection and holds the counters itself, so each
    # (workload, variant) runs again in-process with --profilers host under ncu.
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu) timeout "${COUNTERS_NCU_TIMEOUT:-200}" python3 scripts/counters_vs_ncu.py \
      "$speedlab" "$c/lessons-host-cupti-counters" "$c/ncu" --suite suites/gpu-lessons.yaml --cache-control none \
      >"$c/counters-vs-ncu-none.md" 2>"$work/logs/counters-vs-ncu.err"
    note "counters vs ncu: exit $?; $(tail -1 "$c/counters-vs-ncu-none.md")"
    cp "$c/counters-vs-ncu-none.md" "$out/" 2>/dev/null
    cp "$c"/ncu/*.log "$work/logs/" 2>/dev/null
  fi
  if [[ $parts == *" sets "* ]]; then
    for set in dram default full; do
      "$speedlab" run suites/gpu-counters.yaml --metrics $set --reports json --force --out "$c/set-$set" --workload vector \
        --variant cuda --param op=mul >"$work/logs/counters-set-$set.txt" 2>&1
      note "counters: metric set $set: $(python3 - "$c/set-$set/results.jsonl" <<'PY' 2>&1 | tail -1
import json, sys
for line in open(sys.argv[1]):
    p = json.loads(line)
    c = p.get("counters") or {}
    print(f"{len(c.get('metrics', []))} metrics, {c.get('passes')} passes, setup {c.get('setup_wall_ns', 0) / 1e6:.1f} ms, "
          f"pass wall {c.get('pass_wall_ns', 0) / 1e6:.1f} ms (repetition median {p['wall']['median'] / 1e6:.2f} ms)")
PY
)"
    done
  fi
  if [[ $parts == *" fixtures "* ]]; then
    "$speedlab" run suites/gpu-counters.yaml --metrics full --reports json,markdown --force --out "$c/full" \
      >"$work/logs/counters-full.txt" 2>&1
    note "counters: CUDA variants, full metric set: exit $?"
  fi
  # The issue's sizes for the slowest kernels (their own and the lesson variant).
  [[ $parts == *" slow "* ]] && while read -r name args; do
    "$speedlab" run suites/gpu-counters.yaml --metrics full --reports json --force --out "$c/slow-$name" --variant cuda \
      --variant cuda-lesson $args >"$work/logs/counters-slow-$name.txt" 2>&1
    note "counters: slow kernels $name: exit $?"
  done <<'CASES'
pi --workload montecarlo_pi --param M=2700000000
moment --workload montecarlo --param M=512000000 --param N=8
mandel8k --workload mandelbrot --param size=8192 --param iterations=256
mandel4k --workload mandelbrot --param size=4096 --param iterations=4096
CASES
  grep -h "counters" "$c"/*/results.jsonl 2>/dev/null | python3 -c '
import collections, json, sys
n = collections.Counter()
for line in sys.stdin:
    for m in json.loads(line).get("profiler_messages", []):
        if "counters" in m: n[m[:200]] += 1
for m, k in n.most_common(8): print(f"counters note x{k}: {m}")' >>"$summary"
  python3 - "$c" <<'PY' | tee -a "$summary" "$out/summary.txt"
import glob, json, os, statistics, sys
root = sys.argv[1]
rows = []
for d in ("lessons-host-cupti-counters", "full"):
    f = os.path.join(root, d, "results.jsonl")
    if not os.path.exists(f):
        continue
    for line in open(f):
        p = json.loads(line)
        c = p.get("counters")
        if not c or not c.get("kernels") or not p.get("wall"):
            continue
        # What the counters pass adds over a plain repetition, per profiled kernel launch.
        extra = c["pass_wall_ns"] + c.get("setup_wall_ns", 0) - p["wall"]["median"]
        rows.append((d, extra / len(c["kernels"]) / 1e3, c["passes"], p["id"], len(c["kernels"]), c["skipped"],
                     c.get("setup_wall_ns", 0) / 1e3))
for d in ("lessons-host-cupti-counters", "full"):
    v = [r for r in rows if r[0] == d]
    if v:
        per = [r[1] for r in v]
        print(f"counters cost ({d}): added wall per profiled kernel median {statistics.median(per) / 1e3:.1f} ms "
              f"(min {min(per) / 1e3:.1f}, max {max(per) / 1e3:.1f}) over {len(v)} points, {sum(r[4] for r in v)} kernels "
              f"profiled, {sum(r[5] for r in v)} launches skipped (beyond K); setup median "
              f"{statistics.median(r[6] for r in v) / 1e3:.1f} ms; passes {sorted({r[2] for r in v})}")
for r in sorted(rows, key=lambda r: -r[1])[:3]:
    print(f"counters cost point {r[3]} ({r[0]}): {r[1] / 1e3:.1f} ms per profiled kernel, {r[4]} kernels, {r[5]} skipped")
PY
  # Fixtures for tests/fixtures/counters: results with counters, the device model.
  f="$work/counters-fixtures"
  mkdir -p "$f"
  for d in full lessons-host-cupti-counters set-dram set-default set-full slow-pi slow-moment slow-mandel8k slow-mandel4k; do
    [[ -f "$c/$d/results.jsonl" ]] || continue
    mkdir -p "$f/$d"
    cp "$c/$d/results.jsonl" "$c/$d/device.json" "$c/$d/run.json" "$f/$d/" 2>/dev/null
  done
  cp "$c"/ncu/*.json "$f/" 2>/dev/null
  tar -C "$work" -czf "$out/counters.tar.gz" counters-fixtures -C "$c" $(cd "$c" && ls */report.md 2>/dev/null)
  note "counters fixtures: $(du -h "$out/counters.tar.gz" | cut -f1) packed"
fi

if has terminate; then
  # Processes ended by SIGTERM keep their records (profilers/inject/termination.hpp), each case
  # with the default and with SPEEDLAB_PROFILE_SIGNALS=0 (the library leaves signals alone:
  # the behaviour before, for comparison):
  #   pool     multiprocessing.Pool(2), spawn, each task three CuPy kernels (ones, multiply,
  #            sum); leaving the `with` block terminates the workers (SIGTERM) at once;
  #   torchrun two gloo ranks on one GPU (speedlab inside each rank), the agent stopped by
  #            SIGTERM after both ranks finished a few steps: it stops the workers; each rank
  #            wrote the steps it had finished (--progress), its stream must hold as many.
  tw="$work/terminate"; rm -rf "$tw"; mkdir -p "$tw"
  for sig in default 0; do
    ( [[ $sig == 0 ]] && export SPEEDLAB_PROFILE_SIGNALS=0
      exec timeout 120 "$speedlab" profile --out "$tw/pool-$sig" -- python3 examples/pool_terminate.py --workers 2 --tasks 2 ) \
      >"$work/logs/terminate-pool-$sig.txt" 2>&1
    note "terminate pool (signals: $sig): exit $?; $(python3 - "$tw/pool-$sig/profile.json" <<'PY' 2>&1 | tail -1
import json, sys
w = [q for q in json.load(open(sys.argv[1]))["processes"] if q["used_cuda"]]
print(len(w), "worker streams; kernels per worker", [q["kernels"] for q in w], "(3 per task expected, 6 in all);",
      "closed by", [q["tags"].get("closed_by", "truncated" if q["truncated"] else "exit") for q in w])
PY
)"
  done
  for sig in default 0; do
    rm -f "$tw"/progress-$sig.rank*
    ( [[ $sig == 0 ]] && export SPEEDLAB_PROFILE_SIGNALS=0
      export MASTER_PORT=$((29811 + ${#sig})) OMP_NUM_THREADS=2
      exec timeout 150 torchrun --standalone --nproc_per_node 2 --no-python "$speedlab" profile --out "$tw/torchrun-$sig" -- \
        python3 examples/ddp_train.py --backend gloo --steps 1000000 --warmup 2 --width 1024 --batch 128 \
        --progress "$tw/progress-$sig" ) >"$work/logs/terminate-torchrun-$sig.txt" 2>&1 & tp=$!
    for _ in $(seq 120); do [[ -f "$tw/progress-$sig.rank0" && -f "$tw/progress-$sig.rank1" ]] && break; sleep 0.5; done
    sleep 3; kill -TERM $tp; wait $tp; rc=$?
    note "terminate torchrun, agent SIGTERMed (signals: $sig): exit $rc; $(python3 - "$tw/torchrun-$sig" "$tw/progress-$sig" <<'PY' 2>&1 | tail -1
import json, os, re, sys
out, progress = sys.argv[1:]
cells = []
for r in (0, 1):
    try:
        steps = [(int(a), float(b)) for a, b in (l.split() for l in open(f"{progress}.rank{r}") if l.strip())]
        p = [q for q in json.load(open(os.path.join(out, f"rank-{r}", "profile.json")))["processes"] if q["used_cuda"]]
    except (OSError, ValueError) as e:
        cells.append(f"rank {r}: {e}"); continue
    # The library notes when its handler saw the signal; the steps finished by then must be
    # kept (the rank goes on for the few ms of the final flush: those are extra).
    at = [float(m.group(1)) for q in p for n in q["notes"] for m in [re.search(r"received at Unix time ([0-9.]+) s", n)] if m]
    done = max((n for n, t in steps if not at or t <= min(at)), default=0)
    ranges = sum(q["nvtx_ranges"] for q in p)
    by = [q["tags"].get("closed_by", "truncated" if q["truncated"] else "exit") for q in p]
    cells.append(f"rank {r}: finished {done} steps before the signal{'' if at else ' (no signal time noted: at death)'}"
                 f" ({steps[-1][0] if steps else 0} at death), stream holds {ranges} train_step ranges "
                 f"({'every finished step kept' if ranges >= done else f'{done - ranges} LOST'}), "
                 f"{sum(q['kernels'] for q in p)} kernels, closed by {by}")
print("; ".join(cells))
PY
)"
  done
  tar -C "$work" -czf "$out/terminate.tar.gz" --exclude='*.html' --exclude='*.sqlite' --exclude='trace*.json' terminate
fi

if has signals; then
  # A terminated program ends under `speedlab profile` as it does plain (SIGTERM, SIGINT, SIGHUP to
  # the program, to speedlab, to the group; CuPy and PyTorch): scripts/gpu-signals.sh, table in
  # $OUT/signals.md. SIGNALS_ENV passes on, e.g. "SPEEDLAB_PROFILE_SIGNALS=0".
  SPEEDLAB="$speedlab" WORK="$work/signals" OUT="$out" EXTRA_ENV="${SIGNALS_ENV:-}" \
    timeout 420 bash scripts/gpu-signals.sh >"$work/logs/signals.txt" 2>&1
  note "signals: exit $?"; grep '^| ' "$out/signals.md" 2>/dev/null | tee -a "$summary" >/dev/null
fi

if has overhead-bench; then
  # speedlab beside nsys (scripts/bench/profile_overhead.sh, MODE=compare: >= 12 short
  # alternated rounds, pinned, paired speedlab - nsys per round; ROUNDS, STORM_PROCS, TORCH_PROCS, STEPS,
  # REPEATS, BUDGET_S, CPUS, TORCHPROF and the tool lists pass through): $OUT/overhead/summary.md,
  # rewritten after every round (a call killed at its limit still has the rounds done).
  SPEEDLAB_CARRY="$bin" OUT="$out" MODE=compare bash scripts/bench/profile_overhead.sh >"$work/logs/overhead-bench.txt" 2>&1
  note "overhead bench: exit $?"
  cat "$out/overhead/summary.md" >>"$summary" 2>/dev/null
fi

if has overhead-breakdown; then
  # Where speedlab's cost per launch goes: the storm under speedlab with one part of the
  # tracing off per tool, paired against the default (MODE=breakdown: 20 rounds, BUDGET_S 280):
  # $OUT/overhead-breakdown/summary.md.
  SPEEDLAB_CARRY="$bin" OUT="$out" MODE=breakdown bash scripts/bench/profile_overhead.sh >"$work/logs/overhead-breakdown.txt" 2>&1
  note "overhead breakdown: exit $?"
  cat "$out/overhead-breakdown/summary.md" >>"$summary" 2>/dev/null
fi

if has cost-probe-storm || has cost-probe-torch || has cost-probe-parts || has cost-ab; then
  # Where speedlab's cost goes beside nsys (issue 29), scripts/bench/profile_overhead.sh
  # MODE=breakdown with nsys among the tools: every variant - speedlab and - nsys, paired by
  # round. cost-probe-storm: the launch storm; cost-probe-torch: the training loop, API
  # records from activity (speedlab) or callbacks (sl-callback), none (sl-noapi);
  # cost-probe-parts: the loop's other parts (driver records, clock, NVTX). Each ~170 s.
  probe() { # stage workload tools rounds
    SPEEDLAB_CARRY="$bin" OUT="$out/$1" MODE=breakdown WORKLOADS=$2 STORM_TOOLS="$3" TORCH_TOOLS="$3" ROUNDS=$4 \
      BUDGET_S=${PROBE_BUDGET_S:-170} bash scripts/bench/profile_overhead.sh >"$work/logs/$1.txt" 2>&1
    note "$1: exit $?"
    { echo "## $1"; cat "$out/$1/overhead-breakdown/summary.md"; } >>"$summary" 2>/dev/null
  }
  has cost-probe-storm && probe cost-probe-storm storm "plain speedlab sl-callback sl-cb-offset sl-noapi sl-nodriver sl-offset nsys" 12
  has cost-probe-torch && probe cost-probe-torch torch "plain speedlab sl-callback sl-noapi nsys" 6
  has cost-probe-parts && probe cost-probe-parts torch "plain speedlab sl-callback sl-nodriver sl-offset sl-nonvtx" 6
  # cost-ab: the default, the callback path and nsys alone, for more rounds than the probes'
  # three (their loop figures moved by +-300 us a step): the storm (~140 s), then the loop
  # with 3 repeats of 200 steps a process (the fastest is its figure; ~380 s). One call, ~9 min.
  if has cost-ab; then
    # AB_TOOLS: the candidate against the default and nsys (sl-offset: no timestamp callback).
    # AB_STORM_ROUNDS / AB_TORCH_ROUNDS: the most rounds (the budgets usually end them first);
    # AB_TORCH_S=0: the storm alone.
    PROBE_BUDGET_S=${AB_STORM_S:-140} probe cost-ab-storm storm "${AB_TOOLS:-plain speedlab sl-callback nsys}" \
      "${AB_STORM_ROUNDS:-20}"
    [[ ${AB_TORCH_S:-380} != 0 ]] && STEPS=${STEPS:-200} REPEATS=${REPEATS:-3} PROBE_BUDGET_S=${AB_TORCH_S:-380} \
      probe cost-ab-torch torch "${AB_TOOLS:-plain speedlab sl-callback nsys}" "${AB_TORCH_ROUNDS:-14}"
  fi
fi

if has launch-sampling; then
  # Launch calls recorded in windows (SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled, issue 29): each
  # program recorded with every launch call and with sampled ones; which calls each stream
  # holds, the report lines that differ apart from numbers, a two-rank job's straggler line
  # from each; the streams come back (launch-sampling.tar.gz) as fixtures for the CPU tests.
  ls_dir="$work/launch-sampling"; rm -rf "$ls_dir"; mkdir -p "$ls_dir/fixtures"
  # LS_MODES: all, sampled, and cb-all / cb-sampled on the callback path (API_SOURCE=callback).
  ls_modes=${LS_MODES:-all sampled}
  # (The callback path is the default since the light capture; the others name activity.)
  ls_env() { local m=$1; [[ $m == cb-* ]] && echo "SPEEDLAB_PROFILE_API_SOURCE=callback" || echo "SPEEDLAB_PROFILE_API_SOURCE=activity"; echo "SPEEDLAB_PROFILE_LAUNCH_CALLS=${m#cb-}"; }
  while read -r name args; do
    for mode in $ls_modes; do
      env $(ls_env "$mode") timeout 120 "$speedlab" profile --force --out "$ls_dir/$name-$mode" -- $args \
        >"$ls_dir/$name-$mode.log" 2>&1
      note "launch-sampling $name ($mode): exit $?; $(grep -ho 'launch calls recorded [^;]*' "$ls_dir/$name-$mode"/report.md 2>/dev/null | head -1) $(grep -ho '[0-9]* launch call(s) in flight' "$ls_dir/$name-$mode"/report-full.md 2>/dev/null | head -1)"
      cp "$ls_dir/$name-$mode"/*.slstream "$ls_dir/fixtures/$name-$mode.slstream" 2>/dev/null
    done
    first=${ls_modes%% *} last=${ls_modes##* }
    diff <(sed 's/[0-9][0-9.,]*/N/g' "$ls_dir/$name-$first/report.md") <(sed 's/[0-9][0-9.,]*/N/g' "$ls_dir/$name-$last/report.md") \
      >"$ls_dir/$name.report-diff.txt" 2>&1
    note "launch-sampling $name: report.md lines differing apart from numbers: $(grep -c '^[<>]' "$ls_dir/$name.report-diff.txt")"
  done <<CASES
torch_loop python3 scripts/bench/torch_loop.py --steps 300 --repeats 1
storm $bin/speedlab_launch_storm --no-cupti --launches 20000 --rounds 1
cupy_vector python3 examples/cupy_vector.py --n 1048576 --calls 20
CASES
  # Two gloo ranks on one GPU, rank 1 slowed by 10 ms a step: the straggler with each mode.
  for mode in $ls_modes; do
    env $(ls_env "$mode") timeout 150 "$speedlab" profile --force --out "$ls_dir/ddp-$mode" -- \
      torchrun --standalone --nproc_per_node 2 examples/ddp_train.py --backend gloo --steps 60 --warmup 5 \
      --width 512 --batch 64 --slow-rank 1 --slow-ms 10 >"$ls_dir/ddp-$mode.log" 2>&1
    note "launch-sampling ddp ($mode): exit $?; $(grep -hm1 -o 'Straggler: [^.]*\.[^.]*' "$ls_dir/ddp-$mode"/report.md 2>/dev/null)"
    # profile.json too: a folder the reports and `speedlab report` read as they are.
    mkdir -p "$ls_dir/fixtures/ddp-$mode" &&
      cp "$ls_dir/ddp-$mode"/*.slstream "$ls_dir/ddp-$mode"/profile.json "$ls_dir/fixtures/ddp-$mode/" 2>/dev/null
  done
  tar -C "$ls_dir" -czf "$out/launch-sampling.tar.gz" fixtures $(cd "$ls_dir" && ls *.txt *.log) \
    $(cd "$ls_dir" && ls -d */report.md 2>/dev/null)
  du -sh "$out/launch-sampling.tar.gz" | tee -a "$summary" "$out/summary.txt"
fi

if has cost-record; then
  # The same programs recorded with API records from activity and from callbacks (issue
  # 29): which calls each stream holds (by name and count), and the analysis of each
  # (report.md: findings and split), to be compared; the streams come back as fixtures
  # (cost-record.tar.gz) for the CPU tests.
  cr="$work/cost-record"; rm -rf "$cr"; mkdir -p "$cr/fixtures"
  while read -r name args; do
    for src in activity callback; do
      SPEEDLAB_PROFILE_API_SOURCE=$src timeout 120 "$speedlab" profile --force --out "$cr/$name-$src" -- $args \
        >"$cr/$name-$src.log" 2>&1
      note "cost-record $name ($src): exit $?"
      cp "$cr/$name-$src"/*.slstream "$cr/fixtures/$name-$src.slstream" 2>/dev/null
      "$speedlab" report "$cr/$name-$src" --format perfetto >/dev/null 2>&1
      python3 - "$cr/$name-$src" <<'PY' >"$cr/$name-$src.calls.txt" 2>&1
import collections, glob, json, sys
counts = collections.Counter()
for f in glob.glob(sys.argv[1] + "/**/*.json", recursive=True):
    try:
        d = json.load(open(f))
    except Exception:
        continue
    events = d.get("traceEvents", []) if isinstance(d, dict) else d if isinstance(d, list) else []
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and str(e.get("name", "")).startswith(("cu", "cuda")):
            counts[e["name"]] += 1
for name, n in sorted(counts.items()):
    print(f"{n:8d}  {name}")
PY
    done
    # The analysis of both: the lines that differ (times move run to run; findings and kinds must not).
    diff <(sed 's/[0-9][0-9.,]*/N/g' "$cr/$name-activity/report.md") <(sed 's/[0-9][0-9.,]*/N/g' "$cr/$name-callback/report.md") \
      >"$cr/$name.profile-diff.txt" 2>&1
    note "cost-record $name: report.md lines differing apart from numbers: $(grep -c '^[<>]' "$cr/$name.profile-diff.txt")"
    diff "$cr/$name-activity.calls.txt" "$cr/$name-callback.calls.txt" | sed 's/^/  /' | head -40 | tee -a "$summary" "$out/summary.txt"
  done <<CASES
torch_loop python3 scripts/bench/torch_loop.py --steps 30 --repeats 1
cupy_vector python3 examples/cupy_vector.py --n 1048576 --calls 20
numba_pi python3 examples/numba_pi.py --launches 10
storm_small $bin/speedlab_launch_storm --no-cupti --launches 500 --rounds 1
CASES
  tar -C "$cr" -czf "$out/cost-record.tar.gz" fixtures $(cd "$cr" && ls *.txt *.log) \
    $(cd "$cr" && ls -d */report.md 2>/dev/null)
  du -sh "$out/cost-record.tar.gz" | tee -a "$summary" "$out/summary.txt"
fi

if has source; then
  # Source lines (issue 30): speedlab's source pass (--profilers host,cupti,source) on the
  # row-softmax example (cuda-naive: one thread per row, uncoalesced; cuda: one block per
  # row), built out of tree by `scripts/new-kernel-demo.sh prepare` into $carry/sdk, and on
  # the transpose lesson (cuda-naive: strided writes; cuda: tiled); then ncu's source page
  # (SourceCounters) on the same kernels, one launch each. Raw CUPTI records
  # (SPEEDLAB_SOURCE_DUMP), results and ncu CSVs are packed as the fixture source.tar.gz.
  sw="$work/source"; rm -rf "$sw"; mkdir -p "$sw"
  rs="$bin/sdk/row-softmax/build"
  [[ -d $rs ]] || note "source: no $rs (run scripts/new-kernel-demo.sh prepare after gpu-prepare.sh); row-softmax left out"
  fast=(--max-time 0.5 --min-time 0.1 --max-samples 50 --calibrate off --reports markdown,html,json --force)
  src_case() { # name, then speedlab run arguments
    local name=$1; shift
    mkdir -p "$sw/$name/dump"
    SPEEDLAB_SOURCE_DUMP="$sw/$name/dump" timeout 150 "$speedlab" run --profilers host,cupti,source "${fast[@]}" \
      --out "$sw/$name/run" "$@" >"$sw/$name/run.txt" 2>&1
    note "source: $name speedlab exit $? ($(ls "$sw/$name/dump" | wc -l) dumps)"
  }
  ncu_case() { # name, kernel regex, then speedlab run arguments
    local name=$1 kernel=$2; shift 2
    timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source yes \
      -k "regex:$kernel" --launch-skip 1 --launch-count 1 -f -o "$sw/ncu-$name" \
      "$speedlab" run --no-isolate --profilers host --calibrate off --max-samples 3 --min-samples 2 --reports json \
      --force --out "$sw/ncu-$name-run" "$@" >"$sw/ncu-$name.log" 2>&1
    local rc=$?
    ncu -i "$sw/ncu-$name.ncu-rep" --page source --csv --print-source sass >"$sw/ncu-$name-sass.csv" 2>>"$sw/ncu-$name.log"
    ncu -i "$sw/ncu-$name.ncu-rep" --page source --csv --print-source cuda,sass >"$sw/ncu-$name-cuda-sass.csv" 2>>"$sw/ncu-$name.log"
    ncu -i "$sw/ncu-$name.ncu-rep" --page details --csv >"$sw/ncu-$name-details.csv" 2>>"$sw/ncu-$name.log"
    note "source: ncu $name exit $rc"
  }
  rsargs=(--plugin-path "$rs" -w row-softmax -p rows=16384 -p cols=1024)
  tpargs=(-w transpose -p size=4096)
  if [[ -d $rs ]]; then
    src_case softmax "${rsargs[@]}" --variant cuda --variant cuda-naive
    ncu_case softmax-naive softmax_naive "${rsargs[@]}" --variant cuda-naive
    ncu_case softmax-block softmax_block "${rsargs[@]}" --variant cuda
  fi
  src_case transpose "${tpargs[@]}" --variant cuda --variant cuda-naive
  ncu_case transpose-naive naive_kernel "${tpargs[@]}" --variant cuda-naive
  ncu_case transpose-tiled tiled_kernel "${tpargs[@]}" --variant cuda
  python3 scripts/source_table.py "$sw" 2>&1 | tee -a "$summary" "$out/summary.txt"
  tar -C "$work" -czf "$out/source.tar.gz" --exclude='*.ncu-rep' --exclude='traces' --exclude='*.sqlite' \
    --exclude='trace.json' source
  # The fixture for tests/fixtures/source (tests/unit/source_view_test.cpp): per case its
  # results.jsonl and raw dumps, and ncu's CSVs; unpack with tar -xzf ... -C tests/fixtures.
  sf="$work/source-fixture/source"; rm -rf "$work/source-fixture"; mkdir -p "$sf"
  for c in softmax transpose; do
    [[ -f "$sw/$c/run/results.jsonl" ]] || continue
    mkdir -p "$sf/$c" && cp "$sw/$c/run/results.jsonl" "$sf/$c/" && cp -r "$sw/$c/dump" "$sf/$c/"
  done
  cp "$sw"/ncu-*-sass.csv "$sf/" 2>/dev/null
  tar -C "$work/source-fixture" -czf "$out/source-fixture.tar.gz" source
  note "source fixtures: $(du -h "$out/source.tar.gz" | cut -f1) packed, tests/fixtures part $(du -h "$out/source-fixture.tar.gz" | cut -f1)"
fi

if has sol; then
  # Issue 27: the counters' bound (busiest unit of ncu's speed-of-light breakdown: DRAM, L2,
  # L1/shared, the pipes, issue) on the lesson kernels (suites/gpu-sol.yaml) against ncu's
  # SpeedOfLight and ComputeWorkloadAnalysis sections on the same kernels; then `speedlab
  # profile --metrics default` of a CuPy program: roofs (the device model) and bounds in its
  # report. SOL_PARTS: run ncu profile (default all).
  parts=" ${SOL_PARTS:-run ncu profile} "
  sw="$work/sol"; mkdir -p "$sw"
  if [[ $parts == *" run "* ]]; then
    rm -rf "$sw/run"
    timeout 300 "$speedlab" run suites/gpu-sol.yaml --reports json,markdown --force --out "$sw/run" \
      >"$work/logs/sol-run.txt" 2>&1
    note "sol: speedlab run suites/gpu-sol.yaml (counters, default set): exit $?"
    python3 - "$sw/run" <<'PY' 2>&1 | tee -a "$summary" "$out/summary.txt"
import json, sys
d = sys.argv[1]
for line in open(d + "/results.jsonl"):
    p = json.loads(line)
    c = p.get("counters") or {}
    print(f"sol point {p['id']}: {p['status']}; counters {len(c.get('metrics', []))} metrics, {c.get('passes')} passes, "
          f"setup {c.get('setup_wall_ns', 0) / 1e6:.0f} ms, pass wall {c.get('pass_wall_ns', 0) / 1e6:.0f} ms")
a = json.load(open(d + "/results.json"))["analysis"]
for r in a["roofline"]:
    if r.get("kernel") and not r.get("level"):
        print(f"sol roof {r['point_id']} {r['kernel'][:40]}: bound {r.get('counter_bound')} {r.get('counter_bound_pct', 0):.1f}%; "
              f"declared work {r['percent_of_bound']:.1f}% of {r['bound']}")
for f in a["findings"]:
    if f["rule"] in ("far-from-roof", "saturated-pipe", "latency-bound"):
        print(f"sol finding [{f['rule']}] {f['title'][:160]}")
PY
  fi
  if [[ $parts == *" ncu "* && -f "$sw/run/results.json" ]]; then
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu) timeout 420 python3 scripts/sol_table.py "$speedlab" "$sw/run" "$sw/ncu" \
      --suite suites/gpu-sol.yaml >"$sw/sol-table.md" 2>"$work/logs/sol-table.err"
    note "sol table: exit $?"
    cat "$sw/sol-table.md" | tee -a "$summary" "$out/summary.txt"
    cp "$sw/ncu/ncu-sol.log" "$work/logs/" 2>/dev/null
  fi
  if [[ $parts == *" profile "* ]]; then
    rm -rf "$sw/profile"
    timeout 200 "$speedlab" profile --metrics default --out "$sw/profile" -- python3 examples/cupy_vector.py --n 16777216 --calls 5 \
      >"$work/logs/sol-profile.txt" 2>&1
    note "sol profile (CuPy, --metrics default): exit $?; device.json $( [[ -f $sw/profile/device.json ]] && echo present || echo absent)"
    grep -E "device model|warning|error" "$work/logs/sol-profile.txt" | head -5 | tee -a "$summary" "$out/summary.txt"
    sed -n '/^## Roofline/,/^## [^R]/p' "$sw/profile/report.md" 2>/dev/null | head -12 | tee -a "$summary" "$out/summary.txt"
    grep -i "bound" "$sw/profile/report.md" 2>/dev/null | head -8 | tee -a "$summary" "$out/summary.txt"
  fi
  # Fixtures for the CPU tests (tests/fixtures/counters/h100-sol): the run's records and device
  # model, ncu's figures, the profile folder (streams, device.json, report.md).
  tar -C "$sw" -czf "$out/sol-fixture.tar.gz" --exclude='traces' --exclude='*.sqlite' --exclude='trace.json' \
    --exclude='*.html' $(cd "$sw" && ls -d run/results.jsonl run/run.json run/device.json run/results.json run/report.md ncu/sol.json \
    sol-table.md profile 2>/dev/null) 2>/dev/null
  note "sol fixture: $(du -h "$out/sol-fixture.tar.gz" | cut -f1)"
fi

if has profile-source; then
  # `speedlab profile --source` (issue 30) on unmodified programs with the naive row sum of
  # examples/source (one thread per row: uncoalesced loads): CuPy (RawKernel, -lineinfo),
  # Numba (lineinfo=True), plain CUDA (nvcc -lineinfo, each launch timed with events), and
  # CuPy without -lineinfo (SASS offsets only); the cost per launch (cuda_rows alone, under
  # profile, under profile --source: sampled, patched and plain windows); ncu's source page
  # of the same kernel; under nsys. Streams and reports come back in profile-source.tar.gz.
  pw="$work/profile-source"; rm -rf "$pw"; mkdir -p "$pw"
  win=20; n=60
  rows="$bin/cuda_rows"
  if command -v nvcc >/dev/null; then
    nvcc -O3 -lineinfo -arch=sm_90 -o "$pw/cuda_rows" examples/source/cuda_rows.cu >"$pw/nvcc.log" 2>&1 && rows="$pw/cuda_rows"
  fi
  [[ -x $rows ]] || note "profile-source: no cuda_rows (nvcc failed: $(tail -1 "$pw/nvcc.log" 2>/dev/null))"
  pnotes() { # the source notes and the top source line per kernel, from a profile folder
    python3 - "$1" <<'PY' 2>&1 | tee -a "$summary" "$out/summary.txt"
import json, os, sys
d = sys.argv[1]
try:
    facts = json.load(open(os.path.join(d, "profile.json")))
except Exception as e:
    print(f"    no profile.json: {e}"); sys.exit()
for n in facts.get("notes", []):
    print(f"    program note: {n[:300]}")
for p in facts.get("processes", []):
    for n in p.get("notes", []):
        if n.startswith("source") or "CUPTI" in n:
            print(f"    pid {p['pid']} note: {n[:300]}")
try:
    points = json.load(open(os.path.join(d, "results.json"))).get("points", [])
except Exception:
    points = []
for pt in points:
    s = pt.get("source") or {}
    for k in s.get("kernels", [])[:3]:
        for l in k.get("lines", [])[:2]:
            st = ", ".join(f"{x['reason']} {100 * x['share']:.0f}%" for x in l.get("stalls", [])[:2])
            print(f"    {pt['id']} {k['kernel'][:60]} {os.path.basename(l.get('file') or '')}:{l.get('line')} "
                  f"+0x{l.get('pc_offset', 0):x} {100 * l.get('share', 0):.1f}% [{st}] sectors/request "
                  f"{l.get('sectors_per_request')} text {l.get('text', '')[:60]!r}")
    if s:
        print(f"    {pt['id']} pass: {s.get('method')} samples {s.get('total_samples')} dropped "
              f"{s.get('dropped_samples')} pass_wall {s.get('pass_wall_ns', 0) / 1e6:.1f} ms host "
              f"{s.get('setup_wall_ns', 0) / 1e6:.1f} ms")
PY
  }
  psrc() { # name, then the program
    local name=$1; shift
    mkdir -p "$pw/$name/dump"
    local t0=$(date +%s.%N)
    SPEEDLAB_SOURCE_DUMP="$pw/$name/dump" timeout 150 "$speedlab" profile --source --source-launches $win \
      --out "$pw/$name/profile" -- "$@" >"$pw/$name/profile.txt" 2>&1
    local rc=$? t1=$(date +%s.%N)
    note "profile-source $name: exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s wall"
    grep -h -m3 -E 'rows_kernel|rows\.py|\+0x' "$pw/$name/profile/report.md" 2>/dev/null | cut -c1-400 | sed 's/^/    /' | tee -a "$summary" "$out/summary.txt"
    pnotes "$pw/$name/profile"
    grep -c 'rows_kernel\|rows.py' "$pw/$name/profile/report.html" 2>/dev/null | sed 's/^/    report.html lines naming the file: /' | tee -a "$summary" "$out/summary.txt"
  }
  pplain() { # name, then the program: the same under profile without --source
    local name=$1; shift
    local t0=$(date +%s.%N)
    timeout 150 "$speedlab" profile --out "$pw/$name/plain" -- "$@" >"$pw/$name/plain.txt" 2>&1
    local rc=$? t1=$(date +%s.%N)
    note "profile-source $name without --source: exit $rc, $(python3 -c "print(f'{$t1-$t0:.2f}')") s wall"
  }
  psrc cupy-rows python3 examples/source/cupy_rows.py --launches $n
  pplain cupy-rows python3 examples/source/cupy_rows.py --launches $n
  psrc numba-rows python3 examples/source/numba_rows.py --launches $n
  pplain numba-rows python3 examples/source/numba_rows.py --launches $n
  psrc cupy-nolineinfo python3 examples/source/cupy_rows.py --launches 30 --no-lineinfo
  if [[ -x $rows ]]; then
    "$rows" $n >"$pw/cuda-alone.txt" 2>&1; note "profile-source cuda_rows alone: exit $?"
    psrc cuda-rows "$rows" $n
    pplain cuda-rows "$rows" $n
    cp "$pw/cuda-rows/profile.txt" "$pw/cuda-source.txt"; cp "$pw/cuda-rows/plain.txt" "$pw/cuda-plain.txt"
    python3 - "$pw" $win <<'PY' 2>&1 | tee -a "$summary" "$out/summary.txt"
import statistics, sys
d, w = sys.argv[1], int(sys.argv[2])
def times(f):
    out = []
    for line in open(f, errors="replace"):
        p = line.split()
        if len(p) == 3 and p[0] == "launch":
            out.append(float(p[2]))
    return out
runs = {k: times(f"{d}/cuda-{k}.txt") for k in ("alone", "plain", "source")}
def med(v): return f"{statistics.median(v):.4f}" if v else "-"
for k, v in runs.items():
    print(f"  cuda_rows {k}: {len(v)} launches; launch 1 {v[0] if v else '-'} ms; median ms launches 2-{w}: "
          f"{med(v[1:w])}, {w+1}-{2*w}: {med(v[w:2*w])}, {2*w+1}-: {med(v[2*w:])}")
PY
    # ncu's source page of the same kernel (second launch), for agreement.
    ncu_rows() { local name=$1; shift
      timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source yes \
        -k regex:rows_naive --launch-skip 1 --launch-count 1 -f -o "$pw/ncu-$name" "$@" >"$pw/ncu-$name.log" 2>&1
      local rc=$?
      ncu -i "$pw/ncu-$name.ncu-rep" --page source --csv --print-source cuda,sass >"$pw/ncu-$name-cuda-sass.csv" 2>>"$pw/ncu-$name.log"
      note "profile-source: ncu $name exit $rc"
    }
    ncu_rows cuda-rows "$rows" 3
    ncu_rows cupy-rows python3 examples/source/cupy_rows.py --launches 3
    ncu_rows numba-rows python3 examples/source/numba_rows.py --launches 3
    python3 scripts/source_table.py "$pw" 2>&1 | tee -a "$summary" "$out/summary.txt"
    # Under another CUPTI client: nsys around speedlab profile --source (a note, the program runs on).
    timeout 120 "$NSYS" profile -o "$pw/nsys-rows" -f true "$speedlab" profile --source --out "$pw/under-nsys" -- "$rows" 5 \
      >"$pw/under-nsys.txt" 2>&1
    note "profile-source under nsys: exit $?"
    pnotes "$pw/under-nsys"
  fi
  tar -C "$work" -czf "$out/profile-source.tar.gz" --exclude='*.ncu-rep' --exclude='*.nsys-rep' --exclude='*.sqlite' \
    --exclude='trace.json' --exclude='traces' profile-source
  note "profile-source: $(du -h "$out/profile-source.tar.gz" | cut -f1) packed"
fi

note "elapsed: $(( $(date +%s) - t0 )) s"
# Few files come back (8, 16 MiB each): logs and reports packed; traces and sqlite only of
# the one-lesson run.
tar -C "$work" -czf "$out/logs.tar.gz" logs summary.txt 2>/dev/null
tar -C "$work" -czf "$out/reports.tar.gz" --exclude='traces' --exclude='*.sqlite' --exclude='trace.json' \
  $(cd "$work" && ls -d suite sweep crossover python python-bridge 2>/dev/null) 2>/dev/null
[[ -d "$work/lesson-vector" ]] && tar -C "$work" -czf "$out/lesson-vector.tar.gz" lesson-vector
[[ -f "$work/suite/report.md" ]] && cp "$work/suite/report.md" "$out/report.md"
ls -la "$out"
echo "================ summary"
cat "$summary"
