#!/usr/bin/env bash
# On the development machine: build with CUDA into build-gpu and gather what the GPU machine
# needs into .device-carry/ (git-ignored): the speedlab binary, plugins, test binaries.
# Then run scripts/gpu-check.sh there with carry [".device-carry"].
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPEEDLAB_ENABLE_CUDA=ON >/dev/null
cmake --build build-gpu -j 2
rm -rf .device-carry
mkdir -p .device-carry
cp build-gpu/speedlab .device-carry/
cp -r build-gpu/plugins .device-carry/plugins
cp -r build-gpu/test-plugins .device-carry/test-plugins 2>/dev/null || true
for exe in speedlab_tests speedlab_gpu_tests speedlab_launch_storm; do
  f=$(find build-gpu -name "$exe" -type f -perm -u+x | head -1)
  [[ -n "$f" ]] && cp "$f" .device-carry/
done
strip --strip-unneeded .device-carry/speedlab* .device-carry/plugins/*.so 2>/dev/null || true
du -sh .device-carry
