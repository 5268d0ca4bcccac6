#!/usr/bin/env bash
# The quick start's build (scripts/quickstart.sh: unity batches, no tests), in a folder of its
# own: CI's test build compiles source by source, so a name that resolves differently once two
# sources share a batch (an unqualified call finding another namespace's function, two
# file-local helpers of one name) would break the README's first command unseen.
#   scripts/unity-check.sh BUILD_FOLDER   (CTest's unity_build; JOBS, default 2)
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: scripts/unity-check.sh BUILD_FOLDER" >&2; exit 2; }
cd "$(dirname "$0")/.."
cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPEEDLAB_ENABLE_TESTING=OFF -DSPEEDLAB_UNITY_BUILD=ON >/dev/null
cmake --build "$1" -j "${JOBS:-2}"
