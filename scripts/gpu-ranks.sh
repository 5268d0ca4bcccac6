#!/usr/bin/env bash
# Two ranks on the GPU machine (device tool), with the files of .device-carry-ranks/ carried
# (BACKEND=nccl on a machine with two GPUs; MPI=0 and FIXTURES=0 leave those parts out):
# speedlab, libspeedlab-inject.so, ddp_train.py, ranks_summary.py and this script.
#   bash .device-carry-ranks/gpu-ranks.sh
# examples/ddp_train.py under torchrun --nproc_per_node 2 (gloo: two ranks can share one GPU;
# NCCL refuses that), profiled with speedlab inside each rank and outside around torchrun,
# plain and with rank 1 slowed (--slow-rank 1), beside torch.profiler's per-rank kernel totals
# for the same steps (a run of its own: two CUPTI clients in one process collide); mpirun -n 2
# when the machine has it; small two-rank fixtures. Everything is packed into $OUT/ranks.tgz;
# the comparison table (ranks_summary.py) is printed last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="${OUT:-$PWD/gpu-out}"
work=/tmp/speedlab-ranks
rm -rf "$work"; mkdir -p "$work/logs" "$out"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=2
S="$here/speedlab"
T="$here/ddp_train.py"
STEPS=${STEPS:-24}
SLOW_MS=${SLOW_MS:-20}
ARGS="--backend ${BACKEND:-gloo} --steps $STEPS --warmup 4 --width 1024 --batch 128"
port=29600
log() { echo "[$(date +%T)] $*" | tee -a "$work/logs/steps.txt"; }
T0=$(date +%s)
run() { # name, command... (skipped past BUDGET_S seconds, so that the results are still packed)
  local name=$1; shift
  if (($(date +%s) - T0 > ${BUDGET_S:-210})); then log "$name: skipped (past ${BUDGET_S:-210} s)"; return; fi
  port=$((port + 1))
  log "$name: $*"
  local t=$(date +%s)
  MASTER_PORT=$port timeout ${RUN_TIMEOUT_S:-60} "$@" >"$work/logs/$name.out" 2>"$work/logs/$name.err"
  local rc=$?
  log "$name: exit $rc, $(($(date +%s) - t)) s"
}
{
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  echo "mpirun: $(command -v mpirun || echo none)"; mpirun --version 2>&1 | head -2
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.device_count(), 'gpus')"
  echo "cores: $(nproc)"
} >"$work/logs/machine.txt" 2>&1
cat "$work/logs/machine.txt"

for mode in ${MODES:-plain slow}; do
  extra=""; [[ $mode == slow ]] && extra="--slow-rank 1 --slow-ms $SLOW_MS"
  # speedlab inside each rank: torchrun starts speedlab (--no-python), which writes DIR/rank-<R>.
  run "in-$mode" torchrun --standalone --nproc_per_node 2 --no-python "$S" profile --out "$work/in-$mode" -- python3 "$T" $ARGS $extra
  "$S" analyze --json "$work/in-$mode" >"$work/in-$mode.analysis.json" 2>"$work/logs/in-$mode.analyze.err"
  "$S" report "$work/in-$mode" >"$work/logs/in-$mode.report.out" 2>&1
  # speedlab outside around torchrun: the ranks are followed as its children.
  run "out-$mode" "$S" profile --out "$work/out-$mode" -- torchrun --standalone --nproc_per_node 2 "$T" $ARGS $extra
  "$S" analyze --json "$work/out-$mode" >"$work/out-$mode.analysis.json" 2>"$work/logs/out-$mode.analyze.err"
  # torch.profiler's own per-rank totals for the same steps, without speedlab.
  run "torch-$mode" torchrun --standalone --nproc_per_node 2 "$T" $ARGS $extra --torch-profile "$work/torch-$mode"
done

if [[ ${MPI:-1} == 1 ]] && command -v mpirun >/dev/null; then
  # speedlab inside each rank under mpirun: ddp_train.py takes RANK/WORLD_SIZE from OMPI_COMM_WORLD_* (or PMI_*).
  if mpirun --version 2>&1 | grep -q "Open MPI"; then
    mpi=(mpirun -n 2 --allow-run-as-root --oversubscribe -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29590 -x PATH
         -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
  else
    mpi=(mpirun -n 2 -genv MASTER_ADDR 127.0.0.1 -genv MASTER_PORT 29590)
  fi
  run "mpi-slow" "${mpi[@]}" "$S" profile --out "$work/mpi-slow" -- python3 "$T" $ARGS --slow-rank 1 --slow-ms $SLOW_MS
  "$S" analyze --json "$work/mpi-slow" >"$work/mpi-slow.analysis.json" 2>"$work/logs/mpi-slow.analyze.err"
else
  log "mpirun: not on this machine"
fi

# speedlab run --devices: "all" is every GPU (device=N in each point's identity); on a one-GPU
# machine device 1 does not exist and is refused before anything runs.
if [[ -d "$here/plugins" ]]; then
  dev=("$S" run --plugin-path "$here/plugins" -w vector --variant cuda -p n=1048576 --calibrate off --max-time 0.3
       --reports json)
  run devices-all "${dev[@]}" --devices all --out "$work/devices-all"
  grep -o '"id":"[^"]*"' "$work/devices-all/results.jsonl" >>"$work/logs/devices-all.out" 2>&1
  run devices-1 "${dev[@]}" --devices 1 --out "$work/devices-1"
fi

# Fixtures for CI: a few steps, rank 1 slowed, speedlab outside (one folder) and inside (rank
# folders), with the job's backend (BACKEND, default gloo); driver API records off to keep
# the streams small (FIXTURE_DRIVER_API=1: on; NCCL launches through the driver API, and the
# steps place its kernels by their launch calls).
if [[ ${FIXTURES:-1} == 1 ]]; then
SPEEDLAB_PROFILE_DRIVER_API=${FIXTURE_DRIVER_API:-0} run fixture-out "$S" profile --out "$work/fixture-out" -- torchrun --standalone --nproc_per_node 2 "$T" \
  --backend "${BACKEND:-gloo}" --steps 6 --warmup 2 --width 512 --batch 64 --slow-rank 1 --slow-ms 10
SPEEDLAB_PROFILE_DRIVER_API=${FIXTURE_DRIVER_API:-0} run fixture-in torchrun --standalone --nproc_per_node 2 --no-python "$S" profile --out "$work/fixture-in" -- python3 "$T" \
  --backend "${BACKEND:-gloo}" --steps 6 --warmup 2 --width 512 --batch 64 --slow-rank 1 --slow-ms 10
fi

python3 "$here/ranks_summary.py" "$work" "$STEPS" >"$work/summary.txt" 2>&1
{
  grep -h "exit" "$work/logs/steps.txt" | sed 's/^/  /'
  [[ -f "$work/logs/devices-all.out" ]] && echo "devices-all ids: $(grep -o '"id":"[^"]*"' "$work/logs/devices-all.out" | tr '\n' ' ')"
  [[ -f "$work/logs/devices-1.err" ]] && echo "devices-1: $(grep -h 'error' "$work/logs/devices-1.err" "$work/logs/devices-1.out" | head -2)"
  grep -h "mpirun\|torch " "$work/logs/machine.txt"
} >>"$work/summary.txt"
cd "$work" && tar czf "$out/ranks.tgz" --exclude='*.html' --exclude='*.perfetto*' --exclude='*.sqlite' . \
  && ls -la "$out"
cat "$work/summary.txt"
