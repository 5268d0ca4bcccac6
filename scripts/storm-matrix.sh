#!/usr/bin/env bash
# Launch-storm matrix: which part of the CUPTI session costs what per launch. One process
# per configuration, configurations alternated ROUNDS times; medians printed at the end.
#   bash scripts/storm-matrix.sh [alternations]   (on the GPU machine, after gpu-prepare.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/storm-matrix}
mkdir -p "$out/logs"
bp=$(cat .device-carry/build-path 2>/dev/null || true)
if [[ -n $bp && ! -e $bp ]]; then mkdir -p "$(dirname "$bp")" && ln -sfn "$PWD/.device-carry" "$bp"; fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
bin=.device-carry
alternations=${1:-3}
# name|SPEEDLAB_CUPTI_EXPERIMENT flags|storm arguments
configs=${STORM_CONFIGS:-"base||
tid|tid-default|
offset||--clock offset
nosync|no-sync|
noovh|no-overhead|
nocopies|no-copies|
driver|driver-only|
pinned|pinned|
noapi||--no-api
lean|tid-default,no-sync,no-overhead,no-copies|--clock offset"}
for a in $(seq 1 "$alternations"); do
  while IFS='|' read -r name exp args; do
    [[ -n $name ]] || continue
    SPEEDLAB_CUPTI_EXPERIMENT=$exp "$bin/speedlab_launch_storm" --rounds 5 $args >"$out/logs/storm-$name-$a.txt" 2>&1
    echo "$name-$a: $(tail -1 "$out/logs/storm-$name-$a.txt" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
parts = [f"{k}={d[k]:.3f}" for k in ("plain_us_per_launch", "added_us_per_launch", "residual_us_per_launch") if k in d]
loop = d.get("loop_us_per_launch", {})
parts.append("loop " + "/".join(f"{loop.get(k, 0):.2f}" for k in ("plain", "cupti", "plain_after")))
calls = d.get("launch_call", {})
for stat in ("median_ns", "mean_ns", "p90_ns"):
    vals = [calls.get(k, {}).get(stat, 0) for k in ("plain", "cupti", "plain_after")]
    parts.append("call " + stat + " " + "/".join(f"{v:.0f}" for v in vals))
print(*parts, "api", d.get("api_records"), "corr", d.get("kernels_with_launch_record"), d.get("cupti"))' 2>&1)"
  done <<<"$configs"
done | tee "$out/matrix.txt"
python3 - "$out/logs" <<'PY' | tee -a "$out/matrix.txt"
import glob, json, os, re, statistics, sys
added = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "storm-*.txt"))):
    name = re.sub(r"-\d+$", "", os.path.basename(f)[6:-4])
    lines = [l for l in open(f) if l.startswith("{")]
    if lines and "added_us_per_launch" in (d := json.loads(lines[-1])):
        added.setdefault(name, []).append(d["added_us_per_launch"])
for name, v in sorted(added.items(), key=lambda kv: statistics.median(kv[1])):
    print(f"{name:10s} added median {statistics.median(v):.2f} us (min {min(v):.2f}, max {max(v):.2f}, n {len(v)})")
PY
