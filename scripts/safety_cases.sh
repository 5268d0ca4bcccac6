#!/usr/bin/env bash
# Runs each output-folder, signal and saved-run misuse against a built speedlab and prints
# a Markdown table row per case: what was done, the exit code, the message speedlab gave.
# docs/safety.md holds its output. Usage: scripts/safety_cases.sh [BUILD_DIR]
set -uo pipefail
set -m # background jobs keep SIGINT (a script's would ignore it, and speedlab honours that)
build=$(realpath "${1:-build}")
exe="$build/speedlab"
plugin="$build/test-plugins/libspeedlab-faulty.so"
[ -x "$exe" ] && [ -f "$plugin" ] || { echo "build speedlab and speedlab_tests in $build first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
quick=(--max-time 0.05 --min-samples 2 --warmup 0 --calibrate off --reports markdown,json --plugin-path "$plugin")

# The message: speedlab's error line, else its first warning (paths shortened to DIR), else
# the last line.
message() {
  local line
  line=$(grep -m1 -E "speedlab: error|excludes|not in range" "$1" || grep -m1 -E "speedlab: (WARNING|warning|--resume|interrupted)" "$1" ||
    tail -n1 "$1")
  line=${line//$work/DIR}
  line=${line//|/\\|}
  echo "${line:0:220}"
}
row() { # row "case" exit_code log
  printf '| %s | %s | %s |\n' "$1" "$2" "$(message "$3")"
}
run() { # run "case" command...: runs it, prints its row
  local name=$1
  shift
  "$@" >"$work/log" 2>&1
  row "$name" $? "$work/log"
}
# Non-empty lines of a file, 0 when it is missing or empty (grep -c prints 0 *and* fails when
# nothing matches, so `grep -c ... || echo 0` printed "0\n0" and broke the `[ ... -ge ]` tests).
lines() {
  local n
  n=$(grep -c . "$1" 2>/dev/null)
  echo "${n:-0}"
}

echo "| case | exit | message |"
echo "|---|---|---|"
d=$work/a
"$exe" run --workload faulty --variant ok --out "$d" "${quick[@]}" >/dev/null 2>&1
run "run --out into a folder holding an earlier run" "$exe" run --workload faulty --variant ok --out "$d" "${quick[@]}"
run "the same with --force" "$exe" run --workload faulty --variant ok --out "$d" --force "${quick[@]}"
run "--resume with one point more than the folder holds" "$exe" run --workload faulty --variant ok --param n=1000,2000 --out "$d" --resume "${quick[@]}"
run "--force and --resume together" "$exe" run --workload faulty --out "$d" --force --resume "${quick[@]}"

# A run that sits in a hanging point: a second run, report, then signals.
start_hang() {
  rm -rf "$work/h"
  "$exe" run --workload faulty --variant ok --variant hang --param n=1000,2000 --timeout 60 --out "$work/h" "${quick[@]}" \
    >"$work/hang.log" 2>&1 &
  hang_pid=$!
  for _ in $(seq 100); do [ "$(lines "$work/h/results.jsonl")" = 2 ] && break; sleep 0.1; done
  sleep 0.3
}
children_left() { pgrep -f -- "$work/h" | grep -v "^$hang_pid\$" | wc -l; }
start_hang
run "a second run into a folder in use" "$exe" run --workload faulty --variant ok --resume --out "$work/h" "${quick[@]}"
run "report on a folder in use" "$exe" report "$work/h"
for sig in INT TERM; do
  [ "$sig" = TERM ] && start_hang
  kill -s "$sig" "$hang_pid"
  wait "$hang_pid"
  code=$?
  sleep 0.3
  row "SIG$sig to speedlab alone during a point (kept $(lines "$work/h/results.jsonl") of 2 finished points; children left: $(children_left))" \
    "$code" "$work/hang.log"
done
start_hang
kill -s KILL "$hang_pid"
wait "$hang_pid" 2>/dev/null
code=$?
sleep 0.5
echo "| SIGKILL to speedlab alone (kept $(lines "$work/h/results.jsonl") of 2 points; children left: $(children_left)) | $code | (none: killed) |"

# In-process (--no-isolate): the point in progress is finished and kept, then the run stops.
rm -rf "$work/n"
"$exe" run --workload faulty --variant slow --param n=1000..9000:1000 --no-isolate --out "$work/n" "${quick[@]}" \
  >"$work/noiso.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ "$(lines "$work/n/results.jsonl")" -ge 2 ] && break; sleep 0.05; done
at=$(lines "$work/n/results.jsonl")
kill -s INT "$pid"
wait "$pid"
code=$?
row "SIGINT with --no-isolate after $at of 9 points (kept $(lines "$work/n/results.jsonl"): the one in progress finished)" \
  "$code" "$work/noiso.log"

run "--threads 99999" "$exe" run --workload faulty --threads 99999 --out "$work/t" "${quick[@]}"
printf 'threads: 99999\nworkloads:\n  - name: faulty\n' >"$work/threads.yaml"
run "suite file with threads: 99999" "$exe" run "$work/threads.yaml" --out "$work/t" "${quick[@]}"
mkdir -p "$work/suite-dir"
run "a folder given as the suite" "$exe" run "$work/suite-dir" "${quick[@]}"
: >"$work/empty.yaml"
run "an empty suite file" "$exe" run "$work/empty.yaml" "${quick[@]}"
printf '# only a comment\n' >"$work/comment.yaml"
run "a suite file with only comments" "$exe" run "$work/comment.yaml" "${quick[@]}"

mkdir -p "$work/e"
run "report on a folder without results.jsonl" "$exe" report "$work/e"
mkdir -p "$work/e/results.jsonl"
run "analyze where results.jsonl is a folder" "$exe" analyze "$work/e"
rm -rf "$work/e" && mkdir -p "$work/e" && : >"$work/e/results.jsonl"
run "report on an empty results.jsonl" "$exe" report "$work/e"
printf '{"id":"x","workload":"w","variant":"v"}\n{"a":1}\nnot json\n' >"$work/e/results.jsonl"
run "report on lines without status / not JSON (another tool's JSONL)" "$exe" report "$work/e"
run "analyze on the same" "$exe" analyze "$work/e"
run "report on a file instead of a folder" "$exe" report "$work/threads.yaml"

g=$work/g
"$exe" run --workload faulty --variant ok --out "$g" "${quick[@]}" >/dev/null 2>&1
good=$(head -n1 "$g/results.jsonl")
edit() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); exec(sys.argv[2]); print(json.dumps(j))" "$good" "$1"; }
for c in "j['samples_ns'][0]=-10545|negative sample" "j['dropped_records']=18446744073709551611|dropped_records 2^64-5" \
         "j['wall']['median']=0|ok point with a 0 ns median" "j['status']='fine'|unknown status" \
         "j['trace_file']='../../etc/passwd'|trace_file outside traces/"; do
  rm -rf "$work/b" && cp -r "$g" "$work/b"
  edit "${c%%|*}" >>"$work/b/results.jsonl"
  run "report with one more line: ${c##*|}" "$exe" report "$work/b" --format markdown
done
rm -rf "$work/b" && cp -r "$g" "$work/b"
edit "j['schema_version']=2" >>"$work/b/results.jsonl"
before=$(md5sum <"$work/b/results.json")
"$exe" report "$work/b" >"$work/log" 2>&1
code=$?
after=$(md5sum <"$work/b/results.json")
row "report with a line of schema_version 2 (results.json unchanged: $([ "$before" = "$after" ] && echo yes || echo NO))" "$code" "$work/log"
rm -rf "$work/b" && cp -r "$g" "$work/b"
echo '{"schema_version": 3}' >"$work/b/run.json"
run "report with run.json of schema_version 3" "$exe" report "$work/b"
rm -rf "$work/b" && cp -r "$g" "$work/b"
echo '{"wall_s": -1}' >"$work/b/run.json"
run "report with a negative wall_s in run.json" "$exe" report "$work/b" --format markdown
rm -rf "$work/b" && cp -r "$g" "$work/b"
rm -f "$work/b/report.md" && mkdir "$work/b/report.md"
run "report whose markdown file cannot be written" "$exe" report "$work/b" --format markdown,json
