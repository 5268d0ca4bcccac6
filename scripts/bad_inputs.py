#!/usr/bin/env python3
"""The bad-input table: runs speedlab on inputs that lie (suite files, command lines,
plugins, saved run folders, signals, concurrent runs) and checks, for each, that it ends
with a non-zero exit code (never a signal), within a time limit, with a message that names
the problem, and without a sanitizer report. Writes the table (input, message, exit code)
as Markdown.

  scripts/bad_inputs.py [--speedlab build/speedlab] [--plugins build/test-plugins]
                        [--table docs/bad-inputs.md] [--only TEXT] [--strict]

Exit status: 0 when every case passed (cases marked pending for another branch may fail
unless --strict), 1 otherwise. Standard library only; no shell builds a command line here.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer")
QUICK = ["--max-time", "0.05", "--min-samples", "2", "--max-samples", "20", "--warmup", "0", "--calibrate", "off",
         "--reports", "json", "--profilers", "host"]


def quick(*leave_out):
    """QUICK without the options named (a case that sets one itself)."""
    out, i = [], 0
    while i < len(QUICK):
        if QUICK[i] in leave_out:
            i += 2
            continue
        out += QUICK[i:i + 2]
        i += 2
    return out


class Case:
    def __init__(self, group, title, args=None, expect=r".", codes=(2,), files=None, env=None, timeout=60,
                 pending=None, run=None, stdin=None):
        self.group, self.title, self.args, self.expect, self.codes = group, title, args or [], expect, codes
        self.files, self.env, self.timeout, self.pending, self.run, self.stdin = files or {}, env or {}, timeout, pending, run, stdin


def cases(ctx):
    """Every case. `ctx` has the paths the cases need; {tmp} in args is the case's own folder."""
    faulty = str(ctx.plugins / "libspeedlab-faulty.so")
    fp = ["--plugin-path", faulty]
    run_base = ["run", "--workload", "faulty", "--variant", "ok", "--param", "n=1000"] + fp
    run_ok = run_base + QUICK
    out = []
    add = out.append

    # --- command line: numbers through the one checked path -----------------------------------
    numeric = {
        "--timeout": ["nan", "inf", "-inf", "1e10", "0", "-5", "1e309", "abc", "", "0.001", "2^100"],
        "--max-time": ["nan", "0", "-1", "1e10", "inf"],
        "--min-time": ["nan", "-1", "1e9", "x"],
        "--min-samples": ["0", "-1", "2.5", "nan", "1e20"],
        "--max-samples": ["0", "-3", "1e300", "1.5"],
        "--warmup": ["-1", "1.5", "nan", "1e7", "-0.5"],
        "--threads": ["99999", "-1", "1.5", "nan", "1e12"],
    }
    for option, values in numeric.items():
        for v in values:
            add(Case("command line: numbers", f"{option} {v!r}", run_base + quick(option) + [option, v],
                     expect=re.escape(option) + r" (must be|.*requires)"))
    # Every other command's numbers: NaN and infinities refused, as run's are.
    other_numbers = {
        ("compare", "--threshold"): ["nan", "inf", "-inf", "-1"],
        ("profile", "--flush-interval"): ["nan", "inf", "0", "1.5"],
        ("profile", "--counters-per-kernel"): ["nan", "-inf"],
        ("profile", "--source-launches"): ["inf", "nan"],
    }
    for (command, option), values in other_numbers.items():
        for v in values:
            args = [command, option, v] + (["--", "true"] if command == "profile" else [str(ctx.good_run)] * 2)
            add(Case("command line: numbers", f"{command} {option} {v!r}", args, expect=re.escape(option) + r" must be"))
    add(Case("command line: numbers", "--threads 99999 --no-isolate", run_ok + ["--threads", "99999", "--no-isolate"],
             expect=r"--threads must be a whole number between 0 and 4096"))
    add(Case("command line: numbers", "--min-samples 10 --max-samples 5", run_base + quick("--min-samples", "--max-samples") + ["--min-samples", "10", "--max-samples", "5"],
             expect=r"--min-samples \(10\) is larger than --max-samples \(5\)"))
    add(Case("command line: numbers", "--min-time 2 --max-time 1", run_base + quick("--max-time") + ["--min-time", "2", "--max-time", "1"],
             expect=r"--min-time .* larger than --max-time"))
    add(Case("command line: numbers", "--timeout 0 prints no DBL_MAX", run_ok + ["--timeout", "0"],
             expect=r"^(?![\s\S]*179769313486231)[\s\S]*between 0.01 and 86400"))

    # --- command line: names, sweeps, paths -------------------------------------------------
    cl = "command line: names and sweeps"
    add(Case(cl, "no subcommand", [], expect=r"a command is required: list, run"))
    add(Case(cl, "unknown subcommand", ["frobnicate"], expect=r"unknown command 'frobnicate'"))
    add(Case(cl, "misspelt subcommand", ["lsit"], expect=r"did you mean 'list'"))
    add(Case(cl, "unknown option", ["run", "--frobnicate"],
             expect=r"speedlab run: error: unknown option '--frobnicate'\nUsage: speedlab run \[OPTIONS\]"))
    add(Case(cl, "misspelt option", ["run", "--outt", "x"], expect=r"unknown option '--outt' \(did you mean '--out'\?\)"))
    add(Case(cl, "misspelt program option", ["--quite", "list"], expect=r"did you mean '--quiet'"))
    add(Case(cl, "one argument too many", ["analyze", str(ctx.good_run), "extra"], expect=r"unexpected argument 'extra'"))
    add(Case(cl, "unknown workload", ["run", "--workload", "faulti"] + fp, expect=r"did you mean 'faulty'"))
    add(Case(cl, "10 MB workload name is not echoed back", ["run", "--workload", "w" * 100000] + fp,
             expect=r"unknown workload 'w{80}\.\.\. \(100000 bytes\)'"))
    add(Case(cl, "empty workload name", ["run", "--workload", ""] + fp, expect=r"--workload is empty"))
    add(Case(cl, "unknown variant", ["run", "--workload", "faulty", "--variant", "okk"] + fp, expect=r"did you mean 'ok'"))
    add(Case(cl, "variant named twice", ["run", "--workload", "faulty", "--variant", "ok", "--variant", "ok"] + fp,
             expect=r"variant 'ok' is named twice"))
    add(Case(cl, "unknown parameter", ["run", "--workload", "faulty", "--param", "nn=5"] + fp, expect=r"unknown parameter 'nn'"))
    add(Case(cl, "--param without =", ["run", "--workload", "faulty", "--param", "n"] + fp, expect=r"name=value"))
    add(Case(cl, "--param =5", ["run", "--workload", "faulty", "--param", "=5"] + fp, expect=r"name=value"))
    add(Case(cl, "--param n= (empty value)", ["run", "--workload", "faulty", "--param", "n="] + fp, expect=r"empty value"))
    add(Case(cl, "--param without a workload", ["run", "--param", "n=5", "--plugin-path", faulty], expect=r"."
             , codes=(2,)))
    sweeps = {
        "n=2^53..2^53+1 (floating point would never end)": ("n=9007199254740992..9007199254740993", r"above the maximum"),
        "n=2e9..2e9 (one point, above the maximum)": ("n=2e9..2e9", r"'2000000000'.*above the maximum"),
        "n=2^9..2^3 (start after stop)": ("n=2^9..2^3", r"start is larger than stop"),
        "n=1..10:0": ("n=1..10:0", r"step must be positive"),
        "n=1..10:-1": ("n=1..10:-1", r"step must be positive"),
        "n=1..1e9": ("n=1..1e9", r"at most 4096"),
        "n=0..9223372036854775807": ("n=0..9223372036854775807", r"at most 4096"),
        "n=1:1e6:1 (factor 1)": ("n=1:1e6:1", r"factor must be greater than 1"),
        "n=0:10:2 (geometric from 0)": ("n=0:10:2", r"start must be positive"),
        "n=1:1e300:1.0001": ("n=1:1e300:1.0001", r"at most 4096"),
        "n=2^0.5..2^3": ("n=2^0.5..2^3", r"whole exponents"),
        "n=2^1..2^5000": ("n=2^1..2^5000", r"whole exponents"),
        "n=1.5 (integer parameter)": ("n=1.5", r"expected an integer"),
        "n=lots": ("n=lots", r"expected an integer"),
        "n=0 (below the minimum)": ("n=0", r"below the minimum 1"),
        "n=1e400": ("n=1e400", r"expected an integer"),
        "n=1000,1e3 (the same point twice)": ("n=1000,1e3", r"the value 1000 is given twice"),
        "scale=1..1.0000000000001:1e-15 (step below precision)": ("scale=1..1.0000000000001:1e-15", r"twice"),
        "scale=nan": ("scale=nan", r"expected a number"),
        "scale=11 (above the maximum)": ("scale=11", r"above the maximum 10"),
        "mode=c (not a choice)": ("mode=c", r"expected one of a, b"),
        "n=1..4096 x scale 0..1:0.01 (plan too large)": (None, r"at most 100000 points"),
    }
    for title, (param, expect) in sweeps.items():
        params = ["--param", param] if param else ["--param", "n=1..4096", "--param", "scale=0..1:0.01"]
        add(Case(cl, title, ["run", "--workload", "faulty", "--variant", "ok"] + params + fp, expect=expect))
    add(Case(cl, "unknown profiler", run_ok[:-len(QUICK)] + ["--profilers", "hots"], expect=r"did you mean 'host'"))
    add(Case(cl, "unknown report format", run_base + quick("--reports") + ["--reports", "markdwon"], expect=r"did you mean 'markdown'"))
    add(Case(cl, "unknown calibrate mode", run_base + quick("--calibrate") + ["--calibrate", "sometimes"], expect=r"calibrate"))
    add(Case(cl, "--out ''", run_ok + ["--out", ""], expect=r"--out is an empty path"))
    for command, args in [("profile", ["profile"]), ("compare", ["compare", str(ctx.good_run), str(ctx.good_run)])]:
        tail = ["--", "true"] if command == "profile" else []
        add(Case(cl, f"{command} --out FILE", args + ["--out", "{tmp}/file"] + tail, files={"file": "x"},
                 expect=r"^(?![\s\S]*filesystem error)[\s\S]*--out \S*file: '\S*file' is a file, not a folder"))
    add(Case(cl, "new --dir FILE", ["new", "x", "--dir", "{tmp}/file"], files={"file": "x"},
             expect=r"--dir \S*file: '\S*file' is a file, not a folder"))
    add(Case(cl, "--python ''", run_ok + ["--python", ""], expect=r"--python is empty; name an interpreter"))
    add(Case(cl, "--force and --resume together", run_ok + ["--force", "--resume"], expect=r"force|resume"))
    add(Case(cl, "suite file missing", ["run", "/nonexistent/suite.yaml"], expect=r"/nonexistent/suite.yaml: cannot open"))
    add(Case(cl, "suite file ''", ["run", ""], expect=r"suite file name is empty"))
    add(Case(cl, "suite is a folder", ["run", "{tmp}"], expect=r"is a folder, not a suite file"))
    add(Case(cl, "report of a missing folder", ["report", "/nonexistent-run"], expect=r"/nonexistent-run"))
    add(Case(cl, "report ''", ["report", ""], expect=r"output folder name is empty"))
    add(Case(cl, "analyze ''", ["analyze", ""], expect=r"output folder name is empty"))
    add(Case(cl, "report FILE instead of a folder", ["report", "{tmp}/results.jsonl"], files={"results.jsonl": "{}\n"},
             expect=r"is a file; give the output folder"))
    add(Case(cl, "analyze FILE instead of a folder", ["analyze", "{tmp}/x.yaml"], files={"x.yaml": "a: 1\n"},
             expect=r"is a file; give the output folder"))
    add(Case(cl, "report --format unknown", ["report", str(ctx.good_run), "--format", "pdf"], expect=r"unknown report format 'pdf'"))

    # --- suite files -------------------------------------------------------------------------
    sf = "suite file"
    def suite(title, text, expect, **kw):
        add(Case(sf, title, ["run", "{tmp}/suite.yaml"] + fp, files={"suite.yaml": text}, expect=expect, **kw))
    suite("empty file", "", r"suite file is empty")
    suite("only comments", "# nothing\n\n", r"suite file is empty")
    suite("invalid YAML", "workloads:\n  - name: [unclosed\n", r"suite.yaml:\d+:\d+: invalid YAML")
    suite("tab indentation", "workloads:\n\t- faulty\n", r"suite.yaml:\d+:\d+: invalid YAML")
    suite("top level is a list", "- faulty\n", r"the suite must be a mapping")
    suite("top level is a scalar", "hello\n", r"the suite must be a mapping")
    suite("unknown key", "timout: 5\n", r"suite.yaml:1:1: unknown key 'timout'.*did you mean 'timeout'")
    suite("duplicate key", "timeout: 5\ntimeout: 9\n", r"key 'timeout' appears twice.*first at .*suite.yaml:1:1")
    suite("duplicate parameter", "workloads:\n  - name: faulty\n    params: {n: 1, n: 2}\n", r"'n' appears twice")
    suite("non-scalar key", "? [a, b]\n: 1\n", r"suite.yaml:1:\d+: a key in the suite must be a single value")
    for key, value, expect in [
        ("timeout", "nan", r"timeout must be a number between 0.01 and 86400"),
        ("timeout", "0", r"timeout must be"), ("timeout", "1e10", r"timeout must be"), ("timeout", "-1", r"timeout must be"),
        ("timeout", ".inf", r"timeout must be"), ("timeout", "[1, 2]", r"timeout must be a single value"),
        ("threads", "99999", r"threads must be a whole number between 0 and 4096"), ("threads", "1.5", r"whole number"),
        ("threads", "-1", r"threads must be"), ("warmup", "-1", r"warmup \(runs\) must be"),
        ("warmup", "{runs: 1e7}", r"warmup.runs must be"), ("warmup", "{min_time: nan}", r"warmup.min_time must be"),
        ("measure", "{min_samples: 0}", r"measure.min_samples must be"),
        ("measure", "{max_samples: 2.5}", r"measure.max_samples must be a whole number"),
        ("measure", "{min_samples: 10, max_samples: 5}", r"min_samples \(10\) is larger than measure.max_samples \(5\)"),
        ("measure", "{min_time: 5, max_time: 1}", r"measure.min_time .* larger than measure.max_time"),
        ("measure", "{max_time: 0}", r"measure.max_time must be"), ("measure", "{target_noise: 2}", r"target_noise must be"),
        ("measure", "{max_tiem: 3}", r"did you mean 'max_time'"), ("measure", "5", r"'measure' must be a mapping"),
        ("cupti", "{buffer_mib: 0}", r"cupti.buffer_mib must be"),
        ("cupti", "{buffer_mib: 8, max_buffer_mib: 4}", r"max_buffer_mib is smaller"),
        ("cupti", "{clock: sometimes}", r"cupti.clock must be one of"), ("isolate", "maybe", r"isolate must be true or false"),
        ("self_timing", "often", r"true or false"), ("calibrate", "sometimes", r"calibrate must be one of off, cached"),
        ("output", "''", r"output is an empty path"), ("profilers", "{a: 1}", r"profilers must be a list"),
        ("reports", "[markdwon]", r"did you mean 'markdown'"), ("profilers", "[hots]", r"did you mean 'host'"),
    ]:
        suite(f"{key}: {value}", f"{key}: {value}\nworkloads: [faulty]\n", expect)
    suite("workloads is a mapping", "workloads: {faulty: 1}\n", r"'workloads' must be a list")
    suite("workload entry without a name", "workloads:\n  - params: {n: 1}\n", r"needs a 'name'")
    suite("workload name empty", "workloads:\n  - name: ''\n", r"workload name is empty")
    suite("unknown workload", "workloads: [faulti]\n", r"suite.yaml:1:\d+: unknown workload 'faulti'.*did you mean")
    suite("variants: []", "workloads:\n  - name: faulty\n    variants: []\n", r"suite.yaml:3:\d+: 'variants' is an empty list")
    suite("variants: a mapping", "workloads:\n  - name: faulty\n    variants: {ok: 1}\n", r"'variants' must be a list")
    suite("unknown variant", "workloads:\n  - name: faulty\n    variants: [okk]\n", r"suite.yaml:3:\d+: .*did you mean 'ok'")
    suite("params: a list", "workloads:\n  - name: faulty\n    params: [1, 2]\n", r"'params' must be a mapping")
    suite("params value a mapping", "workloads:\n  - name: faulty\n    params: {n: {a: 1}}\n", r"must be a single value")
    suite("params: empty list", "workloads:\n  - name: faulty\n    params: {n: []}\n", r"empty list of values")
    suite("params: nested list", "workloads:\n  - name: faulty\n    params: {n: [[1]]}\n", r"must be a single value")
    suite("fractional step giving one value twice",
          "workloads:\n  - name: faulty\n    params: {scale: \"1..1.0000000000001:1e-15\"}\n", r"suite.yaml:3:\d+: .*twice")
    suite("the same value twice", "workloads:\n  - name: faulty\n    params: {n: [1000, 1e3]}\n", r"1000 is given twice")
    suite("the same point from two entries with other settings",
          "workloads:\n  - {name: faulty, variants: [ok]}\n  - {name: faulty, variants: [ok], measure: {min_samples: 7}}\n",
          r"already planned by the entry at .*suite.yaml:2:\d+ with other measurement settings")
    many = "workloads:\n  - name: faulty\n    params:\n      n: [" + ",".join(['"1..4096"'] * 25000) + "]\n"
    suite("25,000 sweeps in one list", many, r"at most 4096")
    bomb = "workloads:\n  - &w {name: faulty, params: {n: 1..4096, scale: \"0..4.095:0.001\"}}\n" + "  - *w\n" * 999
    suite("one entry repeated 1000 times through aliases", bomb, r"at most 100000 points|in all")
    nested = "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    suite("billion laughs under unknown keys", nested, r"unknown key 'a'")
    suite("1001 workload entries", "workloads:\n" + "  - faulty\n" * 1001, r"at most 1000")
    suite("deeply nested lists", "workloads: " + "[" * 5000 + "]" * 5000 + "\n", r"invalid YAML|must be|deep")
    suite("binary garbage", "\x00\x01\x02\xff\xfe workloads", r"suite.yaml:1:1: the suite file is not text")
    suite("three NUL bytes (read before as an empty suite: every workload)", b"\x00\x00\x00",
          r"suite.yaml:1:1: the suite file is not text \(byte 0x00, a NUL byte\); a suite is a YAML text file")
    suite("a control character inside a line", "timeout: 5\x07\nworkloads: [faulty]\n",
          r"suite.yaml:1:11: the suite file is not text \(byte 0x07, a control character\)")
    suite("Latin-1 text (not UTF-8)", b"output: caf\xe9\nworkloads: [faulty]\n",
          r"suite.yaml:1:12: the suite file is not UTF-8 text \(byte 0xe9\)")
    suite("UTF-16 suite file", "workloads: [faulty]\n".encode("utf-16"), r"suite.yaml: the suite file is UTF-16 text; save it as UTF-8")
    suite("workloads: [] (read before as every workload)", "timeout: 5\nworkloads: []\n",
          r"suite.yaml:2:12: 'workloads' is an empty list, which selects no workload")
    suite("200,000-deep YAML", "workloads: " + "[" * 200000 + "]" * 200000 + "\n",
          r"suite.yaml:1:\d+: invalid YAML: lists or mappings nested more than \d+ deep")
    suite("3,000-deep block mappings", "".join(" " * i + "a:\n" for i in range(3000)),
          r"suite.yaml:\d+:\d+: (invalid YAML: lists or mappings nested more than \d+ deep|unknown key 'a')")
    suite("output path with a NUL byte", 'output: "out\\0put"\nworkloads: [faulty]\n',
          r"suite.yaml:1:9: output \(a folder\) holds a NUL byte")
    suite("workload name with a NUL byte", 'workloads: ["faulty\\0"]\n', r"suite.yaml:1:\d+: workload name holds a NUL byte")
    suite("python: ''", "python: ''\nworkloads: [faulty]\n", r"suite.yaml:1:9: python is empty; name an interpreter")
    suite("python interpreter with a NUL byte", 'python: "/usr/bin/python3\\0"\nworkloads: [faulty]\n',
          r"suite.yaml:1:9: python .* holds a NUL byte")
    suite("10 MB key (yaml-cpp allows 1024 characters)", "k" * 10_000_000 + ": 1\n", r"suite.yaml:1:\d+: invalid YAML")
    suite("10 MB value echoed back", "calibrate: " + "x" * 10_000_000 + "\n",
          r"calibrate must be one of off, cached, quick, full; found 'x{80}\.\.\. \(10000000 bytes\)'")

    # --- plugins -----------------------------------------------------------------------------
    pl = "plugins"
    broken = ctx.plugins / "broken"
    add(Case(pl, "list: folder of broken plugins (crash, abort, exit, undefined symbol, missing dependency, truncated)",
             ["list", "--plugin-path", str(broken), "--plugin-path", faulty],
             expect=r"(?s)(?=.*broken-crash.so: .*SIGSEGV)(?=.*broken-abort.so: .*SIGABRT)(?=.*undefined symbol)"
                    r"(?=.*libspeedlab_test_dependency.so: cannot open)(?=.*libspeedlab-truncated.so)(?=.*faulty  )",
             codes=(1,)))
    for name, expect in [("crash", r"SIGSEGV"), ("abort", r"SIGABRT"), ("exit", r"exit code 3"),
                         ("undefined", r"undefined symbol: speedlab_test_symbol_nobody_defines"),
                         ("missing-dep", r"libspeedlab_test_dependency.so: cannot open shared object file")]:
        add(Case(pl, f"list: plugin ({name}) that fails while loading", ["list", "--plugin-path", str(broken / f"libspeedlab-broken-{name}.so")],
                 expect=expect, codes=(1,)))
    add(Case(pl, "list: truncated plugin", ["list", "--plugin-path", str(broken / "libspeedlab-truncated.so")],
             expect=r"libspeedlab-truncated.so: (cannot be loaded|loading it .* ended)", codes=(1,)))
    add(Case(pl, "list: plugin whose describe() hangs", ["list", "--plugin-path", str(ctx.plugins / "broken-hang")],
             expect=r"did not finish within 10 s", codes=(1,)))
    add(Case(pl, "run goes on beside broken plugins",
             ["run", "--workload", "faulty", "--variant", "ok", "--param", "n=1000", "--plugin-path", str(broken),
              "--plugin-path", faulty, "--out", "{tmp}/out"] + QUICK,
             expect=r"(?s)broken-crash.so: .*SIGSEGV.*1 points", codes=(0,)))
    add(Case(pl, "text file named like a plugin", ["list", "--plugin-path", str(ctx.plugins / "garbage")],
             expect=r"no ELF header", codes=(1,)))
    add(Case(pl, "library without the entry symbols", ["list", "--plugin-path", str(ctx.plugins / "not-a-plugin")],
             expect=r"not a speedlab plugin", codes=(1,)))
    add(Case(pl, "plugin of another ABI", ["list", "--plugin-path", str(ctx.plugins / "wrong-abi")],
             expect=r"ABI version 9999 does not match this speedlab's ABI version \d+", codes=(1,)))
    add(Case(pl, "plugin for another architecture", ["list", "--plugin-path", "{tmp}/libspeedlab-arm.so"],
             files={"libspeedlab-arm.so": b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x03\x00\xb7\x00" + b"\0" * 44},
             expect=r"another architecture \(AArch64\)", codes=(1,)))
    add(Case(pl, "32-bit plugin", ["list", "--plugin-path", "{tmp}/libspeedlab-32.so"],
             files={"libspeedlab-32.so": b"\x7fELF\x01\x01\x01" + b"\0" * 45}, expect=r"32-bit", codes=(1,)))
    add(Case(pl, "empty .so", ["list", "--plugin-path", "{tmp}/libspeedlab-empty.so"], files={"libspeedlab-empty.so": ""},
             expect=r"no ELF header", codes=(1,)))
    add(Case(pl, "an executable as a plugin", ["list", "--plugin-path", str(ctx.speedlab)],
             expect=r"cannot be loaded: .*(position-independent|cannot dynamically load)", codes=(1,)))
    add(Case(pl, "plugin path missing", ["list", "--plugin-path", "/nonexistent/plugins"], expect=r"not found", codes=(1,)))
    add(Case(pl, "plugin path ''", ["list", "--plugin-path", ""], expect=r"empty plugin path", codes=(1,)))
    add(Case(pl, "same plugin folder named twice", ["list", "--plugin-path", str(ctx.plugins / "wrong-abi"), "--plugin-path",
                                                    str(ctx.plugins / "wrong-abi") + "/"],
             expect=r"^(?![\s\S]*wrong-abi.so[\s\S]*wrong-abi.so: plugin ABI)[\s\S]*ABI version 9999", codes=(1,)))
    add(Case(pl, "SPEEDLAB_PLUGIN_PATH to broken plugins", ["list"], env={"SPEEDLAB_PLUGIN_PATH": str(broken)},
             expect=r"broken-crash.so: .*SIGSEGV", codes=(1,)))
    add(Case(pl, "files in a plugin folder that are skipped say why", ["list", "--plugin-path", "{tmp}"],
             files={"notes.txt": "x", "libspeedlab-x.so.1": "x"}, expect=r"notes.txt: name does not match libspeedlab-\*.so",
             codes=(0,)))

    # --- saved run folders -------------------------------------------------------------------
    rf = "saved run folder"
    good_lines = ctx.good_run.joinpath("results.jsonl").read_text()
    good_line = good_lines.splitlines()[0]
    run_json = ctx.good_run.joinpath("run.json").read_text()
    def folder(title, files, expect, codes=(1, 2), command="report"):
        add(Case(rf, title, [command, "{tmp}"], files=files, expect=expect, codes=codes))
    folder("empty folder", {}, r"results.jsonl")
    folder("results.jsonl empty", {"results.jsonl": "", "run.json": run_json}, r"no (valid|readable)|empty")
    folder("all garbage", {"results.jsonl": "garbage\n{{{\n", "run.json": run_json},
           r"results.jsonl:1: skipped: not valid JSON at column 1: a bare word")
    folder("another tool's JSONL", {"results.jsonl": '{"a": 1}\n{"b": 2}\n', "run.json": run_json}, r"status|missing")
    folder("a line without a status", {"results.jsonl": json.dumps({k: v for k, v in json.loads(good_line).items() if k != "status"}) + "\n",
                                        "run.json": run_json}, r"status")
    future = json.loads(good_line)
    future["schema_version"] = 99
    folder("a newer schema version", {"results.jsonl": json.dumps(future) + "\n", "run.json": run_json}, r"schema")
    negative = json.loads(good_line)
    negative["samples_ns"] = [-10545.0] * 3
    folder("negative times", {"results.jsonl": json.dumps(negative) + "\n", "run.json": run_json}, r"negative|samples_ns")
    dropped = json.loads(good_line)
    dropped["dropped_records"] = -5
    folder("dropped records -5", {"results.jsonl": json.dumps(dropped) + "\n", "run.json": run_json}, r"dropped_records")
    folder("results.jsonl is a folder", {"results.jsonl/x": "", "run.json": run_json}, r"results.jsonl")
    folder("run.json garbage (results fine)", {"results.jsonl": good_lines, "run.json": "{not json"}, r"run.json", codes=(0, 1, 2))
    folder("analyze: all garbage", {"results.jsonl": "garbage\n", "run.json": run_json},
           r"results.jsonl:1: skipped: not valid JSON at column 1", command="analyze")
    folder("analyze: empty results", {"results.jsonl": "", "run.json": run_json}, r"no (valid|readable)|empty",
           command="analyze")
    folder("10 MB line", {"results.jsonl": "x" * 10_000_000 + "\n", "run.json": run_json},
           r"^(?![\s\S]*x{100})[\s\S]*results.jsonl:1: skipped: not valid JSON at column 1")
    folder("binary results", {"results.jsonl": "\x00\xff\xfe\x01\n", "run.json": run_json},
           r"results.jsonl:1: skipped: not text: a NUL byte at column 1")
    deep = json.loads(good_line)
    deep["extra"] = "@@"
    folder("a line nested 1,000,000 deep", {"results.jsonl": json.dumps(deep).replace('"@@"', "[" * 1000000 + "]" * 1000000) + "\n",
                                            "run.json": run_json}, r"results.jsonl:1: skipped: extra: lists or objects nested more than 64 deep")
    folder("one point id four times", {"results.jsonl": (good_line + "\n") * 4, "run.json": run_json},
           r"point '[^']+' appears 4 times, on lines 1, 2, 3, 4; line 4 is used", codes=(0,))
    folder("analyze: one point id four times", {"results.jsonl": (good_line + "\n") * 4, "run.json": run_json},
           r"appears 4 times, on lines 1, 2, 3, 4", codes=(0,), command="analyze")
    no_internals = r"^(?![\s\S]*json\.exception)(?![\s\S]*last read)[\s\S]*"
    # Cut just inside the opening quote of a key: the parser meets the end of the line inside a
    # string ("truncated") wherever the run's own line puts its keys (a fixed column once met a
    # bare word).
    torn = good_line[:re.search(r',\s*"', good_line[140:]).end() + 140 + 2]
    folder("a torn line says what is wrong in words", {"results.jsonl": good_line + "\n" + torn + "\n",
                                                      "run.json": run_json},
           no_internals + r"results.jsonl:2: skipped: not valid JSON at column \d+: truncated", codes=(0,))
    folder("a line with a bare word", {"results.jsonl": good_line + "\n" + '{"id": nope}\n', "run.json": run_json},
           no_internals + r"results.jsonl:2: skipped: not valid JSON at column 9: a bare word", codes=(0,))
    folder("run.json torn", {"results.jsonl": good_lines, "run.json": run_json[:60]},
           no_internals + r"run.json: unreadable, not used: not valid JSON at line \d+, column \d+: truncated", codes=(0,))
    two_points = json.dumps({"schema": "speedlab-results", "schema_version": 1, "points": [json.loads(good_line)] * 2})
    folder("report: results.jsonl cut to fewer points than results.json holds (not rewritten)",
           {"results.jsonl": good_line + "\n" + good_line[:150], "run.json": run_json, "results.json": two_points},
           r"results.jsonl yields 1 points, fewer than the 2 in \S*results.json; results.json and the reports are not "
           r"rewritten", codes=(2,))
    folder("a field of the wrong type", {"results.jsonl": json.dumps(dict(json.loads(good_line), threads="two")) + "\n",
                                         "run.json": run_json}, no_internals + r"results.jsonl:1: skipped: .*'threads' must be")

    # --- profile folders: damaged or missing streams and summaries ---------------------------
    pf = "profile folder"
    cupy = ctx.fixtures / "profile" / "counters" / "cupy"
    facts = (cupy / "profile.json").read_text()
    stream_name = "vm-536.slstream"
    stream = (cupy / stream_name).read_bytes()
    second = stream.index(b"SLP1", 4)  # the chunk after the header

    def flipped(at):
        data = bytearray(stream)
        for k in range(4):
            data[at + k] ^= 0xFF
        return bytes(data)

    def profile(title, stream_files, expect, codes, command="analyze"):
        add(Case(pf, title, [command, "{tmp}"], files=dict({"profile.json": facts}, **stream_files), expect=expect,
                 codes=codes))
    profile("analyze: 4 flipped bytes in a chunk's payload (the rest read)", {stream_name: flipped(second + 40)},
            rf"{stream_name}: corrupt chunk at offset {second}: CRC mismatch", (0,))
    profile("analyze: 4 flipped bytes in the header chunk", {stream_name: flipped(40)},
            rf"{stream_name}: corrupt chunk at offset 0: CRC mismatch[\s\S]*no valid profile stream", (2,))
    profile("analyze: an empty stream", {stream_name: b""}, rf"{stream_name}: empty \(0 bytes\)", (2,))
    profile("report: an empty stream (nothing written)", {stream_name: b""},
            rf"{stream_name}: empty[\s\S]*no report is written", (2,), command="report")
    profile("analyze: a stream of the wrong magic", {stream_name: b"XXXX" + stream[4:]},
            rf"{stream_name}: corrupt chunk header at offset 0 \(wrong magic 'XXXX'", (2,))
    profile("analyze: a folder named like the stream", {stream_name + "/x": ""},
            rf"{stream_name}: not a regular file \(a directory\)", (2,))
    profile("analyze: the stream profile.json names is missing", {},
            rf"{stream_name}: missing: the stream of pid 536", (2,))
    profile("analyze: summary.json damaged, streams gone", {"summary.json": '{"format": "speedlab-profile-summary", '},
            r"summary.json: damaged at byte offset \d+[\s\S]*no valid profile stream", (2,))
    inside = ctx.fixtures / "ranks" / "inside"
    job = {f"rank-{r}/profile.json": (inside / f"rank-{r}" / "profile.json").read_text() for r in (0, 1)}
    job["rank-0/vm-789.slstream"] = (inside / "rank-0" / "vm-789.slstream").read_bytes()
    add(Case(pf, "analyze: a two-rank job without rank 1's stream", ["analyze", "{tmp}"], files=job, codes=(0,),
             expect=r"vm-790.slstream: missing: the stream of rank 1[\s\S]*comparison across ranks is incomplete"))

    # --- output folders, concurrency, signals ------------------------------------------------
    of = "output folder and signals"
    add(Case(of, "run into a folder holding an earlier run", None, run="rerun", expect=r"--force|--resume|already|earlier"))
    add(Case(of, "two runs into one folder at once", None, run="concurrent", expect=r"lock|in use|another"))
    add(Case(of, "SIGINT during a run keeps finished points (exit 130)", None, run="sigint", expect=r".", codes=(130,)))
    add(Case(of, "SIGTERM during a run: the measuring child dies too (exit 143)", None, run="sigterm", expect=r".",
             codes=(143,)))
    # Said in words, never std::filesystem's "filesystem error: ...: Not a directory [...]".
    in_words = r"^(?![\s\S]*(filesystem error|Not a directory))[\s\S]*"
    add(Case(of, "--out is a file", run_ok + ["--out", "{tmp}/file"], files={"file": "x"},
             expect=in_words + r"--out \S*/file: '\S*/file' is a file, not a folder"))
    add(Case(of, "--out under a file", run_ok + ["--out", "{tmp}/file/sub"], files={"file": "x"},
             expect=in_words + r"--out \S*/file/sub: '\S*/file' is a file, not a folder"))
    add(Case(of, "--out where no folder can be made", run_ok + ["--out", "/proc/speedlab-bad-input/out"],
             expect=in_words + r"cannot create the folder '/proc/speedlab-bad-input/out': ", codes=(1, 2)))
    return out


class Context:
    pass


def run_case(ctx, case, workdir):
    for name, content in case.files.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8", "surrogateescape") if content else b"")
    env = dict(os.environ)
    env.pop("SPEEDLAB_PLUGIN_PATH", None)
    env.update(case.env)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    if case.run:
        return special(ctx, case, workdir, env)
    args = [str(ctx.speedlab)] + [a.replace("{tmp}", str(workdir)) for a in case.args]
    start = time.monotonic()
    try:
        p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=case.timeout, env=env, cwd=workdir)
        return p.returncode, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"), time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace"), case.timeout


