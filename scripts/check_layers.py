#!/usr/bin/env python3
"""Fails when a folder includes from a layer above it, or when the root CMakeLists adds
the layers out of order. The layers, bottom-up (docs/ARCHITECTURE.md):

  sdk  ->  model  ->  profilers, device  ->  analysis  ->  reports  ->  app
  plugins see only the SDK; tests and tools see everything.

Usage: scripts/check_layers.py [REPO_ROOT]   (exit 0: clean, 1: violations, printed)
"""
import pathlib
import re
import sys

# Each folder and the folders its code may include from (itself included).
ALLOWED = {
    "sdk": {"sdk"},
    "model": {"model", "sdk"},
    "profilers": {"profilers", "model", "sdk"},
    "device": {"device", "model", "sdk"},
    "analysis": {"analysis", "model", "sdk"},
    "reports": {"reports", "analysis", "model", "sdk"},
    "app": {"app", "reports", "analysis", "device", "profilers", "model", "sdk"},
    "plugins": {"plugins", "sdk"},
}
ORDER = ["sdk", "model", "profilers", "device", "analysis", "reports", "app", "plugins"]
SOURCES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".in"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of_include(path: str, bracket: str):
    first = path.split("/", 1)[0]
    if bracket == "<":
        # <speedlab/plugin.hpp> is the SDK; <speedlab/config.hpp> is generated for everyone.
        if path.startswith("speedlab/") and path != "speedlab/config.hpp":
            return "sdk"
        return None
    if "/" in path and first in ALLOWED:
        return first
    return None  # a file beside the includer, or a folder-local include path


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    problems = []
    for layer, allowed in ALLOWED.items():
        base = root / layer
        if not base.is_dir():
            problems.append(f"{layer}/: missing layer folder")
            continue
        for f in sorted(base.rglob("*")):
            if f.suffix not in SOURCES or not f.is_file():
                continue
            for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = layer_of_include(m.group(2), m.group(1))
                if target and target not in allowed:
                    rel = f.relative_to(root)
                    problems.append(f"{rel}:{number}: {layer}/ includes {m.group(2)} from {target}/, a layer above it")
    cmake = (root / "CMakeLists.txt").read_text()
    added = [m.group(1) for m in re.finditer(r"add_subdirectory\((\w+)\)", cmake) if m.group(1) in ORDER]
    if added != ORDER:
        problems.append(f"CMakeLists.txt: layers added as {added}, expected bottom-up {ORDER}")
    for p in problems:
        print(p)
    print(f"layer check: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
