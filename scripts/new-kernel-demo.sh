#!/usr/bin/env bash
# The new-user walkthrough of issue 18 with a kernel that is not a lesson problem:
# examples/row-softmax/ (softmax of every row; rows and cols are size axes; a serial
# reference, a naive and an optimized CUDA variant), written from `speedlab new row-softmax
# --cuda`, built against an installed speedlab and run over both axes.
#   scripts/new-kernel-demo.sh prepare   on the development machine (after scripts/gpu-prepare.sh
#                                        or any CUDA build in $BUILD_DIR, default build-gpu):
#                                        install into .device-carry/sdk/prefix, generate the
#                                        project, put the example's sources in, build it there
#   scripts/new-kernel-demo.sh run       on the GPU machine (carry [".device-carry"]): run the
#                                        suite, print the fits and crossovers along each axis
#   scripts/new-kernel-demo.sh all       both, where one machine has the compilers and a GPU
# Output under $OUT (or ./gpu-out): row-softmax.tar.gz (report.md, results, analysis) and
# new-kernel-demo.txt (the log, with the timings of each step).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
stage="${1:-all}"
carry="$root/.device-carry/sdk"
out="${OUT:-$root/gpu-out}"
t0=$(date +%s)
mkdir -p "$out"
say() { echo "[$(($(date +%s) - t0)) s] $*"; }

prepare() {
  local build="${BUILD_DIR:-build-gpu}"
  [[ -x $build/speedlab ]] || { echo "no $build/speedlab: build with CUDA first (scripts/gpu-prepare.sh)"; exit 2; }
  rm -rf "$carry" && mkdir -p "$carry"
  say "install into $carry/prefix"
  cmake --install "$build" --prefix "$carry/prefix" >/dev/null
  strip --strip-unneeded "$carry/prefix/bin/speedlab" "$carry"/prefix/lib*/speedlab/plugins/*.so 2>/dev/null || true
  say "speedlab new row-softmax --cuda"
  "$carry/prefix/bin/speedlab" new row-softmax --cuda --dir "$carry/row-softmax"
  # The walkthrough's edits: the generated y = a*x + b replaced by the softmax (the files a
  # new user writes; the generated CMakeLists.txt gains nothing but the project's name).
  cp examples/row-softmax/row-softmax.cpp examples/row-softmax/row-softmax_cuda.hpp \
     examples/row-softmax/row-softmax_cuda.cu examples/row-softmax/row-softmax.yaml "$carry/row-softmax/"
  diff -u "$carry/row-softmax/CMakeLists.txt" examples/row-softmax/CMakeLists.txt || true
  say "configure and build against the installed prefix"
  cmake -S "$carry/row-softmax" -B "$carry/row-softmax/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$carry/prefix" >/dev/null
  cmake --build "$carry/row-softmax/build"
  "$carry/prefix/bin/speedlab" list --plugin-path "$carry/row-softmax/build" | sed -n '/^row-softmax/,/^$/p'
  du -sh "$carry"
}

run() {
  export PATH="/usr/local/cuda/bin:$PATH"
  export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
  mkdir -p "$out"
  local speedlab="$carry/prefix/bin/speedlab" plugins="$carry/row-softmax/build" work=/tmp/row-softmax-demo
  rm -rf "$work"
  say "speedlab list"
  "$speedlab" list --plugin-path "$plugins" | sed -n '/^row-softmax/,/^$/p'
  say "speedlab run row-softmax.yaml (serial, cuda-naive, cuda over rows and over cols)"
  "$speedlab" run "$carry/row-softmax/row-softmax.yaml" --plugin-path "$plugins" --out "$work" || true
  say "fits and crossovers along each axis (speedlab analyze)"
  "$speedlab" analyze "$work" >"$work/analyze.txt" 2>&1 || true
  grep -E '^(fit|crossover)' "$work/analyze.txt" || grep -iE 'fit|crossover' "$work/analyze.txt" | head -40
  python3 - "$work/results.jsonl" <<'PY'
import json, sys
pts = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [p["id"] + ": " + p["status"] + " " + p.get("reason", "") for p in pts if p["status"] != "ok"]
print(f"{len(pts)} points, {len(pts) - len(bad)} ok" + ("; not ok: " + "; ".join(bad[:5]) if bad else ""))
PY
  tar -C "$(dirname "$work")" -czf "$out/row-softmax.tar.gz" --exclude=traces --exclude='*.sqlite' "$(basename "$work")"
  cp "$work/report.md" "$out/row-softmax-report.md" 2>/dev/null || true
}

case "$stage" in
  prepare) prepare ;;
  run) run 2>&1 | tee "$out/new-kernel-demo.txt" ;;
  all) prepare && run 2>&1 | tee "$out/new-kernel-demo.txt" ;;
  *) echo "usage: $0 prepare|run|all" >&2; exit 2 ;;
esac