def special(ctx, case, workdir, env):
    faulty = str(ctx.plugins / "libspeedlab-faulty.so")
    base = [str(ctx.speedlab), "run", "--workload", "faulty", "--plugin-path", faulty, "--out", str(workdir / "out")] + QUICK
    start = time.monotonic()
    if case.run == "rerun":
        subprocess.run(base + ["--variant", "ok", "--param", "n=1000"], capture_output=True, env=env, timeout=60)
        p = subprocess.run(base + ["--variant", "ok", "--param", "n=1000"], capture_output=True, env=env, timeout=60)
        return p.returncode, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"), time.monotonic() - start
    slow = [str(ctx.speedlab), "run", "--workload", "faulty", "--plugin-path", faulty, "--out", str(workdir / "out"),
            "--variant", "slow", "--param", "n=1000..60000:1000", "--max-time", "0.3"] + quick("--max-time")
    if case.run == "concurrent":
        first = subprocess.Popen(slow, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        time.sleep(1.0)
        p = subprocess.run(base + ["--variant", "ok", "--param", "n=1000"], capture_output=True, env=env, timeout=60)
        first.send_signal(signal.SIGKILL)
        first.wait()
        return p.returncode, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"), time.monotonic() - start
    sig = signal.SIGINT if case.run == "sigint" else signal.SIGTERM
    proc = subprocess.Popen(slow, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    time.sleep(2.0)
    proc.send_signal(sig)
    try:
        output, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return None, output.decode(errors="replace"), time.monotonic() - start
    text = output.decode(errors="replace")
    # No process of the run may outlive it (the child measuring the current point included).
    time.sleep(0.3)
    try:
        os.killpg(proc.pid, 0)
        text += "\n[bad_inputs] a process of the run's group is still alive after it exited"
        os.killpg(proc.pid, signal.SIGKILL)
        return 999, text, time.monotonic() - start
    except ProcessLookupError:
        pass
    kept = (workdir / "out" / "results.jsonl")
    if not kept.exists() or not kept.read_text().strip():
        text += "\n[bad_inputs] no finished point kept in results.jsonl"
        return 998, text, time.monotonic() - start
    return proc.returncode, text, time.monotonic() - start


def judge(case, code, output):
    """The reasons a case fails; empty when it passed."""
    problems = []
    if code is None:
        problems.append("hang (killed after the time limit)")
    elif code < 0:
        problems.append(f"ended by signal {signal.Signals(-code).name}")
    elif code == 0 and 0 not in case.codes:
        problems.append("exit 0 (accepted silently)")
    elif code not in case.codes:
        problems.append(f"exit {code}, expected {' or '.join(map(str, case.codes))}")
    if SANITIZER.search(output):
        problems.append("sanitizer report")
    if not re.search(case.expect, output, re.MULTILINE):
        problems.append("message does not name the problem")
    return problems


def message_of(output):
    all_lines = output.splitlines()
    lines = [l for l in all_lines if re.search(r"^speedlab( \w+)?: (error|plugin|warning)|^\[bad_inputs\]|^Error|^--", l)]
    lines = lines or [l for l in all_lines if re.search(r"error|warning|must|unknown|speedlab:", l)]
    text = " / ".join(lines[:3]) if lines else " / ".join(output.strip().splitlines()[:2])
    text = re.sub(r"/tmp/speedlab-bad-inputs-[^/ ]*/[^/ ]*", "<tmp>", text)
    text = text.replace(str(Path.cwd()) + "/", "")
    text = re.sub(r"\(pid \d+\)", "(pid N)", text)  # the table stays the same from run to run
    if len(text) > 220:
        text = text[:217] + "..."
    return text.replace("|", "\\|").replace("`", "'")


def main():
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--speedlab", default=str(root / "build" / "speedlab"))
    ap.add_argument("--plugins", default=None, help="test plugins folder (default: <speedlab's folder>/test-plugins)")
    ap.add_argument("--table", default=None, help="write the Markdown table here")
    ap.add_argument("--only", default=None, help="run only cases whose group or title contains this text")
    ap.add_argument("--strict", action="store_true", help="cases pending another branch count as failures too")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    # Started as a background job of a script, this process ignores SIGINT, and so would every
    # speedlab it starts (an ignored signal stays ignored across exec, and speedlab keeps it so,
    # by design): the signal cases would then test nohup, not SIGINT. A handler of our own is
    # reset to the default in each child at exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    ctx = Context()
    ctx.speedlab = Path(args.speedlab).resolve()
    ctx.plugins = Path(args.plugins).resolve() if args.plugins else ctx.speedlab.parent / "test-plugins"
    ctx.fixtures = root / "tests" / "fixtures"
    if not ctx.speedlab.is_file() or not (ctx.plugins / "libspeedlab-faulty.so").is_file():
        sys.exit(f"bad_inputs: need {ctx.speedlab} and {ctx.plugins}/libspeedlab-faulty.so (build speedlab and the tests)")
    scratch = Path(tempfile.mkdtemp(prefix="speedlab-bad-inputs-"))
    try:
        ctx.good_run = scratch / "good-run"
        subprocess.run([str(ctx.speedlab), "run", "--workload", "faulty", "--variant", "ok", "--param", "n=1000",
                        "--plugin-path", str(ctx.plugins / "libspeedlab-faulty.so"), "--out", str(ctx.good_run)] + QUICK,
                       capture_output=True, check=True, env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
        all_cases = [c for c in cases(ctx) if not args.only or args.only in c.group or args.only in c.title]
        rows, failed, pending_failed = [], 0, 0
        from concurrent.futures import ThreadPoolExecutor

        def one(index_case):
            i, case = index_case
            workdir = scratch / f"case-{i}"
            workdir.mkdir()
            code, output, seconds = run_case(ctx, case, workdir)
            return i, case, code, output, seconds

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = sorted(pool.map(one, enumerate(all_cases, 1)), key=lambda r: r[0])
        for i, case, code, output, seconds in results:
            problems = judge(case, code, output)
            if problems and case.pending and not args.strict:
                pending_failed += 1
                verdict = f"FAIL, pending the {case.pending} branch: " + "; ".join(problems)
            elif problems:
                failed += 1
                verdict = "FAIL: " + "; ".join(problems)
            else:
                verdict = "ok"
            rows.append((i, case, code, message_of(output), verdict, seconds))
            if problems:
                print(f"[{i}] {case.group}: {case.title}: {verdict}\n    {message_of(output)}", file=sys.stderr)
        print(f"bad_inputs: {len(rows)} cases, {len(rows) - failed - pending_failed} ok, {failed} failed, "
              f"{pending_failed} failed pending another branch", file=sys.stderr)
        if args.table:
            write_table(Path(args.table), rows, ctx, failed, pending_failed)
        return 1 if failed else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def write_table(path, rows, ctx, failed, pending_failed):
    lines = ["# Bad inputs: what speedlab says", "",
             "Generated by `scripts/bad_inputs.py --table docs/bad-inputs.md` (do not edit by hand). Each case runs the",
             "built `speedlab` with a lying input and checks: a non-zero exit (or the documented code), never a signal,",
             "an end within the time limit, a message naming the problem, and no sanitizer report. CI runs the script",
             "(scripts/test.sh) against the release build and the ASan+UBSan build.", "",
             f"{len(rows)} cases: {len(rows) - failed - pending_failed} ok, {failed} failed"
             + (f", {pending_failed} failing pending another branch." if pending_failed else "."), "",
             "| # | group | input | exit | message (first lines) | verdict |", "|---|---|---|---|---|---|"]
    for i, case, code, message, verdict, _ in rows:
        title = case.title.replace("|", "\\|")
        shown = "timeout" if code is None else (f"signal {-code}" if code < 0 else str(code))
        lines.append(f"| {i} | {case.group} | {title} | {shown} | {message} | {verdict} |")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
