#!/usr/bin/env bash
# Issue 14 kernel tuning, one GPU-machine call: build scripts/bench/kernels_bench.cu against the
# plugin sources under ROOT (nvcc -O3 -arch=sm_90; the Mandelbrot kernels with -fmad=false as
# the plugin builds them), time speedlab's kernels and the candidates, time the Numba/CuPy
# peers at the same sizes, and read pipe counters with ncu (SASS=1: dump the SASS; NCU2=1: more counters).
#   bash scripts/bench/run_kernels_bench.sh [ROOT]     (ROOT: a tree with sdk/ plugins/ scripts/; default .)
# Writes under $OUT (default ./bench-out): bench.jsonl, peers.jsonl, ncu*.csv, sass.txt, logs.
set -u
ROOT=$(cd "${1:-.}" && pwd)
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > "$OUT/gpu.txt" 2>&1
F=(-O3 -arch=sm_90 -std=c++20 -I"$ROOT/sdk/include" -I"$ROOT/plugins/common" -I"$ROOT/plugins/montecarlo"
   -I"$ROOT/plugins/mandelbrot" -I"$ROOT/scripts/bench")
S=$ROOT/scripts/bench
t0=$(date +%s)
nvcc "${F[@]}" -c "$S/bench_mc.cu" -o "$B/mc.o" > "$OUT/build.log" 2>&1 &
nvcc "${F[@]}" -fmad=false -c "$S/bench_mb.cu" -o "$B/mb.o" >> "$OUT/build.log" 2>&1 &
nvcc "${F[@]}" -c "$S/kernels_bench.cu" -o "$B/main.o" >> "$OUT/build.log" 2>&1
wait
nvcc -arch=sm_90 "$B/mc.o" "$B/mb.o" "$B/main.o" -o "$B/kernels_bench" >> "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
[ "${SASS:-0}" = 1 ] && cuobjdump -sass "$B/kernels_bench" > "$OUT/sass.txt" 2>&1
"$B/kernels_bench" --reps "${REPS:-30}" > "$OUT/bench.jsonl" 2> "$OUT/bench.err"
echo "bench rc=$? $(( $(date +%s) - t0 )) s"
python3 "$S/peers_kernels.py" --reps "${PEER_REPS:-20}" > "$OUT/peers.jsonl" 2> "$OUT/peers.err"
echo "peers rc=$? $(( $(date +%s) - t0 )) s"
if [ "${NCU:-1}" = 1 ]; then
  M=gpu__time_duration.sum,sm__inst_executed.sum,sm__inst_issued.avg.pct_of_peak_sustained_active
  M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed
  M=$M,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active
  M=$M,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
  M=$M,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fp64.sum
  timeout "${NCU_TIMEOUT:-90}" ncu --clock-control none --metrics "$M" --csv "$B/kernels_bench" --once --timed-only ${NCU_ONLY:+--only "$NCU_ONLY"} \
    > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
fi
if [ "${NCU2:-0}" = 1 ]; then
  M2=sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active
  M2=$M2,smsp__inst_executed_pipe_fp64.sum,sm__cycles_elapsed.avg,smsp__cycles_active.avg
  timeout "${NCU_TIMEOUT2:-60}" ncu --clock-control none --metrics "$M2" --csv "$B/kernels_bench" --once --timed-only ${NCU_ONLY:+--only "$NCU_ONLY"} \
    > "$OUT/ncu2.csv" 2> "$OUT/ncu2.err"
  echo "ncu2 rc=$? $(( $(date +%s) - t0 )) s"
fi
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
for f in ("bench.jsonl", "peers.jsonl"):
    p = os.path.join(out, f)
    if not os.path.exists(p): continue
    for line in open(p):
        try: r = json.loads(line)
        except Exception: continue
        if "median_ms" in r:
            print(f"{r['bench']:14} {r.get('params',''):26} {r['kernel']:44} {r['median_ms']:9.4f} ms  ok={r.get('ok','-')}  {str(r.get('check',''))[:60]}")
        elif r.get("ok") is False or "error" in r:
            print("PROBLEM", line.strip()[:200])
PY
