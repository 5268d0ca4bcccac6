#!/usr/bin/env bash
# On the GPU machine: where a program that ends badly after a signal under `speedlab profile`
# is when it fails. cuda-gdb (the GPU machine has no gdb) attaches to the program, lets the
# signal through and stops at SIGSEGV: the crashing thread's innermost and outermost frames
# and its stack pointer. Use an unstripped libspeedlab-inject.so (build/, not .device-carry/).
#   bash scripts/gpu-signals-diag.sh SPEEDLAB [cupy|torch] [TERM|INT|HUP]
set -uo pipefail
cd "$(dirname "$0")/.."
sl=$1; fw=${2:-cupy}; sig=${3:-TERM}; w=/tmp/sigdiag-$fw-$sig; rm -rf "$w"; mkdir -p "$w"
export PATH=/usr/local/cuda/bin:$PATH
setsid "$sl" profile --out "$w/prof" -- python3 examples/signal_loop.py --framework "$fw" --seconds 60 \
  --progress "$w/progress" >"$w/log" 2>&1 & pid=$!
for _ in $(seq 240); do [[ -s $w/progress ]] && break; sleep 0.25; done
prog=$(cut -d' ' -f2 "$w/progress")
timeout 90 cuda-gdb -p "$prog" -batch -ex "set pagination off" -ex "handle SIGTERM nostop noprint pass" \
  -ex "handle SIGINT nostop noprint pass" -ex "handle SIGHUP nostop noprint pass" -ex "handle SIGSEGV stop print" \
  -ex continue -ex "info threads" -ex "bt 6" -ex "bt -4" -ex "info registers rsp" >"$w/gdb.txt" 2>&1 & g=$!
sleep 8
kill -"$sig" "$prog"
timeout 80 tail --pid=$g -f /dev/null
kill -KILL $g 2>/dev/null; sleep 1; kill -KILL -- -$pid 2>/dev/null
wait $pid; echo "speedlab exit $?"
grep -v "^\[New Thread\|^\[Thread .* exited\|^\[New LWP" "$w/gdb.txt" | head -60
echo "--- log"; tail -20 "$w/log"
