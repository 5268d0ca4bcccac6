#!/usr/bin/env bash
# What `speedlab profile` costs beside nsys and torch.profiler, side by side in one call on
# the GPU machine (issue 29, item 2). Over a carry made by scripts/gpu-prepare.sh:
#   SPEEDLAB_CARRY=.device-carry bash .device-carry/scripts/bench/profile_overhead.sh
# or as the gpu-check.sh stage `overhead-bench`.
#
# Two workloads, one process per figure, all tools alternated in every round (the order
# rotates from round to round):
#   storm  speedlab_launch_storm --no-cupti: STORM_ROUNDS x STORM_LAUNCHES empty kernel
#          launches (default 2 x 50k: a tracer's write-out grows with them), us per launch
#          (plain_us_per_launch: measured inside the process, so a tracer's start-up and
#          write-out are not in it)
#   torch  scripts/bench/torch_loop.py: Linear-ReLU-Linear, batch 256, STEPS steps, us per
#          step (the fastest of 3 timed loops in the process)
# Tools: plain; speedlab (speedlab profile, the default); nsys (nsys profile -t cuda,nvtx,
# CPU sampling and context switches off: -s none --cpuctxsw none, which only makes nsys
# cheaper and its write-out shorter); torchprof (torch.profiler, CPU and CUDA activities;
# torch only). On request (in STORM_TOOLS / TORCH_TOOLS, or EXTRA=1 for both): speedlab-all
# (every runtime and driver call recorded, SPEEDLAB_PROFILE_API=all: the default before
# issue 29) and speedlab-nodriver (SPEEDLAB_PROFILE_DRIVER_API=0).
#
#   ROUNDS=8 STEPS=300 REPEATS=2 STORM_ROUNDS=2 STORM_LAUNCHES=50000 BUDGET_S=420 EXTRA=0
#   STORM_TOOLS="plain speedlab nsys"  TORCH_TOOLS="plain speedlab nsys torchprof"
# BUDGET_S is honoured before each round (not started when the last round's time would not
# fit) and before each process (not started when that tool's last process would not fit).
# Every figure goes to $OUT/overhead/results.jsonl as it comes (with the process's wall
# time, wall_s: what a round's time goes to), and the summary (medians with bootstrap 95%
# intervals, each tool's cost against plain and speedlab's against nsys, paired by round)
# to $OUT/overhead/summary.md after EVERY round, so a call killed at its limit still brings
# back the table of the rounds done.
set -uo pipefail
start_dir=$(pwd)
cd "$(dirname "$0")/../.."
root=$(pwd)
carry="${SPEEDLAB_CARRY:-.device-carry}"
if [[ $carry != /* ]]; then
  if [[ -d "$start_dir/$carry" ]]; then carry="$start_dir/$carry"; else carry="$root/$carry"; fi
fi
bin=$(cd "$carry" 2>/dev/null && pwd) || { echo "profile_overhead: no carry folder $carry (SPEEDLAB_CARRY)" >&2; exit 2; }
out="${OUT:-$root/gpu-out}/overhead"
work=/tmp/speedlab-overhead
rm -rf "$work"; mkdir -p "$out" "$work/logs"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
[[ -x $NSYS ]] || NSYS=$(command -v nsys || echo "")
ROUNDS=${ROUNDS:-8} STEPS=${STEPS:-300} REPEATS=${REPEATS:-2} STORM_ROUNDS=${STORM_ROUNDS:-2}
STORM_LAUNCHES=${STORM_LAUNCHES:-50000}
BUDGET_S=${BUDGET_S:-420} EXTRA=${EXTRA:-0}
if [[ $EXTRA == 1 ]]; then
  STORM_TOOLS=${STORM_TOOLS:-"plain speedlab speedlab-all speedlab-nodriver nsys"}
  TORCH_TOOLS=${TORCH_TOOLS:-"plain speedlab speedlab-all nsys torchprof"}
fi
STORM_TOOLS=${STORM_TOOLS:-"plain speedlab nsys"}
TORCH_TOOLS=${TORCH_TOOLS:-"plain speedlab nsys torchprof"}
speedlab="$bin/speedlab"
storm="$bin/speedlab_launch_storm"
loop="$root/scripts/bench/torch_loop.py"
results="$out/results.jsonl"
: >"$results"
t0=$(date +%s)
say() { echo "$*" | tee -a "$out/log.txt"; }
say "profile_overhead: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1);" \
  "rounds $ROUNDS, steps $STEPS x $REPEATS, storm $STORM_ROUNDS x $STORM_LAUNCHES, budget $BUDGET_S s, nsys ${NSYS:-none}; $(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1)"

# The program's command line for one workload.
program() { # workload [extra args]
  if [[ $1 == storm ]]; then echo "$storm --no-cupti --rounds $STORM_ROUNDS --launches $STORM_LAUNCHES"; else echo "python3 $loop --steps $STEPS --repeats $REPEATS"; fi
}

# One process of one tool: its last JSON line, or nothing.
run_one() { # workload tool log
  local w=$1 tool=$2 log=$3 prog
  prog=$(program "$w")
  case $tool in
    plain) timeout 120 $prog ;;
    speedlab) timeout 120 "$speedlab" profile --force --out "$work/prof" -- $prog ;;
    speedlab-all) SPEEDLAB_PROFILE_API=all timeout 120 "$speedlab" profile --force --out "$work/prof" -- $prog ;;
    speedlab-nodriver) SPEEDLAB_PROFILE_DRIVER_API=0 timeout 120 "$speedlab" profile --force --out "$work/prof" -- $prog ;;
    nsys) [[ -n $NSYS ]] && timeout 120 "$NSYS" profile -t cuda,nvtx -s none --cpuctxsw none -o "$work/nsys" --force-overwrite true $prog ;;
    torchprof) [[ $w == torch ]] && timeout 120 $prog --torch-profile ;;
  esac >"$log" 2>&1
  local rc=$?
  rm -rf "$work/prof" "$work"/nsys.*
  return $rc
}

# The table of the rounds done so far (written after every round and at the end).
summarize() {
  python3 - "$results" <<'PY'

import json, random, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rng = random.Random(1)
def interval(v):  # bootstrap 95% interval of the median
    if len(v) < 2:
        return (v[0], v[0]) if v else (float("nan"), float("nan"))
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(2000))
    return meds[50], meds[1949]
def fmt(v):
    lo, hi = interval(v)
    return f"{statistics.median(v):.2f} [{lo:.2f}, {hi:.2f}]"
for w, unit in (("storm", "us per launch"), ("torch", "us per step")):
    by = {}
    for r in rows:
        if r["workload"] == w and r["value"] is not None:
            by.setdefault(r["tool"], {})[r["round"]] = r["value"]
    if "plain" not in by:
        print(f"\n{w}: no plain figures\n"); continue
    print(f"\n### {w} ({unit}; median [bootstrap 95% interval] over rounds; added: paired by round)\n")
    print("| tool | rounds | per unit | added vs plain | added % |")
    print("|---|---|---|---|---|")
    plain = by["plain"]
    for tool, vals in sorted(by.items(), key=lambda kv: kv[0] != "plain"):
        added = [vals[r] - plain[r] for r in vals if r in plain]
        pct = [100 * (vals[r] / plain[r] - 1) for r in vals if r in plain]
        print(f"| {tool} | {len(vals)} | {fmt(list(vals.values()))} | "
              f"{fmt(added) if tool != 'plain' else '-'} | {fmt(pct) if tool != 'plain' else '-'} |")
    if "speedlab" in by and "nsys" in by:
        d = [by["speedlab"][r] - by["nsys"][r] for r in by["speedlab"] if r in by["nsys"]]
        lo, hi = interval(d)
        verdict = "below nsys" if hi < 0 else "above nsys" if lo > 0 else "not told apart from nsys"
        print(f"\nspeedlab - nsys, paired by round: {fmt(d)} {unit}: {verdict} ({len(d)} rounds)")
walls = {}
for r in rows:
    if r.get("wall_s") is not None:
        walls.setdefault(f'{r["workload"]}/{r["tool"]}', []).append(r["wall_s"])
if walls:
    print("\nprocess wall time, median s (what a round's time goes to): " +
          ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in sorted(walls.items())))
failed = [r for r in rows if r["value"] is None]
if failed:
    print(f"\nno figure from {len(failed)} process(es): " +
          ", ".join(f"{r['workload']}/{r['tool']}/round {r['round']} (exit {r['exit']})" for r in failed[:12]))
PY
}

declare -A last_wall # tool -> seconds its last process took (workload:tool)
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
  for w in storm torch; do
    [[ $w == storm ]] && tools=($STORM_TOOLS) || tools=($TORCH_TOOLS)
    n=${#tools[@]}
    for ((i = 0; i < n; i++)); do
      tool=${tools[$(((i + round) % n))]} # rotated: no tool always runs first
      elapsed=$(($(date +%s) - t0))
      if ((elapsed + ${last_wall[$w:$tool]:-0} > BUDGET_S)); then
        stop="budget of $BUDGET_S s spent at $elapsed s in round $round (before $w/$tool)"
        break 2
      fi
      log="$work/logs/$w-$tool-$round.txt"
      s0=$(date +%s.%N)
      run_one "$w" "$tool" "$log"; rc=$?
      wall=$(python3 -c "print(round($(date +%s.%N) - $s0, 1))")
      last_wall[$w:$tool]=$(python3 -c "import math; print(math.ceil($wall))")
      python3 - "$log" "$w" "$tool" "$round" "$rc" "$wall" <<'PY' | tee -a "$results"
import json, sys
log, w, tool, rnd, rc, wall = sys.argv[1:]
key = "plain_us_per_launch" if w == "storm" else "us_per_step"
value = None
for line in open(log, errors="replace"):
    if line.startswith("{"):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        value = d.get(key, value)
print(json.dumps({"workload": w, "tool": tool, "round": int(rnd), "value": value, "unit": key, "exit": int(rc),
                  "wall_s": float(wall)}))
PY
    done
  done
  round_s=$(($(date +%s) - round_t0))
  say "round $round done at $(($(date +%s) - t0)) s ($round_s s)"
  summarize >"$out/summary.md.new" 2>&1 && mv "$out/summary.md.new" "$out/summary.md"
done
[[ -n $stop ]] && say "$stop"

summarize >"$out/summary.md.new" 2>&1 && mv "$out/summary.md.new" "$out/summary.md"
cat "$out/summary.md"
tar -C "$work" -czf "$out/logs.tar.gz" logs
say "profile_overhead: done in $(($(date +%s) - t0)) s; $out/summary.md"
