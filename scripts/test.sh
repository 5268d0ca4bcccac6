#!/usr/bin/env bash
# Quick start, command 2: install what the tests need too, build everything (the tests are
# switched on again after a quick start left them out) and run the tests (CTest), the
# installed-SDK and Debian package check among them (test sdk_install: scripts/sdk-check.sh).
# GPU tests are labelled "gpu" and report SKIPPED with the reason where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
# Where install-deps installs Chromium (Debian), the browser tests must run, not skip.
if [[ -z "${SPEEDLAB_NO_BROWSER:-}" ]] && grep -qi '^ID=debian' /etc/os-release 2>/dev/null; then
  export SPEEDLAB_REQUIRE_CHROMIUM=1
fi
scripts/build.sh -DSPEEDLAB_ENABLE_TESTING=ON
# ctest hides a skipped test's output: show why the GPU tests skip here, before the run.
ctest --test-dir build -L gpu --verbose 2>/dev/null | grep -E "SKIPPED|no CUDA|no usable" | sed 's/^[0-9]*: //' || true
ctest --test-dir build --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
