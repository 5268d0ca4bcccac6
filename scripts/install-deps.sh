#!/usr/bin/env bash
# Installs what speedlab needs, from Debian/Ubuntu packages, and nothing that is already
# there. Idempotent; needs root or sudo only when something is missing.
#   scripts/install-deps.sh build   what building speedlab needs: compiler, CMake, the libraries
#   scripts/install-deps.sh python  Python with NumPy and Numba, for the lessons' py-* variants
#   scripts/install-deps.sh run     build + python: what building and running needs
#                                   (scripts/quickstart.sh installs python while it builds)
#   scripts/install-deps.sh test    run + what the tests need (scripts/test.sh, CI): Catch2, clang
#                                   and libFuzzer for scripts/sanitize.sh, the sqlite3 shell,
#                                   dpkg-dev for the package check, man-db for the manual pages'
#                                   test, Chromium (and pdfinfo, poppler-utils) for the HTML tests
#                                   (Debian only)
#   scripts/install-deps.sh         the same as test
#   SPEEDLAB_NO_BROWSER=1 scripts/...  skip Chromium
set -euo pipefail

set_name=${1:-test}
case $set_name in
  build | python | run | test) ;;
  *) echo "install-deps: unknown set '$set_name' (expected build, python, run or test)" >&2; exit 2 ;;
esac

packages=()
if [[ $set_name != python ]]; then
  # Ninja, not make: scripts/build.sh configures with -G Ninja.
  packages+=(cmake ninja-build g++ pkg-config libboost-dev libyaml-cpp-dev libfmt-dev libcli11-dev
             nlohmann-json3-dev libsqlite3-dev zlib1g-dev python3)
fi
if [[ $set_name != build ]]; then
  packages+=(python3 python3-numpy python3-numba) # the lessons' Python variants (python/)
fi
if [[ $set_name == test ]]; then
  packages+=(make catch2 sqlite3
             dpkg-dev # cpack -G DEB (dpkg-shlibdeps, scripts/sdk-check.sh)
             man-db # man -l renders each manual page (tests/scripts/man_pages_test.py)
             clang) # the ASan+UBSan and libFuzzer build (scripts/sanitize.sh)
  # libFuzzer's runtime comes with the compiler's runtime package (Debian 12: clang 14).
  if grep -q '^VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null; then
    packages+=(libclang-rt-14-dev)
  fi
  # Debian's chromium is a real package; Ubuntu's is a snap wrapper that cannot run in
  # containers, so the browser test is only set up on Debian.
  if [[ -z "${SPEEDLAB_NO_BROWSER:-}" ]] && grep -qi '^ID=debian' /etc/os-release 2>/dev/null; then
    packages+=(chromium poppler-utils) # poppler-utils: pdfinfo counts report.html's printed pages
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps ($set_name): everything is installed"
  exit 0
fi

echo "install-deps ($set_name): installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# The quick start calls this twice in a row (build, then python): one update is enough.
if [[ -z $(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -10 2>/dev/null | head -1) ]]; then
  # No Translation-en (6 MB, a third of a fresh update's download): apt's output is read in English.
  $sudo apt-get update -q -o Acquire::Languages=none
fi
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
