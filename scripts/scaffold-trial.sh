#!/usr/bin/env bash
# A newcomer's first plugin, as the README and `speedlab new` tell it (CTest scaffold_trial,
# label sdk, so CI runs it; also by hand):
#   scripts/scaffold-trial.sh [BUILD_DIR]   the quick start's output is BUILD_DIR (default build/)
#   scripts/scaffold-trial.sh --fresh       a clean clone of HEAD built as scripts/quickstart.sh
#                                           builds it (unity batches, no tests), then the same
# 1. The quick start's output: a build folder with the program and its plugins, nothing
#    installed. CTest passes the build folder the tests run from, which CI built from a clean
#    clone: the same program, plugins and build-tree package as the quick start's (built source
#    by source and with the tests besides); --fresh builds the quick start's own (minutes).
# 2. In a folder whose path holds a space: `speedlab new x`, and `speedlab new spacey --dir
#    'my plugins/spacey'`.
# 3. Every command each printed (its indented lines) pasted into bash as it is: configure and
#    build against the printed prefix, list, run the project's suite.
# 4. Each run's results.jsonl: every point valid, of the new workload.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/speedlab-scaffold.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "scaffold-trial: FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }

if [[ ${1:-} == --fresh ]]; then
  step "clean clone of HEAD, built as scripts/quickstart.sh builds it"
  git clone --quiet "$src" "$tmp/clone" || fail "git clone $src"
  (cd "$tmp/clone" && scripts/build.sh -DSPEEDLAB_ENABLE_TESTING=OFF -DSPEEDLAB_UNITY_BUILD=ON >"$tmp/build.log" 2>&1) ||
    { tail -30 "$tmp/build.log"; fail "the quick start's build"; }
  build="$tmp/clone/build"
else
  build="$(cd "${1:-$src/build}" && pwd)"
fi
speedlab="$build/speedlab"
[[ -x $speedlab ]] || fail "no speedlab in $build: build it first (scripts/quickstart.sh)"
[[ -f $build/lib/cmake/speedlab/speedlabConfig.cmake ]] ||
  fail "$build/lib/cmake/speedlab/speedlabConfig.cmake missing: the build tree is not a package prefix"

work="$tmp/new user" # a space in every path the commands see
mkdir -p "$work"
command -v ccache >/dev/null && export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache

# trial NAME [new's options]: speedlab new, then its printed commands as they are.
trial() {
  local name=$1 out="$tmp/new-$1.txt"
  shift
  step "speedlab new $name $*"
  (cd "$work" && "$speedlab" new "$name" "$@") >"$out" 2>&1 || { cat "$out"; fail "speedlab new $name"; }
  cat "$out"
  if grep -q '<speedlab prefix>' "$out"; then fail "speedlab new printed a placeholder, not the package prefix"; fi
  local commands=0 line
  while IFS= read -r line; do
    commands=$((commands + 1))
    echo "\$ $line"
    (cd "$work" && bash -c "$line") >"$tmp/command.log" 2>&1 || { tail -40 "$tmp/command.log"; fail "the printed command: $line"; }
  done < <(sed -n 's/^  //p' "$out")
  [[ $commands -eq 3 ]] || fail "speedlab new printed $commands commands, expected 3 (build, list, run)"
  python3 - "$work/$name-out/results.jsonl" "$name" <<'PY' || fail "the run of $name"
import json, sys
points = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert points, "no points"
for p in points:
    assert p["workload"] == sys.argv[2], p["workload"]
    assert p["status"] == "ok", p["id"] + ": " + p["status"] + ": " + p.get("reason", "")
print(f"{sys.argv[2]}: {len(points)} valid points")
PY
}
trial x
trial spacey --dir "my plugins/spacey"
echo "scaffold-trial: passed"
