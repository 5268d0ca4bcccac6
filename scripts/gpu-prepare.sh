#!/usr/bin/env bash
# On the development machine: build with CUDA into build-gpu and gather what the GPU machine
# needs into .device-carry/ (git-ignored), laid out as a test root (tests/test_root.hpp):
# speedlab, the test binaries, plugins/, test-plugins/, tests/{fixtures,golden,tools}/, and
# this tree's scripts/, suites/ and examples/ (the GPU machine's own tree may be another).
# The test binaries find all of it relative to themselves: nothing is rewritten there.
# Then run scripts/gpu-check.sh there with carry [".device-carry"].
#   BUILD_DIR       the build folder (default build-gpu)
#   SPEEDLAB_CARRY  the carry folder, relative to this tree or absolute (default .device-carry);
#                   on the GPU machine: SPEEDLAB_CARRY=<folder> bash <folder>/scripts/gpu-check.sh
#   --no-build      gather what BUILD_DIR already holds (targets built by hand); absent ones are left out
#   --bench         a carry for the cost benches and the light capture's stages only
#                   (profile_overhead.sh, gpu-light-capture.sh, speedlab_gpu_tests): speedlab,
#                   its libraries, the storm, the CUPTI floor probe, the GPU tests and the
#                   vector plugin their lesson check runs; no unit tests, fixtures, goldens,
#                   examples or other plugins, so that the tree and the carry fit the GPU
#                   machine's 64 MiB together
set -euo pipefail
build_step=1 bench=0
for arg in "$@"; do
  case $arg in
    --no-build) build_step=0 ;;
    --bench) bench=1 ;;
    *) echo "gpu-prepare: unknown argument $arg (--no-build, --bench)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build-gpu}"
carry="${SPEEDLAB_CARRY:-.device-carry}"
[[ -n "$carry" && "$carry" != "/" ]] || { echo "SPEEDLAB_CARRY is empty or /" >&2; exit 2; }
if ((build_step)); then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPEEDLAB_ENABLE_CUDA=ON >/dev/null
  cmake --build "$build" -j 2
fi
rm -rf "$carry"
mkdir -p "$carry"
cp "$build"/speedlab "$carry"/
# `speedlab profile` finds the injection library beside itself.
[[ -f "$build"/libspeedlab-inject.so ]] && cp "$build"/libspeedlab-inject.so "$carry"/
# ... and the _exit shim it preloads into the program (profilers/inject/exit_shim.cpp).
[[ -f "$build"/libspeedlab-exit.so ]] && cp "$build"/libspeedlab-exit.so "$carry"/
# The cost benches' bare-CUPTI floor (profile_overhead.sh cupti-bare; profilers/cupti/floor_probe.cpp).
[[ -f "$build"/libspeedlab-cupti-floor.so ]] && cp "$build"/libspeedlab-cupti-floor.so "$carry"/
mkdir -p "$carry"/plugins && cp "$build"/plugins/*.so "$carry"/plugins/
cp -r "$build"/test-plugins "$carry"/test-plugins 2>/dev/null || true
mkdir -p "$carry"/tests
cp -rL "$build"/tests/fixtures "$build"/tests/golden "$build"/tests/tools "$carry"/tests/ 2>/dev/null || true
for exe in speedlab_tests speedlab_gpu_tests speedlab_launch_storm speedlab_signal_probe; do
  f=$(find "$build" -name "$exe" -type f -perm -u+x | head -1)
  if [[ -n "$f" ]]; then cp "$f" "$carry"/; fi
done
strip --strip-unneeded "$carry"/speedlab* "$carry"/libspeedlab-*.so "$carry"/plugins/*.so 2>/dev/null || true
# nsys on the GPU machine collects a capture but its importer (QdstrmImporter) lacks
# libdw.so.1 there, so it writes no report: Debian's libdw1 and libelf1 (elfutils) from this
# machine, for the stages that run nsys (LD_LIBRARY_PATH=<carry>/nsys-libs).
for lib in libdw.so.1 libelf.so.1; do
  f=/usr/lib/x86_64-linux-gnu/$lib
  [[ -e $f ]] && mkdir -p "$carry"/nsys-libs && cp -L "$f" "$carry"/nsys-libs/
done
# The scripts and suites the stages read, as this tree has them.
cp -r scripts suites "$carry"/
[[ -d examples ]] && cp -r examples "$carry"/
if ((bench)); then
  rm -rf "$carry"/speedlab_tests "$carry"/speedlab_signal_probe "$carry"/test-plugins "$carry"/examples \
    "$carry"/tests/fixtures "$carry"/tests/golden
  find "$carry"/plugins -name '*.so' ! -name 'libspeedlab-vector.so' -delete
fi
du -sh "$carry"
