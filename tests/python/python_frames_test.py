#!/usr/bin/env python3
"""Python stacks at CUDA calls (profilers/python), checked in a real CPython without CUDA.

  python_frames_test.py --python /path/to/python3 --probe libspeedlab_frames_probe.so [--bench]

The driver runs the given interpreter on this file (--child). The child loads the probe
library with ctypes.CDLL, whose calls release the GIL as PyTorch, CuPy and Triton do around a
CUDA call, captures stacks from known lines (nested functions, a method, a lambda, a
generator, exec'd code, a Python thread, a C thread, deep recursion), has them resolved with
the GIL and compares each with what the interpreter itself says (sys._getframe, linecache).
Exit 77 (skipped) with the reason when the interpreter is not installed.
"""
import argparse
import ctypes
import json
import linecache
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.abspath(__file__)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def expected_chain(depth=1):
    """The caller's frames, outermost first, as the probe should resolve them."""
    out = []
    f = sys._getframe(depth + 1)
    while f is not None:
        code = f.f_code
        name = code.co_qualname if sys.version_info >= (3, 11) else code.co_name
        out.append((code.co_filename, f.f_lineno, name))
        f = f.f_back
    return out[::-1]


class Probe:
    def __init__(self, path, library_paths="", user_paths=""):
        self.lib = ctypes.CDLL(path)
        self.lib.probe_interpreter.restype = ctypes.c_char_p
        self.lib.probe_describe.restype = ctypes.c_char_p
        self.lib.probe_bench.restype = ctypes.c_double
        self.lib.probe_init.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]
        self.usable = self.lib.probe_init(128, library_paths.encode(), user_paths.encode())
        self.info = json.loads(self.lib.probe_interpreter())

    def capture_with_expected(self):
        # One line: the caller's frame is at this line for both.
        return self.lib.probe_capture(), expected_chain(0)

    def describe(self, index):
        return json.loads(self.lib.probe_describe(index))


def compare(probe, index, expected, what, user_last=True):
    got = probe.describe(index)
    check(got["how"] == 0, f"{what}: how {got['how']}, expected 0 (own frames)")
    frames = got["frames"]
    chain = [(f.get("file"), f.get("line"), f.get("function")) for f in frames]
    check(chain == expected, f"{what}: frames\n  got      {chain}\n  expected {expected}")
    for f in frames:
        if f.get("file", "").startswith("<") or not f.get("resolved", True):
            continue
        text = linecache.getline(f["file"], f["line"]).strip()
        check(f["text"] == text[:240], f"{what}: text of {f['file']}:{f['line']} is {f['text']!r}, not {text!r}")
    if user_last and frames:
        check(frames[-1]["user"], f"{what}: the innermost frame ({frames[-1]['file']}) is not the user's")
    return got


class Widget:
    def method(self, probe):
        return probe.capture_with_expected()


def generator(probe):
    for _ in range(2):
        yield probe.capture_with_expected()


def recurse(probe, n):
    if n == 0:
        return probe.lib.probe_capture()
    return recurse(probe, n - 1)


def at_depth(probe, n, fn):
    if n <= 0:
        return fn()
    return at_depth(probe, n - 1, fn)


def nested_outer(probe):
    return nested_middle(probe)


def nested_middle(probe):
    return nested_inner(probe)


def nested_inner(probe):
    return probe.capture_with_expected()


def check_shapes(probe):
    """Nested functions, a method, a lambda, a generator, a thread: each against sys._getframe."""
    cases = [("nested functions", nested_outer(probe)), ("method", Widget().method(probe)),
             ("lambda", (lambda: probe.capture_with_expected())())]
    cases += [(f"generator step {i}", r) for i, r in enumerate(generator(probe))]
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("r", nested_outer(probe)))
    t.start()
    t.join()
    cases.append(("a Python thread", got["r"]))
    check(probe.lib.probe_resolve() == 1, "probe_resolve refused while Python runs")
    for what, (index, expected) in cases:
        result = compare(probe, index, expected, what)
        if what == "a Python thread":
            check(any(not f["user"] for f in result["frames"] if f["file"].endswith("threading.py")),
                  "threading.py's frames are not folded as the library's")
    # The same line twice: one stack; another line: another.
    calls = [nested_outer(probe)[0] for _ in range(2)] + [Widget().method(probe)[0]]
    ids = [probe.describe(i)["stack"] for i in calls]
    check(ids[0] == ids[1] and ids[0] != ids[2], f"interning: stacks {ids} (the same line twice, then another)")


