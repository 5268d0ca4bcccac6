#!/usr/bin/env python3
"""The longest functions and the largest files of the tree, in lines: a rough measure for
refactoring (issue 19), by brace counting, not a C++ parser.

A function is a brace block opened at namespace or class scope after a closing `)` (and
qualifiers such as const, noexcept, override, a trailing return type); its length runs
from the first line of its signature to its closing brace. Lambdas and blocks inside a
function count as part of it; a test case (TEST_CASE(...) { }) counts as a function.
Comments, string literals (raw ones included) and preprocessor lines are ignored.

  scripts/code_size.py [REPO_ROOT] [--top N] [--no-tests]
  scripts/code_size.py [REPO_ROOT] --max-function-lines 80 --layers model,device,... [--allow FILE]

Files: the git-tracked *.cpp, *.hpp, *.h, *.cu, *.cuh of REPO_ROOT (nothing generated or
built); --no-tests leaves tests/ and fuzz/ out. Standard library only.

Check mode (--max-function-lines, CI: scripts/test.sh and the CTest test code_size_check):
exits 1 naming each function longer than the limit in the folders of --layers, except those
in the allow file (default scripts/code_size_allow.txt: one `path:function` per line, with
the reason after a `#`; a function named there that is no longer too long is reported, so
the file only ever shrinks). Exit 2 for an unreadable allow file.
"""
import argparse
import pathlib
import re
import subprocess
import sys

SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh"}
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b")
AFTER_PARAMETERS = re.compile(r"^(\s|const\b|noexcept\b|override\b|final\b|mutable\b|volatile\b|&)*"
                              r"(->[^{};]*)?\s*(try)?\s*$")


def strip_code(text: str) -> str:
    """Blanks comments, literals and preprocessor lines, keeping every newline in place."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', text[i:i + 40]) if c in "uULR" else None
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        if c == "\n":
            line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def function_name(header: str) -> str:
    """The name before the parameter list of a function header: `ns::cls::name`, `operator==`."""
    depth = 0
    for k, c in enumerate(header):  # a constructor's member initializers are not its name
        depth += c == "("
        depth -= c == ")"
        if (c == ":" and depth == 0 and k > 0 and header[k - 1] == ")" or
                c == ":" and depth == 0 and header[:k].rstrip().endswith(")") and header[k + 1:k + 2] != ":"):
            header = header[:k]
            break
    close = header.rfind(")")
    depth = 0
    for k in range(close, -1, -1):
        if header[k] == ")":
            depth += 1
        elif header[k] == "(":
            depth -= 1
            if depth == 0:
                before = header[:k].rstrip()
                match = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)*~?(?:operator\s*\S+?|[A-Za-z_]\w*))$", before)
                return re.sub(r"\s+", "", match.group(1)) if match else "?"
    return "?"


def named_functions(text: str):
    """(name, first line, last line) of each function in the file, 1-based."""
    code = strip_code(text)
    lines = code.split("\n")
    out = []
    for first, last in functions(text):
        header = "\n".join(lines[first - 1:first + 9])
        brace = header.find("{")
        out.append((function_name(header[:brace] if brace >= 0 else header), first, last))
    return out


def functions(text: str):
    """(first line, last line) of each function in the file, 1-based."""
    code = strip_code(text)
    found = []
    stack = []  # 'scope', 'function' or 'block', with the function's first line
    header_start = 0  # where the text before the next brace began
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == ";" and not any(kind == "function" for kind, _ in stack):
            header_start = i + 1
        elif c == "{":
            if any(kind == "function" for kind, _ in stack):
                stack.append(("block", 0))
            else:
                header = code[header_start:i]
                close = header.rfind(")")
                if close >= 0 and AFTER_PARAMETERS.match(header[close + 1:]):
                    lead = len(header) - len(header.lstrip())
                    first = line - header.count("\n", lead)
                    stack.append(("function", first))
                elif SCOPE.search(header):
                    stack.append(("scope", 0))
                else:
                    stack.append(("block", 0))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, first = stack.pop()
                if kind == "function":
                    found.append((first, line))
            if not any(kind == "function" for kind, _ in stack):
                header_start = i + 1
    return found


def project_files(root: pathlib.Path, with_tests: bool):
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True).stdout
    for name in listed.splitlines():
        path = pathlib.Path(name)
        if path.suffix not in SUFFIXES:
            continue
        if not with_tests and path.parts[0] in ("tests", "fuzz"):
            continue
        if (root / path).is_file():
            yield path


def read_allow(path: pathlib.Path):
    """The allowed `path:function` keys of an allow file (comments after #, blank lines skipped)."""
    allowed = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        key, _, why = line.partition("#")
        key = key.strip()
        if not key:
            continue
        if ":" not in key or not why.strip():
            raise ValueError(f"{path}:{number}: expected `path:function  # reason (owner)`, found {line.strip()!r}")
        allowed[key] = number
    return allowed


def check(root: pathlib.Path, limit: int, layers, allow_file: pathlib.Path) -> int:
    try:
        allowed = read_allow(allow_file) if allow_file.exists() else {}
    except (OSError, ValueError) as e:
        print(f"code_size: {e}", file=sys.stderr)
        return 2
    too_long, seen = [], set()
    for path in project_files(root, False):
        if path.parts[0] not in layers:
            continue
        for name, first, last in named_functions((root / path).read_text(errors="replace")):
            lines = last - first + 1
            if lines <= limit:
                continue
            key = f"{path.as_posix()}:{name}"
            seen.add(key)
            if key not in allowed:
                too_long.append(f"{path}:{first}: {name} is {lines} lines (at most {limit})")
    stale = [f"{allow_file.name}:{n}: {key} is no longer above {limit} lines: remove it from the allow file"
             for key, n in allowed.items() if key not in seen]
    for message in too_long + stale:
        print(f"code_size: {message}")
    if too_long or stale:
        return 1
    print(f"code_size: no function above {limit} lines in {', '.join(sorted(layers))} "
          f"({len(allowed)} allowed in {allow_file.name})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=str(pathlib.Path(__file__).resolve().parents[1]))
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--no-tests", action="store_true")
    parser.add_argument("--max-function-lines", type=int, help="check mode: fail on longer functions")
    parser.add_argument("--layers", default="model,device,analysis,reports,app,profilers",
                        help="check mode: the top-level folders checked (comma separated)")
    parser.add_argument("--allow", help="check mode: the allow file (default: scripts/code_size_allow.txt of ROOT)")
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    if args.max_function_lines is not None:
        allow = pathlib.Path(args.allow) if args.allow else root / "scripts" / "code_size_allow.txt"
        return check(root, args.max_function_lines, set(args.layers.split(",")), allow)
    sizes, lengths = [], []
    for path in project_files(root, not args.no_tests):
        text = (root / path).read_text(errors="replace")
        sizes.append((text.count("\n"), str(path)))
        for first, last in functions(text):
            lengths.append((last - first + 1, f"{path}:{first}"))
    sizes.sort(key=lambda s: (-s[0], s[1]))
    lengths.sort(key=lambda s: (-s[0], s[1]))
    print(f"{len(sizes)} files, {len(lengths)} functions")
    print("longest functions (lines):")
    for count, where in lengths[:args.top]:
        print(f"  {count:5d}  {where}")
    print("largest files (lines):")
    for count, where in sizes[:args.top]:
        print(f"  {count:5d}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
