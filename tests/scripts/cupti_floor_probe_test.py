"""profilers/cupti/floor_probe.cpp (libspeedlab-cupti-floor.so), without a GPU: its kinds are
read from SPEEDLAB_FLOOR_KINDS, a bad one is named in its exit line, and a refusal by CUPTI
(no driver here) leaves the program running and exiting 0 with the reason said, never a crash.
The library is called as CUDA would call it (InitializeInjection) from a Python process."""
import json
import os
import subprocess
import sys

library = sys.argv[1]
failures = []


def run(kinds):
    env = {**os.environ}
    env.pop("SPEEDLAB_FLOOR_KINDS", None)
    if kinds is not None:
        env["SPEEDLAB_FLOOR_KINDS"] = kinds
    code = f"import ctypes; print(ctypes.CDLL({library!r}).InitializeInjection())"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stderr.splitlines() if line.startswith('{"cupti_floor"')]
    return done, json.loads(lines[-1])["cupti_floor"] if lines else None


def check(cond, what):
    if not cond:
        failures.append(what)


done, line = run("kernel,bogus")
check(done.returncode == 0 and done.stdout.strip() == "1", f"bad kind: exit {done.returncode}, {done.stdout!r}")
check(line and "unknown kind 'bogus'" in line.get("error", ""), f"bad kind not named: {done.stderr!r}")

done, line = run("none")  # CUPTI attached, nothing enabled: nothing to refuse, nothing recorded
check(done.returncode == 0, f"none: exit {done.returncode}")
check(line == {"kinds": "none", "kernel": 0, "memcpy": 0, "memset": 0, "dropped": 0}, f"none: {line}")

done, line = run(None)  # the default kinds: refused without a driver, counted with one
check(done.returncode == 0 and done.stdout.strip() == "1", f"default: exit {done.returncode}, {done.stderr!r}")
check(line is not None and line["kinds"] == "kernel,memcpy,memset", f"default: {done.stderr!r}")
check(line is not None and ("error" in line or line.get("dropped") == 0), f"default: {line}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("cupti_floor_probe: ok")
