#!/usr/bin/env bash
# On the development machine: build with CUDA into build-gpu and gather what the GPU machine
# needs into .device-carry/ (git-ignored), laid out as a test root (tests/test_root.hpp):
# speedlab, the test binaries, plugins/, test-plugins/, tests/{fixtures,golden,tools}/.
# The test binaries find all of it relative to themselves: nothing is rewritten there.
# Then run scripts/gpu-check.sh there with carry [".device-carry"].
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build-gpu}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPEEDLAB_ENABLE_CUDA=ON >/dev/null
cmake --build "$build" -j 2
rm -rf .device-carry
mkdir -p .device-carry
cp "$build"/speedlab .device-carry/
# `speedlab profile` finds the injection library beside itself.
[[ -f "$build"/libspeedlab-inject.so ]] && cp "$build"/libspeedlab-inject.so .device-carry/
mkdir -p .device-carry/plugins && cp "$build"/plugins/*.so .device-carry/plugins/
cp -r "$build"/test-plugins .device-carry/test-plugins 2>/dev/null || true
mkdir -p .device-carry/tests
cp -rL "$build"/tests/fixtures "$build"/tests/golden "$build"/tests/tools .device-carry/tests/
for exe in speedlab_tests speedlab_gpu_tests speedlab_launch_storm; do
  f=$(find "$build" -name "$exe" -type f -perm -u+x | head -1)
  [[ -n "$f" ]] && cp "$f" .device-carry/
done
strip --strip-unneeded .device-carry/speedlab* .device-carry/libspeedlab-inject.so .device-carry/plugins/*.so 2>/dev/null || true
du -sh .device-carry
