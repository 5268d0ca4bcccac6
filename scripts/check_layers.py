#!/usr/bin/env python3
"""Fails when a folder includes from a layer above it, when the root CMakeLists adds the
layers out of order, or when a folder of app/ includes from one of app/'s folders that its
row of APP_ALLOWED does not name (which also keeps app/'s folders free of include cycles).
The layers, bottom-up (docs/ARCHITECTURE.md):

  sdk  ->  model  ->  profilers, device  ->  analysis  ->  reports  ->  app
  plugins see only the SDK; tests and tools see everything.

  app/, bottom-up:  process -> plugins -> suite -> run -> profile -> python -> compare,
                    new_project -> cli

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

# app/'s folders and the app/ folders each may include from (itself included). A new folder
# of app/ gets its row here; a folder without one is a violation.
APP_ALLOWED = {
    "process": {"process"},            # child processes, stop signals, exit codes
    "plugins": {"plugins", "process"},  # loader, probe
    "suite": {"suite", "plugins", "process"},  # suite file, overrides, plan, stopping criteria
    "run": {"run", "suite", "plugins", "process"},  # measuring, output folder, run_side
    "profile": {"profile", "run", "suite", "plugins", "process"},
    "python": {"python", "profile", "run", "suite", "plugins", "process"},
    "compare": {"compare", "python", "run", "suite", "plugins", "process"},
    "new_project": {"new_project", "suite", "plugins", "process"},
    "cli": {"cli", "compare", "new_project", "python", "profile", "run", "suite", "plugins", "process"},
}

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


def includes(root: pathlib.Path, base: pathlib.Path):
    """(file, line number, bracket, path) of every include under base."""
    for f in sorted(base.rglob("*")):
        if f.suffix not in SOURCES or not f.is_file():
            continue
        for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m:
                yield f.relative_to(root), number, m.group(1), m.group(2)


def cycle_in(graph: dict):
    """One cycle of folder names in graph (name -> set of names), or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if nxt == node:
                continue
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def check_app(root: pathlib.Path, problems: list):
    app = root / "app"
    if not app.is_dir():
        return
    used = {}
    for folder in sorted(p.name for p in app.iterdir() if p.is_dir()):
        allowed = APP_ALLOWED.get(folder)
        if allowed is None:
            problems.append(f"app/{folder}/: a folder of app/ with no row in APP_ALLOWED (scripts/check_layers.py)")
            continue
        for rel, number, bracket, path in includes(root, app / folder):
            parts = path.split("/")
            if bracket != '"' or len(parts) < 3 or parts[0] != "app":
                continue
            target = parts[1]
            used.setdefault(folder, set()).add(target)
            if target not in allowed:
                problems.append(f"{rel}:{number}: app/{folder}/ includes {path} from app/{target}/, "
                                f"which its row of APP_ALLOWED does not name")
    for name, graph in (("APP_ALLOWED", APP_ALLOWED), ("the includes", used)):
        cycle = cycle_in(graph)
        if cycle:
            problems.append(f"app/: {name} has an include cycle: " + " -> ".join(cycle))


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    problems = []
    for layer, allowed in ALLOWED.items():
        base = root / layer
        if not base.is_dir():
            problems.append(f"{layer}/: missing layer folder")
            continue
        for rel, number, bracket, path in includes(root, base):
            target = layer_of_include(path, bracket)
            if target and target not in allowed:
                problems.append(f"{rel}:{number}: {layer}/ includes {path} from {target}/, a layer above it")
    check_app(root, problems)
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
