#!/usr/bin/env python3
"""Renders the reports of every fixture folder under tests/fixtures with `speedlab report`
and compares them byte for byte with tests/golden/fixtures/<folder, its slashes as dots>/
(flat: a job's folder holds its ranks' folders, each a fixture too): a change that moves
any report of any recorded run, profile or job shows here, not on the GPU machine later.

A fixture folder is one `speedlab report` reads: a run's (results.jsonl), a profile's
(profile.json) or a job's (rank folders that each hold a profile.json). Each is copied to a
temporary folder first (report writes into the folder it reads); where a report names that
folder, the name is replaced by FIXTURE_DIR before the comparison.

Usage: scripts/fixture_reports.py SPEEDLAB REPO_ROOT [--update]
  exit 0: every report matches; 1: a report differs, is missing or is new (named);
  2: usage, or `speedlab report` failed on a folder (its message shown).
--update rewrites the golden files from this build (review the diff before committing).
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

# What every report states, in its smallest forms: JSON (every figure and finding), Markdown
# and CSV. The HTML report shows the same figures (its own golden tests cover its layout);
# perfetto and nsys-sqlite are large trace and binary files.
FORMATS = "markdown,json,csv"


def fixture_folders(fixtures: pathlib.Path):
    found = []
    for d in sorted(p for p in fixtures.rglob("*") if p.is_dir()):
        if (d / "results.jsonl").is_file() or (d / "profile.json").is_file():
            found.append(d)
        elif any((s / "profile.json").is_file() for s in d.iterdir() if s.is_dir()):
            found.append(d)  # a job: its rank folders' profiles merged
    return found


def render(speedlab: str, folder: pathlib.Path, scratch: pathlib.Path):
    """The files `speedlab report` writes for a copy of folder, by name relative to it."""
    work = scratch / "in"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(folder, work)
    before = {p for p in work.rglob("*") if p.is_file()}
    r = subprocess.run([speedlab, "report", str(work), "--format", FORMATS], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"speedlab report {folder} exited {r.returncode}: {r.stderr.strip()}")
    written = {}
    for p in sorted(work.rglob("*")):
        if p.is_file() and p.name != ".speedlab.lock" and (p not in before or p.name in REPORT_NAMES):
            data = p.read_bytes()
            # The folder as each format writes it: Markdown escapes "_" ("\\_"); a random name may
            # hold one.
            for name in (str(work.resolve()), str(work)):
                for form in (name, name.replace("_", "\\_")):
                    data = data.replace(form.encode(), b"FIXTURE_DIR")
            written[p.relative_to(work).as_posix()] = data
    return written


# A fixture may ship reports of its own; they are rewritten, so they count as written.
REPORT_NAMES = {"report.md", "report-full.md", "results.json", "results.csv"}


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--update"]
    update = "--update" in sys.argv[1:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    speedlab, root = args[0], pathlib.Path(args[1])
    fixtures, golden = root / "tests" / "fixtures", root / "tests" / "golden" / "fixtures"
    problems, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="speedlab-fixture-reports-") as tmp:
        scratch = pathlib.Path(tmp)
        for folder in fixture_folders(fixtures):
            rel = folder.relative_to(fixtures).as_posix()
            try:
                written = render(speedlab, folder, scratch)
            except RuntimeError as e:
                print(f"fixture_reports: {e}", file=sys.stderr)
                return 2
            want_dir = golden / rel.replace("/", ".")
            if update:
                if want_dir.exists():
                    shutil.rmtree(want_dir)
                for name, data in written.items():
                    (want_dir / name).parent.mkdir(parents=True, exist_ok=True)
                    (want_dir / name).write_bytes(data)
                checked += len(written)
                continue
            expected = {p.relative_to(want_dir).as_posix() for p in want_dir.rglob("*") if p.is_file()} if want_dir.is_dir() else set()
            for name in sorted(expected - written.keys()):
                problems.append(f"{rel}/{name}: golden file no longer written")
            for name, data in written.items():
                checked += 1
                if name not in expected:
                    problems.append(f"{rel}/{name}: new report, no golden file (--update writes it)")
                elif (want_dir / name).read_bytes() != data:
                    keep = pathlib.Path(tempfile.gettempdir()) / "speedlab-fixture-reports-actual" / rel / name
                    keep.parent.mkdir(parents=True, exist_ok=True)
                    keep.write_bytes(data)
                    problems.append(f"{rel}/{name}: differs from its golden file (this build's: {keep})")
    for p in problems:
        print(p)
    verb = "written" if update else "compared"
    print(f"fixture_reports: {checked} report files {verb}, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