def check_threads_without_frames(probe):
    probe.lib.probe_forget_last()
    got = probe.describe(probe.lib.probe_capture_c_thread())
    check(got["how"] == 2 and got["stack"] == 0, f"a C thread before any Python stack: {got}, expected how 2")
    index, _ = nested_outer(probe)
    own = probe.describe(index)["stack"]
    got = probe.describe(probe.lib.probe_capture_c_thread())
    check(got["how"] == 1 and got["stack"] == own, f"a C thread after a Python stack {own}: {got}, expected how 1")


def check_no_gil_needed(probe):
    """Captures for 0.3 s in C (the GIL released) while another thread runs Python: they
    neither wait for the GIL nor disturb it."""
    stop = []
    spins = [0]

    def spin():
        while not stop:
            spins[0] += 1
    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.02)
    before = spins[0]
    n = probe.lib.probe_capture_for(300)
    during = spins[0] - before
    stop.append(1)
    t.join()
    check(n > 1000, f"{n} captures in 0.3 s beside a spinning Python thread (one per GIL switch would be 60)")
    check(during > 0, "the spinning thread did not run while the captures went on")
    print(f"captures beside a spinning Python thread: {n} in 0.3 s, the thread ran {during} loops meanwhile")


def check_depth_bound(probe):
    index = recurse(probe, 200)
    probe.lib.probe_resolve()
    got = probe.describe(index)
    check(len(got["frames"]) == 128, f"a 200-deep recursion gave {len(got['frames'])} frames, expected 128")
    check(all(f["function"].endswith("recurse") for f in got["frames"]), "the 128 innermost frames are not recurse()")


def check_generated_code(probe):
    ns = {"probe": probe}
    exec(compile("index = probe.lib.probe_capture()", "<string>", "exec"), ns)
    probe.lib.probe_resolve()
    got = probe.describe(ns["index"])
    inner = got["frames"][-1]
    check(inner["file"] == "<string>" and not inner["user"], f"exec'd code: {inner}, expected <string>, not user")
    check(got["frames"][-2]["user"], "the frame calling exec is not the user's")


def check_freed_code(probe):
    """3.12+: a code object freed before its frames were resolved is resolved on its way out."""
    probe.lib.probe_resolve()  # the code watcher registered
    ns = {"probe": probe}
    code = compile("\n\nindex = probe.lib.probe_capture()", "<freed>", "exec")
    exec(code, ns)
    del code
    probe.lib.probe_resolve()
    inner = probe.describe(ns["index"])["frames"][-1]
    if sys.version_info >= (3, 12):
        check(inner.get("file") == "<freed>" and inner.get("line") == 3, f"a freed code object's frame: {inner}")
    else:
        print("freed code objects: not checked before 3.12 (no code watcher; python_resolver.hpp)")


