#!/usr/bin/env bash
# Quick start, command 1: install what running needs, build what it runs (the program, the
# injection library, the plugins; no tests: scripts/test.sh installs and builds those), run
# the default lesson suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh run
scripts/build.sh -DSPEEDLAB_ENABLE_TESTING=OFF
# --force: a second quick start replaces the first one's demo results (said on stderr).
./build/speedlab run --force --out speedlab-out
echo "quickstart: the program is ./build/speedlab; reports in speedlab-out/ (report.md, report.html)"
