#!/usr/bin/env bash
# On the GPU machine (gpu-check.sh stage `signals`): a terminated program ends under
# `speedlab profile` as it ends without it (issue 37). For each framework (CuPy, PyTorch) and
# each signal (SIGTERM, SIGINT, SIGHUP), examples/signal_loop.py runs plain and under
# `speedlab profile`; once it has finished some steps the signal goes to the program, to
# speedlab (profile only) or to the process group (the job started with setsid). Each case's
# exit status, the stream's closing reason and its kernel count are printed, one line a case,
# and the table goes to $OUT/signals.md.
#   SPEEDLAB    the speedlab binary (with libspeedlab-inject.so beside it)
#   WORK        a scratch folder; OUT the results folder
#   FRAMEWORKS  default "cupy torch"; SIGNALS default "TERM INT HUP"; TARGETS "program speedlab group"
#   EXTRA_ENV   e.g. "SPEEDLAB_PROFILE_SIGNALS=0" (the library leaves signals alone)
set -uo pipefail
cd "$(dirname "$0")/.."
speedlab=${SPEEDLAB:?the speedlab binary}
work=${WORK:-/tmp/speedlab-signals}; out=${OUT:-$work}
rm -rf "$work"; mkdir -p "$work" "$out"
table="$out/signals.md"
echo "| framework | signal | to | plain | speedlab profile | closed by | kernels | steps at signal |" >"$table"
echo "|---|---|---|---|---|---|---|---|" >>"$table"

reset_signals='import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'

# run_case NAME MODE FW SIG TARGET: one run, its exit status in $work/NAME.rc.
run_case() {
  local name=$1 mode=$2 fw=$3 sig=$4 target=$5 progress="$work/$1.progress" pid rc pgid who
  local cmd=(python3 examples/signal_loop.py --framework "$fw" --seconds 90 --progress "$progress")
  if [[ $mode == profile ]]; then cmd=("$speedlab" profile --out "$work/$name" -- "${cmd[@]}"); fi
  # A script's background job starts with SIGINT ignored; a program started from a terminal
  # has the default: put it back (and SIGTERM's, SIGHUP's) before the exec.
  env ${EXTRA_ENV:-} setsid python3 -c "$reset_signals" "${cmd[@]}" >"$work/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 240); do [[ -s $progress ]] && break; sleep 0.25; done
  sleep 1
  pgid=$(ps -o pgid= -p "$pid" | tr -d ' ')
  case $target in
    program) who=$(cut -d' ' -f2 "$progress" 2>/dev/null); kill -"$sig" "$who" ;;
    speedlab) kill -"$sig" "$pid" ;;
    group) kill -"$sig" -- "-$pgid" ;;
  esac
  cut -d' ' -f1 "$progress" >"$work/$name.steps" 2>/dev/null
  local waited=0
  while kill -0 "$pid" 2>/dev/null && ((waited < 60)); do sleep 0.5; waited=$((waited + 1)); done
  kill -0 "$pid" 2>/dev/null && { echo "still running after 30 s: killed" >>"$work/$name.log"; kill -KILL -- "-$pgid"; }
  wait "$pid"; rc=$?
  echo "$rc" >"$work/$name.rc"
}

stream_cell() { # closed-by and kernels of a profile folder
  python3 - "$1" <<'PY' 2>/dev/null || echo "- | -"
import json, sys
p = [q for q in json.load(open(sys.argv[1] + "/profile.json"))["processes"] if q["used_cuda"]]
by = ",".join(q["tags"].get("closed_by", "truncated" if q["truncated"] else "exit") for q in p) or "no CUDA process"
print(f"{by} | {sum(q['kernels'] for q in p)}")
PY
}

for fw in ${FRAMEWORKS:-cupy torch}; do
  for sig in ${SIGNALS:-TERM INT HUP}; do
    pids=()
    for target in ${TARGETS:-program speedlab group}; do
      run_case "$fw-$sig-$target-profile" profile "$fw" "$sig" "$target" & pids+=($!)
      [[ $target == speedlab ]] || { run_case "$fw-$sig-$target-plain" plain "$fw" "$sig" "$target" & pids+=($!); }
    done
    for p in "${pids[@]}"; do wait "$p"; done
    for target in ${TARGETS:-program speedlab group}; do
      base="$work/$fw-$sig-$target"
      plain=$(cat "$base-plain.rc" 2>/dev/null || echo "-")
      [[ $target == speedlab ]] && plain=$(cat "$work/$fw-$sig-program-plain.rc" 2>/dev/null || echo "-")
      prof=$(cat "$base-profile.rc" 2>/dev/null || echo "-")
      verdict=$([[ $plain == "$prof" ]] && echo same || echo DIFFERENT)
      line="| $fw | SIG$sig | $target | $plain | $prof ($verdict) | $(stream_cell "$base-profile") | $(cat "$base-profile.steps" 2>/dev/null) |"
      echo "$line" | tee -a "$table"
      if [[ $prof == 139 || $verdict == DIFFERENT ]]; then
        echo "--- $base-profile.log (last lines)"; tail -25 "$base-profile.log"
      fi
    done
  done
done
tar -C "$work" -czf "$out/signals.tar.gz" --exclude='*.html' --exclude='*.sqlite' --exclude='trace*.json' . 2>/dev/null
