#!/usr/bin/env bash
# What `speedlab profile` costs beside nsys (and torch.profiler), side by side in one call on
# the GPU machine (issue 29, item 2). Over a carry made by scripts/gpu-prepare.sh:
#   SPEEDLAB_CARRY=.device-carry bash .device-carry/scripts/bench/profile_overhead.sh
# or as the gpu-check.sh stages `overhead-bench` (MODE=compare) and `overhead-breakdown`
# (MODE=breakdown); the light capture against --full, the floor, nsys and torch.profiler:
#   SPEEDLAB_CARRY=.device-carry MODE=light bash .device-carry/scripts/bench/profile_overhead.sh
#
# Many short rounds rather than a few long ones: on a shared VM the plain per-step time moves
# by 25% from one minute to the next, so what resolves speedlab from nsys is the difference
# *paired within a round* (the same minute), over many rounds. In every round each tool runs
# a few processes of each workload (STORM_PROCS, TORCH_PROCS), interleaved (tool order rotated per round and per
# process), every process pinned to the same CPU set (CPUS, taskset); a tool's figure for the
# round is the median of its processes. CPUS= (empty) runs them unpinned: on the H100 the
# loop's speedlab - nsys was +92 [+12, +185] us a step pinned to four CPUs and -6 [-108, +30]
# unpinned (docs/results/profile-termination-h100.md). A torch process spends most of its wall time starting
# (import, CUDA, nsys's own start-up: about 9-11 s in the run before this one), so the loop
# gets one process a round and the storm, cheap to start, STORM_PROCS.
#   storm  speedlab_launch_storm --no-cupti: STORM_ROUNDS x STORM_LAUNCHES empty kernel
#          launches, us per launch (plain_us_per_launch, the median round: measured inside
#          the process, so a tracer's start-up and write-out are not in it); and from the
#          same process "storm-call": the median of one more round of STORM_LAUNCHES launch
#          calls each timed (launch_call.plain.median_ns), which the rare stalls of a shared
#          VM (preemption, a buffer hand-over) do not move, unlike a round's total
#   torch  scripts/bench/torch_loop.py: Linear-ReLU-Linear, batch 256, STEPS steps x REPEATS,
#          us per step (the fastest repeat of the process)
#   compile  the same loop with --compile: torch.compile(mode="reduce-overhead"), inductor's
#          kernels replayed as CUDA graphs; us per step likewise. Treated as torch everywhere
#          (TORCH_PROCS processes, COMPILE_TOOLS defaulting to TORCH_TOOLS); the compiled code
#          is cached in TORCHINDUCTOR_CACHE_DIR (/tmp/speedlab-inductor-cache), filled by one
#          plain process before the first round
# MODE=compare (default): plain, speedlab (speedlab profile, the default), nsys (nsys profile
#   -t cuda,nvtx -s none --cpuctxsw none: only makes nsys cheaper); TORCHPROF=1 adds
#   torch.profiler on the training loop, last in each round (outside the rotation).
# (`speedlab` is speedlab profile's default: since 2026-11-29 the light capture, launch calls
# through callbacks in windows; runs before that day measured the full one, now `sl-full`.)
# MODE=breakdown: the storm (and the loop when WORKLOADS names it) under speedlab with one
#   part of the tracing turned off per tool, against the default, paired by round: where
#   each 0.1 us per launch goes. Tools (BREAKDOWN_TOOLS):
#     sl-nodriver   SPEEDLAB_PROFILE_DRIVER_API=0 (no driver API records)
#     sl-noruntime  SPEEDLAB_PROFILE_RUNTIME_API=0 (no runtime API or synchronization records)
#     sl-noapi      both: kernel, copy and memset records only
#     sl-all        SPEEDLAB_PROFILE_API=all (every runtime and driver call: before issue 29)
#     sl-nolaunch   SPEEDLAB_PROFILE_LAUNCH_CALLS=0 (no launch call records; the other calls kept)
#     sl-cb-nolaunch  callback path without launch calls (the other analysis calls kept)
#     sl-cb-nolaunch-sync  and SYNCHRONIZATION records (SPEEDLAB_PROFILE_SYNC_RECORDS=1)
#     sl-sampled    SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled (launch calls in 20 ms of every 200 ms)
#     sl-cb-sampled the same on the callback path (the launch ids' callbacks switched)
#     sl-sync       SPEEDLAB_PROFILE_SYNC_RECORDS=1 (SYNCHRONIZATION records: the default until
#                   2026-11-26, when that day's runs called the tool without them sl-nosync)
#     sl-nonvtx     SPEEDLAB_PROFILE_NVTX=0 (NVTX ranges not captured; the loop has one a step)
#     sl-offset     SPEEDLAB_PROFILE_CLOCK=offset (no CUPTI timestamp callback; offsets read at start)
#     sl-callback   SPEEDLAB_PROFILE_API_SOURCE=callback (API calls from CUPTI callbacks, no
#                   RUNTIME/DRIVER activity records, no driver record nested in a runtime call)
#     sl-activity   SPEEDLAB_PROFILE_API_SOURCE=activity (RUNTIME/DRIVER activity records)
#     sl-cb-offset  both sl-callback and sl-offset
#     nsys          as in MODE=compare: with nsys among the tools, each variant - nsys too
#     cupti-bare    (any mode) CUPTI's kernel, copy and memset records with nothing of speedlab's:
#                   the program plain with CUDA_INJECTION64_PATH=libspeedlab-cupti-floor.so
#                   (profilers/cupti/floor_probe.cpp); results.jsonl gets the kernels it was
#                   handed (probe_kernels) and dropped, or CUPTI's refusal (probe_error)
#     cupti-attach  the same probe with nothing enabled (SPEEDLAB_FLOOR_KINDS=none): CUPTI attached
#     sl-buf1m / sl-buf32m  SPEEDLAB_PROFILE_BUFFER_KIB=1024 / 32768 (CUPTI buffers; default 8 MiB)
#     sl-noflush    --flush-interval 600000 (no periodic flush; default 500 ms)
#     sl-flush50    --flush-interval 50
#     sl-nolines    the default with --no-python-lines
#     sl-cb-all     the default's callbacks recording every launch call (SPEEDLAB_PROFILE_LAUNCH_CALLS=all)
#   (default: plain speedlab sl-nodriver sl-noruntime sl-noapi sl-all sl-buf1m sl-noflush, one
#   storm process each a round)
# MODE=light: the light default (speedlab) against sl-full (speedlab profile --full: every API
#   call as CUPTI activity records), sl-floor (kernel records alone: LAUNCH_CALLS=0 RUNTIME_API=0
#   SPEEDLAB_PROFILE_DRIVER_API=0 --no-python-lines), nsys and torch.profiler (torchprof: a
#   tool of the rotation here, --torch-profile writing its Chrome trace), each paired with
#   plain by round; and each tool's output per process (output_bytes: speedlab's whole --out
#   folder, nsys's .nsys-rep, torch.profiler's trace). defaults: ROUNDS=8
#   BUDGET_S=560 WORKLOADS="storm torch compile" STORM_TOOLS="plain speedlab sl-full sl-floor nsys"
#   TORCH_TOOLS (and COMPILE_TOOLS)="plain speedlab sl-full nsys torchprof"; to
#   $OUT/overhead-light. nsys runs as in MODE=compare: at its default --cuda-graph-trace
#   (graph) a CUDA graph launch is one record, where speedlab records each kernel of it.
# STEADY=1 (with any mode): the steady state of each process, what a capture left on costs
#   once its start-up window (speedlab records the first 200 ms after the first launch call
#   whole) is over: the storm's rounds longer (STORM_ROUNDS=5 STORM_LAUNCHES=100000, about
#   0.5 s a round; its figure stays the median round), the loop timed after --warmup-s 0.5
#   over REPEATS=5 x STEPS=200 and its figure the mean step of all its repeats
#   (mean_us_per_step: windows included in proportion) instead of the fastest; and speedlab
#   records only (--no-report), so a round's time goes to the programs, not to analyses.
#
#   MODE=compare ROUNDS=12 STORM_PROCS=1 TORCH_PROCS=1 STEPS=100 REPEATS=2 STORM_ROUNDS=3
#   STORM_LAUNCHES=20000 BUDGET_S=480 CPUS=2-5 WORKLOADS="storm torch" TORCHPROF=0
#   (MODE=breakdown: ROUNDS=20 BUDGET_S=280)
#   STORM_TOOLS / TORCH_TOOLS / COMPILE_TOOLS override the tool lists of any mode.
# BUDGET_S is honoured before each round (not started when the last round's time would not
# fit) and before each process. Two files come back, $OUT/overhead[-breakdown|-light]/summary.md and
# logs.tar.gz (every process's log and results.jsonl: one line a process, with its wall time).
# The summary (medians with bootstrap 95% intervals; each
# tool's cost against plain, and speedlab - nsys or variant - speedlab, paired by round) to
# $OUT/overhead/summary.md after EVERY round, so a call killed at its limit still brings back
# the table of the rounds done.
set -uo pipefail
start_dir=$(pwd)
cd "$(dirname "$0")/../.."
root=$(pwd)
carry="${SPEEDLAB_CARRY:-.device-carry}"
if [[ $carry != /* ]]; then
  if [[ -d "$start_dir/$carry" ]]; then carry="$start_dir/$carry"; else carry="$root/$carry"; fi
fi
bin=$(cd "$carry" 2>/dev/null && pwd) || { echo "profile_overhead: no carry folder $carry (SPEEDLAB_CARRY)" >&2; exit 2; }
MODE=${MODE:-compare}
[[ $MODE == compare || $MODE == breakdown || $MODE == light ]] ||
  { echo "profile_overhead: MODE=$MODE: compare, breakdown or light" >&2; exit 2; }
out="${OUT:-$root/gpu-out}/overhead"
[[ $MODE == breakdown ]] && out="${OUT:-$root/gpu-out}/overhead-breakdown"
[[ $MODE == light ]] && out="${OUT:-$root/gpu-out}/overhead-light"
work=/tmp/speedlab-overhead-$MODE
rm -rf "$work" "$out"; mkdir -p "$out" "$work/logs"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
[[ -x $NSYS ]] || NSYS=$(command -v nsys || echo "")
# nsys's importer lacks libdw.so.1 on the GPU machine: the carry brings Debian's
# (scripts/gpu-prepare.sh), so that nsys writes its report and its size is measured.
nsys_env=()
[[ -d $bin/nsys-libs ]] && nsys_env=(env "LD_LIBRARY_PATH=$bin/nsys-libs:$LD_LIBRARY_PATH")
[[ $MODE == breakdown ]] && ROUNDS=${ROUNDS:-20} BUDGET_S=${BUDGET_S:-280}
[[ $MODE == light ]] && ROUNDS=${ROUNDS:-8} BUDGET_S=${BUDGET_S:-560}
STEADY=${STEADY:-0} WARMUP_S=0 LOOP_FIGURE=us_per_step
if [[ $STEADY == 1 ]]; then
  STORM_ROUNDS=${STORM_ROUNDS:-5} STORM_LAUNCHES=${STORM_LAUNCHES:-100000} STEPS=${STEPS:-200} REPEATS=${REPEATS:-5}
  WARMUP_S=0.5 LOOP_FIGURE=mean_us_per_step
fi
ROUNDS=${ROUNDS:-12} STORM_PROCS=${STORM_PROCS:-1} TORCH_PROCS=${TORCH_PROCS:-1} STEPS=${STEPS:-100} REPEATS=${REPEATS:-2}
STORM_ROUNDS=${STORM_ROUNDS:-3} STORM_LAUNCHES=${STORM_LAUNCHES:-20000}
BUDGET_S=${BUDGET_S:-480} TORCHPROF=${TORCHPROF:-0}
CPUS=${CPUS-2-5}
if [[ $MODE == compare ]]; then
  WORKLOADS=${WORKLOADS:-"storm torch"}
  STORM_TOOLS=${STORM_TOOLS:-"plain speedlab nsys"}
  TORCH_TOOLS=${TORCH_TOOLS:-"plain speedlab nsys"}
elif [[ $MODE == light ]]; then
  WORKLOADS=${WORKLOADS:-"storm torch compile"}
  STORM_TOOLS=${STORM_TOOLS:-"plain speedlab sl-full sl-floor nsys"}
  TORCH_TOOLS=${TORCH_TOOLS:-"plain speedlab sl-full nsys torchprof"}
else
  WORKLOADS=${WORKLOADS:-"storm"}
  BREAKDOWN_TOOLS=${BREAKDOWN_TOOLS:-"plain speedlab sl-nodriver sl-noruntime sl-noapi sl-all sl-buf1m sl-noflush"}
  STORM_TOOLS=${STORM_TOOLS:-$BREAKDOWN_TOOLS}
  TORCH_TOOLS=${TORCH_TOOLS:-"plain speedlab sl-nonvtx sl-nodriver sl-noapi sl-offset"}
fi
COMPILE_TOOLS=${COMPILE_TOOLS:-$TORCH_TOOLS}
# The compile workload's compiled code (inductor's FX graphs, Triton kernels, autotuning
# choices) in one folder that outlives the processes: a process that finds it there starts in
# seconds instead of compiling for tens of seconds, and launches no autotuning benchmarks.
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/speedlab-inductor-cache}
pin=()
if [[ -n $CPUS ]]; then
  if taskset -c "$CPUS" true 2>/dev/null; then pin=(taskset -c "$CPUS")
  else echo "profile_overhead: taskset -c $CPUS failed here ($(nproc) cores): processes not pinned" >&2; CPUS=""; fi
fi
speedlab="$bin/speedlab"
storm="$bin/speedlab_launch_storm"
floor_probe="$bin/libspeedlab-cupti-floor.so" # cupti-bare, cupti-attach (profilers/cupti/floor_probe.cpp)
loop="$root/scripts/bench/torch_loop.py"
results="$work/results.jsonl" # packed with the logs: few files come back from the GPU machine
: >"$results"
t0=$(date +%s)
say() { echo "$*" | tee -a "$work/log.txt"; }
say "profile_overhead ($MODE): $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1);" \
  "$(nproc) cores, pinned to ${CPUS:-none}; rounds $ROUNDS, processes per tool and round: storm $STORM_PROCS, torch (and compile) $TORCH_PROCS; workloads $WORKLOADS;" \
  "steps $STEPS x $REPEATS (warm-up ${WARMUP_S} s, figure $LOOP_FIGURE), storm $STORM_ROUNDS x $STORM_LAUNCHES; budget $BUDGET_S s; nsys ${NSYS:-none};" \
  "$(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1)"

# The program's command line for one workload.
program() { # workload [extra args]
  case $1 in
    storm) echo "$storm --no-cupti --rounds $STORM_ROUNDS --launches $STORM_LAUNCHES" ;;
    compile) echo "python3 $loop --compile --steps $STEPS --repeats $REPEATS --warmup-s $WARMUP_S" ;;
    *) echo "python3 $loop --steps $STEPS --repeats $REPEATS --warmup-s $WARMUP_S" ;;
  esac
}

# One process of one tool: its output in the log.
run_one() { # workload tool log
  local w=$1 tool=$2 log=$3 prog
  prog=$(program "$w")
  local -a sl=("$speedlab" profile --force --out "$work/prof")
  [[ $STEADY == 1 ]] && sl+=(--no-report)
  # A compile process that finds no cached code (the warm-up process failed) compiles for
  # tens of seconds: more room than the others.
  local tmo=120
  [[ $w == compile ]] && tmo=300
  case $tool in
    plain) timeout $tmo "${pin[@]}" $prog ;;
    speedlab) timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-full) timeout $tmo "${pin[@]}" "${sl[@]}" --full -- $prog ;;
    sl-nolines) timeout $tmo "${pin[@]}" "${sl[@]}" --no-python-lines -- $prog ;;
    sl-cb-all) SPEEDLAB_PROFILE_LAUNCH_CALLS=all timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-floor) SPEEDLAB_PROFILE_RUNTIME_API=0 SPEEDLAB_PROFILE_DRIVER_API=0 SPEEDLAB_PROFILE_LAUNCH_CALLS=0 timeout $tmo "${pin[@]}" "${sl[@]}" --no-python-lines -- $prog ;;
    sl-all) SPEEDLAB_PROFILE_API=all timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-nodriver) SPEEDLAB_PROFILE_DRIVER_API=0 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-noruntime) SPEEDLAB_PROFILE_RUNTIME_API=0 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-noapi) SPEEDLAB_PROFILE_RUNTIME_API=0 SPEEDLAB_PROFILE_DRIVER_API=0 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-nolaunch) SPEEDLAB_PROFILE_LAUNCH_CALLS=0 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-cb-nolaunch) SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_LAUNCH_CALLS=0 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-cb-nolaunch-sync) SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_LAUNCH_CALLS=0 SPEEDLAB_PROFILE_SYNC_RECORDS=1 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-sampled) SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-cb-sampled) SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-sync) SPEEDLAB_PROFILE_SYNC_RECORDS=1 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-nonvtx) SPEEDLAB_PROFILE_NVTX=0 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-offset) SPEEDLAB_PROFILE_CLOCK=offset timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-callback) SPEEDLAB_PROFILE_API_SOURCE=callback timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-activity) SPEEDLAB_PROFILE_API_SOURCE=activity timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-cb-offset) SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_CLOCK=offset timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-buf1m) SPEEDLAB_PROFILE_BUFFER_KIB=1024 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-buf32m) SPEEDLAB_PROFILE_BUFFER_KIB=32768 timeout $tmo "${pin[@]}" "${sl[@]}" -- $prog ;;
    sl-noflush) timeout $tmo "${pin[@]}" "${sl[@]}" --flush-interval 600000 -- $prog ;;
    sl-flush50) timeout $tmo "${pin[@]}" "${sl[@]}" --flush-interval 50 -- $prog ;;
    cupti-bare) CUDA_INJECTION64_PATH=$floor_probe timeout $tmo "${pin[@]}" $prog ;;
    cupti-attach) SPEEDLAB_FLOOR_KINDS=none CUDA_INJECTION64_PATH=$floor_probe timeout $tmo "${pin[@]}" $prog ;;
    nsys) [[ -n $NSYS ]] && timeout $tmo "${pin[@]}" "${nsys_env[@]}" "$NSYS" profile -t cuda,nvtx -s none --cpuctxsw none -o "$work/nsys" --force-overwrite true $prog ;;
    torchprof) [[ $w == torch || $w == compile ]] &&
      timeout $tmo "${pin[@]}" $prog --torch-profile --torch-trace "$work/torchprof.json" ;;
    *) echo "profile_overhead: unknown tool $tool" ;;
  esac >"$log" 2>&1
  local rc=$?
  # What speedlab's stream holds (records, dropped), for the breakdown's "what is still recorded".
  if [[ $tool == speedlab || $tool == sl-* ]] && [[ -d $work/prof ]]; then
    # the streams alone (the folder also holds the reports written after the program ended)
    find "$work/prof" -name '*.slstream' -printf '%s\n' 2>/dev/null | awk '{s += $1} END {print "STREAM_BYTES " s + 0}' >>"$log"
    # and what a user keeps: the whole folder (streams, profile.json, reports, device.json)
    find "$work/prof" -type f -printf '%s\n' 2>/dev/null | awk '{s += $1} END {print "OUTPUT_BYTES " s + 0}' >>"$log"
  fi
  # nsys's output is its report file, torch.profiler's the Chrome trace the loop exported.
  if [[ $tool == nsys && -f $work/nsys.nsys-rep ]]; then echo "OUTPUT_BYTES $(stat -c %s "$work/nsys.nsys-rep")" >>"$log"; fi
  if [[ $tool == torchprof && -f $work/torchprof.json ]]; then echo "OUTPUT_BYTES $(stat -c %s "$work/torchprof.json")" >>"$log"; fi
  # Once per speedlab tool (breakdown, first round): which API calls its stream recorded, by
  # name and count (is a driver record written for the driver call inside each runtime launch?).
  if [[ $MODE == breakdown && ${round:-0} == 1 && ${p:-0} == 0 && -d $work/prof && ! -f $work/api-names-$w-$tool.txt ]]; then
    timeout 60 "$speedlab" report "$work/prof" --format perfetto >/dev/null 2>&1
    python3 - "$work/prof" >"$work/api-names-$w-$tool.txt" 2>&1 <<'PY'
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
            counts[(e.get("cat", ""), e["name"])] += 1
for (cat, name), n in counts.most_common(40):
    print(f"{n:8d}  {cat}  {name}")
PY
  fi
  rm -rf "$work/prof" "$work"/nsys.* "$work/torchprof.json"
  return $rc
}

# The tables of the rounds done so far (written after every round and at the end).
summarize() {
  MODE=$MODE LOOP_FIGURE=$LOOP_FIGURE python3 "$root/scripts/bench/overhead_summary.py" "$results"
  for f in "$work"/api-names-*.txt; do
    [[ -f $f ]] || continue
    printf '\n%s (which calls the stream recorded, first round):\n```\n' "$(basename "$f" .txt)"
    cat "$f"
    printf '```\n'
  done
  printf '\nlog:\n```\n'
  cat "$work/log.txt"
  printf '```\n'
}

# One process: run it, then append its figure to results.jsonl.
measure() { # workload tool round proc
  local w=$1 tool=$2 r=$3 p=$4 log s0 rc wall
  log="$work/logs/$w-$tool-$r-$p.txt"
  s0=${EPOCHREALTIME/./}
  run_one "$w" "$tool" "$log"; rc=$?
  local us=$((${EPOCHREALTIME/./} - s0))
  wall=$((us / 1000000)).$(printf %06d $((us % 1000000)))
  last_wall[$w:$tool]=$(((us + 999999) / 1000000))
  python3 - "$log" "$w" "$tool" "$r" "$p" "$rc" "$wall" "$LOOP_FIGURE" <<'PY' >>"$results"
import json, sys
log, w, tool, rnd, proc, rc, wall, loop_figure = sys.argv[1:]


def placement(threads):
    """The program's main thread's last CPU and the other threads that last ran there."""
    if not threads:
        return {}
    main = min(threads, key=lambda t: t["tid"])
    beside = sorted(t["name"] for t in threads if t is not main and t["cpu"] == main["cpu"])
    return {"main_cpu": main["cpu"], "beside_main": beside}


key = "plain_us_per_launch" if w == "storm" else loop_figure
value, stream_bytes, output_bytes, call_us, threads, probe = None, None, None, None, None, {}
for line in open(log, errors="replace"):
    if line.startswith("{"):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        value = d.get(key, value)
        probe = d.get("cupti_floor", probe)  # cupti-bare/-attach: the records CUPTI handed over
        threads = d.get("threads", threads)
        call = d.get("launch_call", {}).get("plain", {}).get("median_ns") if isinstance(d.get("launch_call"), dict) else None
        if call is not None:
            call_us = call / 1000
    elif line.startswith("STREAM_BYTES "):
        stream_bytes = int(line.split()[1])
    elif line.startswith("OUTPUT_BYTES "):
        output_bytes = int(line.split()[1])
# A probe that was not loaded, or that CUPTI refused, traced nothing: its process ran plain, so
# it has no figure as the probe's (the summary lists it among the processes without one).
if tool.startswith("cupti-") and (not probe or probe.get("error")):
    value = None
print(json.dumps({"workload": w, "tool": tool, "round": int(rnd), "proc": int(proc), "value": value, "unit": key,
                  "exit": int(rc), "wall_s": float(wall), "stream_bytes": stream_bytes, "output_bytes": output_bytes,
                  "call_us": call_us, **placement(threads),
                  **({"probe_kernels": probe.get("kernel"), "probe_dropped": probe.get("dropped"),
                      "probe_error": probe.get("error")} if probe else {})}))
PY
}

declare -A last_wall # workload:tool -> seconds its last process took
# One plain compile process first, to fill TORCHINDUCTOR_CACHE_DIR: no measured process then
# compiles (its start-up would go to whichever tool the first round put first).
if [[ " $WORKLOADS " == *" compile "* ]]; then
  timeout 300 "${pin[@]}" $(program compile) >"$work/logs/compile-warm.txt" 2>&1
  say "compile cache $TORCHINDUCTOR_CACHE_DIR filled: exit $?, $(($(date +%s) - t0)) s"
fi
round_s=0
stop=""
round=0
while ((round < ROUNDS)) && [[ -z $stop ]]; do
  elapsed=$(($(date +%s) - t0))
  if ((elapsed + round_s > BUDGET_S)); then
    say "budget of $BUDGET_S s: round $((round + 1)) (about $round_s s) does not fit after $elapsed s; $round round(s) done"
    break
  fi
  round=$((round + 1))
  round_t0=$(date +%s)
  for w in $WORKLOADS; do
    case $w in storm) tools=($STORM_TOOLS) ;; compile) tools=($COMPILE_TOOLS) ;; *) tools=($TORCH_TOOLS) ;; esac
    n=${#tools[@]}
    [[ $w == storm ]] && procs=$STORM_PROCS || procs=$TORCH_PROCS
    for ((p = 0; p < procs; p++)); do
      for ((i = 0; i < n; i++)); do
        tool=${tools[$(((i + round + p) % n))]} # rotated: no tool always runs first
        elapsed=$(($(date +%s) - t0))
        if ((elapsed + ${last_wall[$w:$tool]:-0} > BUDGET_S)); then
          stop="budget of $BUDGET_S s spent at $elapsed s in round $round (before $w/$tool)"
          break 3
        fi
        measure "$w" "$tool" "$round" "$p"
      done
    done
    # torch.profiler last, outside the rotation (optional: it is not what the issue compares;
    # MODE=light has it inside the rotation instead).
    if [[ ($w == torch || $w == compile) && $TORCHPROF == 1 && $MODE == compare ]]; then
      for ((p = 0; p < TORCH_PROCS; p++)); do measure "$w" torchprof "$round" "$p"; done
    fi
  done
  round_s=$(($(date +%s) - round_t0))
  say "round $round done at $(($(date +%s) - t0)) s ($round_s s)"
  if ((round == 1)); then
    # What runs outside the pinned CPUs after a round: a tracer's daemon left running (nsys
    # starts one) works beside the program on any CPU, where speedlab's threads are pinned.
    ps -eo pid,psr,comm,args --no-headers 2>/dev/null | awk 'tolower($3) ~ /nsys|qdstrm|speedlab/' |
      while read -r pid psr comm rest; do
        say "after round 1: pid $pid cpu $psr $comm ($(taskset -pc "$pid" 2>/dev/null | sed 's/.*: //')): ${rest:0:120}"
      done
  fi
  summarize >"$out/summary.md.new" 2>&1 && mv "$out/summary.md.new" "$out/summary.md"
done
[[ -n $stop ]] && say "$stop"

summarize >"$out/summary.md.new" 2>&1 && mv "$out/summary.md.new" "$out/summary.md"
cat "$out/summary.md"
tar -C "$work" -czf "$out/logs.tar.gz" logs results.jsonl
say "profile_overhead ($MODE): done in $(($(date +%s) - t0)) s; $out/summary.md"
summarize >"$out/summary.md.new" 2>&1 && mv "$out/summary.md.new" "$out/summary.md"
