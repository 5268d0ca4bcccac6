#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, run the default lesson suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
./build/speedlab run --out speedlab-out
