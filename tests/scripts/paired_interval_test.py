"""scripts/paired_interval.py: the order-statistics interval of a median and the per-process
report of paired blocks (the cost benches' one implementation)."""
import json
import pathlib
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root / "scripts"))
from paired_interval import median_interval  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# n = 6: only the extremes reach 95% (coverage 1 - 2/64); n = 5 never does.
m, lo, hi = median_interval([3, -1, 10, 5, 4, 6])
check((m, lo, hi) == (4.5, -1, 10), f"n=6: {(m, lo, hi)}")
check(median_interval([1, 2, 3, 4, 5])[1] is None, "n=5 has no 95% interval")
# n = 20: the 6th and 15th order statistics (coverage 95.9%).
m, lo, hi = median_interval(list(range(20)))
check((lo, hi) == (5, 14), f"n=20: {(lo, hi)}")

with tempfile.TemporaryDirectory() as d:
    f = pathlib.Path(d) / "runs.jsonl"
    f.write_text(json.dumps({"on": [110, 105, 120, 100, 108, 112], "off": [100, 100, 100, 100, 100, 100]}) + "\n" +
                 json.dumps({"error": "no such capture"}) + "\n")
    out = subprocess.run([sys.executable, str(root / "scripts" / "paired_interval.py"), str(f), "on", "off", "t",
                          "--relative"], capture_output=True, text=True, check=True).stdout
    check("t process 1: no such capture" in out, out)
    check("median +9.000%, 95% interval +0.000 .. +20.000%" in out, out)

# The in-process pairs recorded on the H200 (tests/fixtures/bench/in-process; the figures of
# docs/results/light-capture.md): the light default's capture on and off in one process.
recorded = root / "tests" / "fixtures" / "bench" / "in-process"
for name, on, off, extra, expected in [
        ("storm-default.jsonl", "capture_on_us_per_launch", "capture_off_us_per_launch", ["--unit", " us/launch"],
         "64 pairs in 4 processes; on - off: median +0.130 us/launch, 95% interval +0.053 .. +0.186 us/launch"),
        # the next session's call (2 processes), pooled with it
        ("storm-default.jsonl", "capture_on_us_per_launch", "capture_off_us_per_launch",
         ["--unit", " us/launch", "--with", str(recorded / "storm-default-2.jsonl")],
         "96 pairs in 6 processes; on - off: median +0.090 us/launch, 95% interval +0.046 .. +0.146 us/launch"),
        ("storm-default-2.jsonl", "capture_on_us_per_launch", "capture_off_us_per_launch", ["--unit", " us/launch"],
         "32 pairs in 2 processes; on - off: median +0.050 us/launch, 95% interval -0.059 .. +0.120 us/launch"),
        ("torch-default.jsonl", "capture_on_us", "capture_off_us", ["--relative"],
         "160 pairs in 4 processes; on - off: median +1.637%, 95% interval +0.054 .. +3.444%")]:
    out = subprocess.run([sys.executable, str(root / "scripts" / "paired_interval.py"), str(recorded / name), on, off,
                          "t", *extra], capture_output=True, text=True, check=True).stdout
    check(expected in out, f"{name}: {out}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("paired_interval: ok")
