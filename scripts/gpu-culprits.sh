#!/usr/bin/env bash
# On the GPU machine, two GPUs (kind nvidia-h200-x2), after scripts/gpu-prepare.sh with
# .device-carry carried: jobs with a known culprit for the critical path (issue 42), each
# recorded under `speedlab profile` (inside each rank, NCCL) as a fixture:
#   gpu       rank 1 does about 15 ms of extra GPU work per step (a spin kernel)
#   stall     rank 1 sleeps 15 ms on the host before each step (a slow data loader)
#   pageable  rank 1 copies 128 MiB of pageable host memory to the GPU in each step
#   sync      one process, the loss read back (`.item()`) at the end of each step and 10 ms
#             of host work ("load_batch") before the next: the wait serializes host work the
#             GPU's 50 ms of a step (8192 x 4096 model) would otherwise hide
#   none      two identical ranks
# Each rank prints what it injected, measured (examples/ddp_train.py: extra_ms_per_step,
# stall_ms_per_step, pageable_ms_per_step, sync_ms_per_step) and its median step time
# (step_ms); those lines are the fixture's expected.json. Packed into $OUT/culprits.tgz
# (streams, profile.json, the analysis JSON, the printed lines; no HTML/SQLite/trace).
#   SPEEDLAB_CARRY=.device-carry bash .device-carry/scripts/gpu-culprits.sh   [CASES="gpu stall ..."]
set -uo pipefail
cd "$(dirname "$0")/.."
carry=$(cd "${SPEEDLAB_CARRY:-.device-carry}" && pwd)
S="$carry/speedlab"
out="${OUT:-$PWD/gpu-out}"; work=/tmp/speedlab-culprits
rm -rf "$work"; mkdir -p "$work" "$out"
export PATH="/usr/local/cuda/bin:$PATH" NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export OMP_NUM_THREADS=2
T=examples/ddp_train.py
ARGS=(--backend nccl --steps ${STEPS:-16} --warmup 4 --width ${WIDTH:-1024} --batch ${BATCH:-128})
port=29700
for case in ${CASES:-gpu stall pageable sync none}; do
  port=$((port + 1)); d="$work/$case"
  case $case in
    gpu) extra=(--slow-rank 1 --slow-ms 15) ;;
    stall) extra=(--stall-rank 1 --stall-ms 15) ;;
    pageable) extra=(--pageable-rank 1 --pageable-mb 128) ;;
    sync) extra=(--sync-per-step --stall-rank 0 --stall-ms 10 --width ${SYNC_WIDTH:-8192} --batch ${SYNC_BATCH:-4096}) ;;
    none) extra=() ;;
  esac
  t=$(date +%s)
  if [[ $case == sync ]]; then
    timeout 120 "$S" profile --out "$d" -- python3 "$T" "${ARGS[@]}" "${extra[@]}" >"$work/$case.out" 2>"$work/$case.err"
  else
    MASTER_PORT=$port timeout 120 torchrun --standalone --nproc_per_node 2 --no-python "$S" profile --out "$d" -- \
      python3 "$T" "${ARGS[@]}" "${extra[@]}" >"$work/$case.out" 2>"$work/$case.err"
  fi
  rc=$?
  grep '^{' "$work/$case.out" >"$d/expected.jsonl" 2>/dev/null
  "$S" analyze --json "$d" >"$work/$case.analysis.json" 2>"$work/$case.analyze.err"
  "$S" analyze "$d" >"$work/$case.analysis.txt" 2>&1
  echo "== $case: exit $rc, $(($(date +%s) - t)) s; printed: $(tr '\n' ' ' <"$d/expected.jsonl")"
  grep -m6 -E "^\s*(\[|[0-9]+\.)" "$work/$case.analysis.txt" | cut -c1-220
done
cd "$work" && tar czf "$out/culprits.tgz" --exclude='*.html' --exclude='*.sqlite' --exclude='trace*.json' \
  --exclude='report*' --exclude='results.*' --exclude='program_*.csv' .
ls -la "$out"
