#!/usr/bin/env bash
# Installs what speedlab needs to build and test, from Debian/Ubuntu packages, and nothing
# that is already there. Idempotent; needs root or sudo only when something is missing.
#   scripts/install-deps.sh            build + test dependencies (and Chromium for the HTML test)
#   SPEEDLAB_NO_BROWSER=1 scripts/...  skip Chromium
set -euo pipefail

packages=(cmake ninja-build g++ make pkg-config libboost-dev libyaml-cpp-dev catch2 libfmt-dev libcli11-dev
          nlohmann-json3-dev libsqlite3-dev zlib1g-dev sqlite3 python3
          python3-numpy python3-numba # the Python variants CI runs (python/)
          clang) # the ASan+UBSan and libFuzzer build (scripts/sanitize.sh)
# libFuzzer's runtime comes with the compiler's runtime package (Debian 12: clang 14).
if grep -q '^VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null; then
  packages+=(libclang-rt-14-dev)
fi
# Debian's chromium is a real package; Ubuntu's is a snap wrapper that cannot run in
# containers, so the browser test is only set up on Debian.
if [[ -z "${SPEEDLAB_NO_BROWSER:-}" ]] && grep -qi '^ID=debian' /etc/os-release 2>/dev/null; then
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: everything is installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
