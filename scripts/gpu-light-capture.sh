#!/usr/bin/env bash
# On the GPU machine, over a carry made by scripts/gpu-prepare.sh: what the API calls recorded
# through CUPTI callbacks cost above kernel records alone, paired inside one process (issue
# 41), and the windowed and full streams of the torch loop for the CPU tests.
#   SPEEDLAB_CARRY=$PWD/.device-carry bash .device-carry/scripts/gpu-light-capture.sh [storm torch streams]
#   storm    speedlab_launch_storm --alternate-capture cupti under speedlab profile on the
#            callback path (SPEEDLAB_PROFILE_API_SOURCE=callback): STORM_PROCS processes of
#            STORM_BLOCKS pairs of blocks of STORM_LAUNCHES launches, the session's API
#            callbacks on in one block of a pair and off (kernel records alone) in the other
#   torch    scripts/bench/torch_loop.py --alternate-capture cupti likewise (Python lines off):
#            TORCH_PROCS processes of TORCH_BLOCKS pairs of 50-step blocks
#   streams  the torch loop (300 steps) under speedlab profile, launch calls in 20 ms windows
#            every 200 ms on the callback path, and fully recorded (the default): both
#            folders packed as light-streams.tar.gz (tests/fixtures/profile/light)
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
((${#stages[@]})) || stages=(storm torch streams)
has() { [[ " ${stages[*]} " == *" $1 "* ]]; }
summary="$out/light-summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
pin=()
[[ -n ${CPUS-2-5} ]] && command -v taskset >/dev/null && pin=(taskset -c "${CPUS-2-5}")

if has storm; then
  : >"$work/storm.jsonl"
  for ((r = 0; r < ${STORM_PROCS:-3}; r++)); do
    SPEEDLAB_PROFILE_API_SOURCE=callback timeout 240 "${pin[@]}" "$speedlab" profile --out "$work/storm-$r" -- "$storm" \
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
    SPEEDLAB_PROFILE_API_SOURCE=callback timeout 300 "${pin[@]}" "$speedlab" profile --no-python-lines \
      --out "$work/torch-$r" -- python3 scripts/bench/torch_loop.py --alternate-capture cupti --steps 50 \
      --blocks "${TORCH_BLOCKS:-30}" 2>"$work/logs/torch-$r.err" | grep '"bench"' | tail -1 >>"$work/torch.jsonl"
    note "torch process $r: exit ${PIPESTATUS[0]}"
  done
  python3 scripts/paired_interval.py "$work/torch.jsonl" capture_on_us capture_off_us torch --relative |
    tee -a "$summary"
  cp "$work/torch.jsonl" "$out/"
fi

if has streams; then
  loop=(python3 scripts/bench/torch_loop.py --steps 300 --repeats 1)
  SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled timeout 300 "$speedlab" profile \
    --no-python-lines --out "$work/light/windowed" -- "${loop[@]}" >"$work/logs/windowed.txt" 2>&1
  note "streams windowed: exit $?"
  timeout 300 "$speedlab" profile --no-python-lines --out "$work/light/full" -- "${loop[@]}" >"$work/logs/full.txt" 2>&1
  note "streams full: exit $?"
  for m in windowed full; do
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], "kernels", sum(p.get("kernels",0) for p in d.get("processes",[])) if isinstance(d.get("processes"),list) else "?")' \
      "$work/light/$m/profile.json" "$m" 2>&1 | tee -a "$summary"
  done
  (cd "$work" && tar czf "$out/light-streams.tar.gz" light/*/*.slstream light/*/profile.json)
  note "streams: $(du -sh "$out/light-streams.tar.gz" | cut -f1)"
fi
tar czf "$out/light-logs.tar.gz" -C "$work" logs 2>/dev/null
echo "================ summary"
cat "$summary"
