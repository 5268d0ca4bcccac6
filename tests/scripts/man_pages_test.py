#!/usr/bin/env python3
"""The manual pages the build writes (speedlab help-man --out, cmake/SpeedlabPackage.cmake):
one for the program and one per command that `speedlab --help` lists, none more; each renders
with `man -l` without a warning and shows every option its command's --help shows, as ASCII
text a reader can paste, and its exit statuses (CTest: man_pages).

  tests/scripts/man_pages_test.py SPEEDLAB PAGES_DIR

Exit status: 0 all good, 1 a problem (printed), 77 when man is not installed (the test set of
scripts/install-deps.sh installs man-db).
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def commands(speedlab):
    """The commands `speedlab --help` lists (the "Commands:" section)."""
    text = subprocess.run([speedlab, "--help"], capture_output=True, text=True, check=True).stdout
    section = text.split("Commands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  (\S+)", section, re.M)]


def help_options(speedlab, command):
    """Every option name in `speedlab COMMAND --help` (its option lines, not the prose)."""
    text = subprocess.run([speedlab, command, "--help"], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in text.splitlines():
        head = line.strip().split("  ", 1)[0]  # "-o,--out DIR" before the description
        if head.startswith("-"):
            names.update(OPTION.findall(head.replace(",", " ")))
    return names


def render(page):
    env = dict(os.environ, MANWIDTH="100", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
    r = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", str(page)], capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


def main():
    speedlab, pages_dir = sys.argv[1], Path(sys.argv[2])
    if not shutil.which("man"):
        print("SKIP: man is not installed (scripts/install-deps.sh test installs man-db)")
        return 77
    problems = []
    names = commands(speedlab)
    if "run" not in names or "help-man" in names:
        problems.append(f"speedlab --help lists {names}")
    found = {p.name.split(".1")[0]: p for p in pages_dir.glob("*.1*")}
    expected = ["speedlab"] + [f"speedlab-{c}" for c in names]
    if sorted(found) != sorted(expected):
        problems.append(f"{pages_dir}: pages {sorted(found)}, expected {sorted(expected)}")
    for page_name in expected:
        page = found.get(page_name)
        if not page:
            continue
        raw = gzip.decompress(page.read_bytes()).decode() if page.suffix == ".gz" else page.read_text()
        code, text, err = render(page)
        if code != 0 or err.strip():
            problems.append(f"{page.name}: man -l exit {code}, warnings: {err.strip()}")
        text = re.sub(r".\x08", "", text)  # overstrikes, if any
        if "\u2212" in text or "\u2010" in text:
            problems.append(f"{page.name}: options render with a Unicode minus or hyphen, not ASCII '-'")
        command = page_name[len("speedlab-"):] if page_name != "speedlab" else None
        wanted = help_options(speedlab, command) if command else {"--help", "--version", "--quiet", "-q", "-V"}
        missing = sorted(n for n in wanted if not re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", text))
        if missing:
            problems.append(f"{page.name}: options of --help missing from the page: {missing}")
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"):
            if not re.search(rf"^{section}$", text, re.M):
                problems.append(f"{page.name}: no {section} section")
        if "do not edit" not in raw:
            problems.append(f"{page.name}: not a generated page")
        print(f"{page.name}: {len(wanted)} options, {len(text.splitlines())} lines")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