def child(args):
    probe = Probe(args.probe, args.library_paths)
    info = probe.info
    print("interpreter:", info)
    want = "%d.%d.%d" % sys.version_info[:3]
    check(probe.usable == 1, f"not usable: {info['refused']}")
    check(info["version"] == want, f"version {info['version']}, expected {want}")
    if not probe.usable:
        return
    if args.library_paths:
        sys.path.insert(0, args.library_paths)
        import speedlab_fake_lib
        index, expected = speedlab_fake_lib.call(probe)
        probe.lib.probe_resolve()
        got = compare(probe, index, expected, "a frame under an extra library path", user_last=False)
        # ... child, call (under the library path), capture_with_expected (this file)
        check(not got["frames"][-2]["user"] and got["frames"][-3]["user"] and got["frames"][-1]["user"],
              f"extra library path: user flags {[f['user'] for f in got['frames']]}")
        return
    check_shapes(probe)
    check_threads_without_frames(probe)
    check_no_gil_needed(probe)
    check_depth_bound(probe)
    check_generated_code(probe)
    check_freed_code(probe)
    prefixes = probe.describe(0).get("library_prefixes", [])
    check(sys.base_prefix in prefixes, f"the folding prefixes {prefixes} lack sys.base_prefix {sys.base_prefix}")
    if args.bench:
        bench(probe)
    # The atexit path: a stack captured last, with the resolving thread on, is resolved at exit.
    probe.lib.probe_start_thread()
    nested_outer(probe)
    Widget().method(probe)
    # A capture during finalization (a module global's __del__): nothing read, how 2.
    global finalizing_capture
    finalizing_capture = AtFinalization(probe.lib.probe_capture)


class AtFinalization:
    def __init__(self, capture):
        self.capture = capture

    def __del__(self):
        self.capture()


def bench(probe):
    """Nanoseconds per call of capture + intern, and of the capture alone, with the stack
    `depth` frames deep at the call (checked by a capture at the same depth)."""
    for depth in (10, 50):
        # bench's own frames and below, then at_depth's n + 1 frames, then the lambda's.
        n = depth - len(expected_chain(0)) - 2
        got = at_depth(probe, n, lambda: probe.lib.probe_capture())
        probe.lib.probe_resolve()
        frames = len(probe.describe(got)["frames"])
        check(frames == depth, f"bench: {frames} frames, expected {depth}")
        for which, name in ((0, "capture+intern"), (1, "capture only")):
            runs = sorted(at_depth(probe, n, lambda: probe.lib.probe_bench(200000, which)) for _ in range(5))
            print(f"bench CPython {sys.version.split()[0]} depth {frames} {name}: median {runs[2]:.1f} ns per call "
                  f"(5 runs of 200000: {runs[0]:.1f} to {runs[-1]:.1f})")


def driver(args):
    if not os.path.exists(args.python):
        print(f"SKIP: {args.python} is not installed")
        return 77
    exit_file = tempfile.mktemp(prefix="speedlab-frames-exit-")
    env = dict(os.environ, SPEEDLAB_FRAMES_PROBE_EXIT=exit_file)
    cmd = [args.python, HERE, "--child", "--probe", args.probe] + (["--bench"] if args.bench else [])
    rc = subprocess.call(cmd, env=env)
    if rc != 0:
        print(f"FAIL: {' '.join(cmd)} exited {rc}")
        return 1
    try:
        with open(exit_file) as f:
            at_exit = json.load(f)
        os.unlink(exit_file)
    except (OSError, ValueError) as e:
        print(f"FAIL: the probe wrote no exit record ({e})")
        return 1
    print("at exit:", at_exit)
    if not (at_exit["done"] and at_exit["unresolved"] == 0 and at_exit["resolved"] == at_exit["frames"]):
        print("FAIL: frames left unresolved at exit (Python's atexit callback did not resolve them)")
        return 1
    if at_exit["last_how"] != 2:
        print(f"FAIL: a capture during finalization gave how {at_exit['last_how']}, expected 2 (nothing read)")
        return 1
    folder = tempfile.mkdtemp(prefix="speedlab-lib-")
    with open(os.path.join(folder, "speedlab_fake_lib.py"), "w") as f:
        f.write("def call(probe):\n    return probe.capture_with_expected()\n")
    cmd = [args.python, HERE, "--child", "--probe", args.probe, "--library-paths", folder]
    if subprocess.call(cmd, env=env) != 0:
        print(f"FAIL: {' '.join(cmd)}")
        return 1
    print("python frames: all checks passed with", args.python)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--python")
    p.add_argument("--probe", required=True)
    p.add_argument("--child", action="store_true")
    p.add_argument("--bench", action="store_true")
    p.add_argument("--library-paths", default="")
    args = p.parse_args()
    if not args.child:
        return driver(args)
    child(args)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
