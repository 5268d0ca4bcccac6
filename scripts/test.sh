#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, and run the tests (CTest).
# GPU tests are labelled "gpu" and report SKIPPED with the reason where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
