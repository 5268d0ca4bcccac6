#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, run the default lesson suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# --force: a second quick start replaces the first one's demo results (said on stderr).
./build/speedlab run --force --out speedlab-out
