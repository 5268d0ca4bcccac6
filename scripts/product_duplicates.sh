#!/usr/bin/env bash
# Counts the repeated code in the product's C++ with `duplicates` (issue 39: at most 60 pairs).
#   scripts/product_duplicates.sh [--count] [--most N]
# Copies the product folders of the checkout this script sits in (model analysis profilers
# reports app sdk plugins device, without their CMakeLists.txt) to a temporary folder, so that
# tests, scripts and docs do not count, and runs `duplicates --seconds 120` there. Prints the
# count line and the rows (--most, default 200); --count prints only the number of pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
count_only=0
most=200
while (($#)); do
  case $1 in
    --count) count_only=1 ;;
    --most) most=${2:?--most takes a number}; shift ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "product_duplicates.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v duplicates >/dev/null || { echo "product_duplicates.sh: the duplicates command is not on PATH" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r model analysis profilers reports app sdk plugins device "$tmp/"
find "$tmp" -name CMakeLists.txt -delete
out=$(cd "$tmp" && duplicates --seconds 120 --most "$most")
# A count from a partial read is no count: say so where --count would hide it.
if ((count_only)) && grep -q '^incomplete:' <<<"$out"; then grep '^incomplete:' <<<"$out" >&2; fi
if ((count_only)); then
  first=${out%%$'\n'*}
  # "104 pairs of places (...)" or "no duplicates (...)".
  if [[ $first =~ ^([0-9]+)\ pairs? ]]; then echo "${BASH_REMATCH[1]}"
  elif [[ $first == no\ duplicates* ]]; then echo 0
  else echo "product_duplicates.sh: unexpected output: $first" >&2; exit 1
  fi
else
  printf '%s\n' "$out"
fi
