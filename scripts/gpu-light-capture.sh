#!/usr/bin/env bash
# On the GPU machine, over a carry made by scripts/gpu-prepare.sh: what the API calls recorded
# through CUPTI callbacks cost above kernel records alone, paired inside one process (issue
# 41), and the windowed and full streams of the torch loop for the CPU tests.
#   SPEEDLAB_CARRY=$PWD/.device-carry bash .device-carry/scripts/gpu-light-capture.sh [storm torch streams counts]
#   storm    speedlab_launch_storm --alternate-capture cupti under speedlab profile on the
#            callback path with every launch call (API_SOURCE=callback LAUNCH_CALLS=all): STORM_PROCS processes of
#            STORM_BLOCKS pairs of blocks of STORM_LAUNCHES launches, the session's API
#            callbacks on in one block of a pair and off (kernel records alone) in the other
#   torch    scripts/bench/torch_loop.py --alternate-capture cupti likewise (Python lines off):
#            TORCH_PROCS processes of TORCH_BLOCKS pairs of 50-step blocks
#   default  the light default's whole cost against kernel records alone, paired inside one
#            process: speedlab_launch_storm --alternate-capture cupti under the default (launch
#            calls in windows; off: every API callback disabled), DEFAULT_PROCS processes of
#            DEFAULT_BLOCKS pairs of DEFAULT_LAUNCHES-launch blocks (each about a period; speedlab's
#            analysis of millions of kernels is slow: 9.6 million outlived 240 s)
#   default-torch  the same on the torch loop (torch_loop.py --alternate-capture cupti, Python
#            lines on), DT_PROCS processes of DT_BLOCKS pairs of DT_STEPS-step blocks
#   streams  the torch loop (300 steps) under speedlab profile's default (launch calls in 20 ms
#            windows every 200 ms) and --full, Python lines off: both folders packed as
#            light-streams.tar.gz (tests/fixtures/profile/light)
#   lines    the same with Python lines on (the default's own): light-lines.tar.gz
#            (tests/fixtures/profile/light-lines)
#   counts   (only when named) kernels counted by speedlab profile's default against nsys on
#            four programs: the storm (2 x 20000 launches), scripts/bench/cupy_loop.py, the
#            torch loop and the compile loop (torch_loop.py [--compile] --steps 100): one line
#            a program in the summary and in counts.jsonl (scripts/kernel_counts.py)
#   topology (only when named) which CPUs share a core or a socket (lscpu -e), to read the
#            placement tables of profile_overhead.sh STEADY=1 by: topology.txt
# Writes under $OUT (or ./gpu-out); prints a summary last.
set -uo pipefail
start_dir=$(pwd)
cd "$(dirname "$0")/.."
root=$(pwd)
carry="${SPEEDLAB_CARRY:-.device-carry}"
[[ $carry == /* ]] || carry="$start_dir/$carry"
speedlab="$carry/speedlab"
storm="$carry/speedlab_launch_storm"
out="${OUT:-$root/gpu-out}"
work=/tmp/speedlab-light
rm -rf "$work"
mkdir -p "$out" "$work/logs"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"
stages=("$@")
# counts is not in the default list: it adds a few minutes (per program a plain process and
# two traced ones, and an nsys export; the compile loop's first process compiles).
((${#stages[@]})) || stages=(storm torch streams)
has() { [[ " ${stages[*]} " == *" $1 "* ]]; }
summary="$out/light-summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
pin=()
[[ -n ${CPUS-2-5} ]] && command -v taskset >/dev/null && pin=(taskset -c "${CPUS-2-5}")

if has topology; then
  { lscpu -e 2>&1; echo; lscpu 2>&1 | grep -i 'thread\|core\|socket\|numa\|model name'; } >"$out/topology.txt"
  note "topology: $(lscpu -e=CPU,CORE,SOCKET 2>/dev/null | awk 'NR > 1 && $1 >= 2 && $1 <= 5 {printf "cpu %s core %s socket %s; ", $1, $2, $3}')"
fi

if has storm; then
  : >"$work/storm.jsonl"
  for ((r = 0; r < ${STORM_PROCS:-3}; r++)); do
    SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_LAUNCH_CALLS=all timeout 240 "${pin[@]}" "$speedlab" profile \
      --out "$work/storm-$r" -- "$storm" \
      --no-cupti --alternate-capture cupti --blocks "${STORM_BLOCKS:-30}" --launches "${STORM_LAUNCHES:-20000}" \
      2>"$work/logs/storm-$r.err" | grep '"benchmark"' | tail -1 >>"$work/storm.jsonl"
    note "storm process $r: exit ${PIPESTATUS[0]}"
  done
  python3 scripts/paired_interval.py "$work/storm.jsonl" capture_on_us_per_launch capture_off_us_per_launch storm \
    --unit " us/launch" | tee -a "$summary"
  python3 scripts/paired_interval.py "$work/storm.jsonl" capture_on_call_median_ns capture_off_call_median_ns \
    storm-call --unit " ns/call" | tee -a "$summary"
  cp "$work/storm.jsonl" "$out/"
fi

if has torch; then
  : >"$work/torch.jsonl"
  for ((r = 0; r < ${TORCH_PROCS:-2}; r++)); do
    SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_LAUNCH_CALLS=all timeout 300 "${pin[@]}" "$speedlab" profile --no-python-lines \
      --out "$work/torch-$r" -- python3 scripts/bench/torch_loop.py --alternate-capture cupti --steps 50 \
      --blocks "${TORCH_BLOCKS:-30}" 2>"$work/logs/torch-$r.err" | grep '"bench"' | tail -1 >>"$work/torch.jsonl"
    note "torch process $r: exit ${PIPESTATUS[0]}"
  done
  python3 scripts/paired_interval.py "$work/torch.jsonl" capture_on_us capture_off_us torch --relative |
    tee -a "$summary"
  cp "$work/torch.jsonl" "$out/"
fi

if has default; then
  : >"$work/default.jsonl"
  for ((r = 0; r < ${DEFAULT_PROCS:-3}; r++)); do
    # --no-report: the analysis of a million kernels outlives the stage; the first process's
    # folder is reported after the last (its windows' notes).
    timeout 240 "${pin[@]}" "$speedlab" profile --no-report --out "$work/default-$r" -- "$storm" --no-cupti \
      --alternate-capture cupti --blocks "${DEFAULT_BLOCKS:-16}" --launches "${DEFAULT_LAUNCHES:-50000}" \
      2>"$work/logs/default-$r.err" | grep '"benchmark"' | tail -1 >>"$work/default.jsonl"
    note "default process $r: exit ${PIPESTATUS[0]}"
  done
  timeout 150 "$speedlab" report "$work/default-0" >"$work/logs/default-report.txt" 2>&1
  grep -h "launch calls recorded\|switched the API" "$work/default-0"/report.md 2>/dev/null | head -2 | cut -c1-300 >>"$summary"
  # The windows' own figures (are the recorded launch calls the windows' own? launch_calls_outside)
  python3 -c 'import json,sys; [print("default-0 launch_sampling:", json.dumps(p.get("launch_sampling"))) for p in json.load(open(sys.argv[1]))["program"]["processes"]]' \
    "$work/default-0/results.json" 2>&1 | tee -a "$summary"
  python3 scripts/paired_interval.py "$work/default.jsonl" capture_on_us_per_launch capture_off_us_per_launch default \
    --unit " us/launch" | tee -a "$summary"
  cp "$work/default.jsonl" "$out/"
fi

if has default-torch; then
  # The same pairing on the torch loop, Python lines on (the default's own): blocks of
  # DT_STEPS steps (a period or more each, so each block holds a window or two).
  : >"$work/default-torch.jsonl"
  for ((r = 0; r < ${DT_PROCS:-3}; r++)); do
    timeout 240 "${pin[@]}" "$speedlab" profile --no-report --out "$work/default-torch-$r" -- python3 scripts/bench/torch_loop.py \
      --alternate-capture cupti --steps "${DT_STEPS:-200}" --blocks "${DT_BLOCKS:-40}" 2>"$work/logs/default-torch-$r.err" |
      grep '"bench"' | tail -1 >>"$work/default-torch.jsonl"
    note "default-torch process $r: exit ${PIPESTATUS[0]}"
  done
  python3 scripts/paired_interval.py "$work/default-torch.jsonl" capture_on_us capture_off_us default-torch --relative |
    tee -a "$summary"
  cp "$work/default-torch.jsonl" "$out/"
fi

# The torch loop under the default and --full: `light` (Python lines off) or `light-lines`.
record_pair() { # folder [--no-python-lines]
  local dir=$1 lines=${2:-}
  local loop=(python3 scripts/bench/torch_loop.py --steps 300 --repeats 1)
  timeout 300 "$speedlab" profile $lines --out "$work/$dir/windowed" -- "${loop[@]}" >"$work/logs/$dir-windowed.txt" 2>&1
  note "$dir windowed (the default): exit $?"
  timeout 300 "$speedlab" profile $lines --full --out "$work/$dir/full" -- "${loop[@]}" >"$work/logs/$dir-full.txt" 2>&1
  note "$dir full: exit $?"
  for m in windowed full; do
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], "kernels", sum(p.get("kernels",0) for p in d.get("processes",[])) if isinstance(d.get("processes"),list) else "?")' \
      "$work/$dir/$m/profile.json" "$dir/$m" 2>&1 | tee -a "$summary"
  done
  (cd "$work" && tar czf "$out/$dir.tar.gz" "$dir"/*/*.slstream "$dir"/*/profile.json "$dir"/*/report.md)
  note "$dir: $(du -sh "$out/$dir.tar.gz" | cut -f1)"
}
has streams && record_pair light --no-python-lines
has lines && record_pair light-lines
if has counts; then
  # Each tool traces a process of its own, so the counts compare two processes: they are
  # equal only because these programs launch a fixed number of kernels (fixed launches,
  # iterations and steps, no data-dependent work). What could make them differ without a
  # missed record: autotuning that launches benchmark kernels (inductor on a cold cache), so
  # one plain process of each program runs first and fills the caches (inductor's, CuPy's
  # kernels), and both traced processes find them filled.
  NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
  [[ -x $NSYS ]] || NSYS=$(command -v nsys || echo "")
  # nsys's importer needs libdw.so.1, which the GPU machine lacks: the carry brings Debian's
  # (scripts/gpu-prepare.sh); nsys profile runs the importer itself, with this environment.
  nsys_env=()
  [[ -d $carry/nsys-libs ]] && nsys_env=(env "LD_LIBRARY_PATH=$carry/nsys-libs:$LD_LIBRARY_PATH")
  export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/speedlab-inductor-cache} # kept between processes
  : >"$work/counts.jsonl"
  mkdir -p "$work/counts"
  for name in ${COUNTS:-storm cupy torch compile}; do
    case $name in
      storm) prog=("$storm" --no-cupti --rounds 2 --launches 20000) ;;
      cupy) prog=(python3 scripts/bench/cupy_loop.py) ;;
      torch) prog=(python3 scripts/bench/torch_loop.py --steps 100 --repeats 1) ;;
      compile) prog=(python3 scripts/bench/torch_loop.py --compile --steps 100 --repeats 1) ;;
    esac
    c="$work/counts/$name"
    timeout 300 "${pin[@]}" "${prog[@]}" >"$work/logs/counts-$name-plain.txt" 2>&1
    rc_plain=$?
    timeout 300 "${pin[@]}" "$speedlab" profile --out "$c-sl" -- "${prog[@]}" >"$work/logs/counts-$name-speedlab.txt" 2>&1
    rc_sl=$?
    timeout 300 "${pin[@]}" "$speedlab" profile --full --out "$c-full" -- "${prog[@]}" >"$work/logs/counts-$name-full.txt" 2>&1
    rc_full=$?
    rc_nsys=none
    if [[ -n $NSYS ]]; then
      # --cuda-graph-trace=node: at its default (graph) nsys writes one record per CUDA graph
      # launch and none for the kernels inside, which speedlab counts one by one (the compile
      # loop replays graphs); the other options as profile_overhead.sh calls nsys.
      timeout 300 "${pin[@]}" "${nsys_env[@]}" "$NSYS" profile -t cuda,nvtx -s none --cpuctxsw none --cuda-graph-trace=node \
        -o "$c-nsys" --force-overwrite true "${prog[@]}" >"$work/logs/counts-$name-nsys.txt" 2>&1
      rc_nsys=$?
      timeout 300 "${nsys_env[@]}" "$NSYS" export --type sqlite --force-overwrite true --output "$c-nsys.sqlite" "$c-nsys.nsys-rep" \
        >"$work/logs/counts-$name-export.txt" 2>&1
    fi
    # Without the carry's libdw nsys cannot import its capture there (GPU-MACHINE.md): then
    # the default is counted against --full and the program's own count alone.
    ns=(); [[ -f $c-nsys.sqlite ]] && ns=(--nsys "$c-nsys.sqlite")
    line=$(timeout 120 python3 scripts/kernel_counts.py --speedlab "$c-sl" --full "$c-full" "${ns[@]}" --label "$name" 2>&1 | tail -1)
    echo "$line" >>"$work/counts.jsonl"
    note "counts $name (exit: plain $rc_plain, speedlab $rc_sl, --full $rc_full, nsys $rc_nsys): $line"
  done
  cp "$work/counts.jsonl" "$out/"
  # The speedlab folders' reports (not the streams) and the nsys logs come back with the logs.
  for f in "$work"/counts/*-sl/results.json; do [[ -f $f ]] && cp "$f" "$work/logs/counts-$(basename "$(dirname "$f")").json"; done
fi
tar czf "$out/light-logs.tar.gz" -C "$work" logs 2>/dev/null
echo "================ summary"
cat "$summary"
