#!/usr/bin/env python3
"""The frame offsets committed in profilers/python/python_interpreter.cpp, re-derived.

  python_offsets_test.py --probe libspeedlab_frames_probe.so --pyenv ~/.pyenv/versions

For each CPython 3.10 to 3.13 under --pyenv whose headers include the internal ones, compiles
python_offsets.c against them and compares its offsetof() figures with the committed table
(read from the probe library). Exit 77 (skipped) with the reason when no such headers exist.
"""
import argparse
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--probe", required=True)
    p.add_argument("--pyenv", required=True)
    args = p.parse_args()
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("SKIP: no C compiler")
        return 77
    lib = ctypes.CDLL(args.probe)
    lib.probe_layout.restype = ctypes.c_char_p
    checked, failed = [], []
    for minor in (10, 11, 12, 13):
        found = sorted(glob.glob(os.path.join(args.pyenv, f"3.{minor}.*", "include", f"python3.{minor}")))
        found = [d for d in found if os.path.isdir(os.path.join(d, "internal")) and not d.endswith("t")]
        if not found:
            print(f"3.{minor}: no headers with internal/ under {args.pyenv}: not checked")
            continue
        include = found[-1]
        with tempfile.TemporaryDirectory() as tmp:
            exe = os.path.join(tmp, "offsets")
            build = subprocess.run([cc, "-I", include, os.path.join(HERE, "python_offsets.c"), "-o", exe],
                                   capture_output=True, text=True)
            if build.returncode != 0:
                failed.append(f"3.{minor}: python_offsets.c does not compile against {include}:\n{build.stderr}")
                continue
            derived = json.loads(subprocess.run([exe], capture_output=True, text=True, check=True).stdout)
        committed = json.loads(lib.probe_layout(minor) or b"{}")
        if derived != committed:
            failed.append(f"3.{minor} ({include}): headers say {derived}, the table says {committed}")
        else:
            checked.append(f"3.{minor} ({include})")
    for c in checked:
        print("offsets agree:", c)
    for f in failed:
        print("FAIL:", f)
    if failed:
        return 1
    if not checked:
        print(f"SKIP: no CPython 3.10-3.13 headers with internal/ under {args.pyenv}")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
