#!/usr/bin/env python3
"""The check mode of scripts/code_size.py on tiny git trees made here (CTest: code_size_selftest).

  tests/scripts/code_size_test.py [REPO_ROOT]
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
SCRIPT = ROOT / "scripts" / "code_size.py"


def function(name: str, body_lines: int, head: str = "") -> str:
    """A C++ function of body_lines + 3 lines: `int name(int x) {`, the body, `return x;`, `}`."""
    body = "".join(f"  x += {i};\n" for i in range(body_lines))
    return f"int {name}(int x){head} {{\n{body}  return x;\n}}\n"


class code_size_check(unittest.TestCase):
    def tree(self, files: dict) -> pathlib.Path:
        d = pathlib.Path(self.enterContext(tempfile.TemporaryDirectory()))
        for name, text in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text)
        subprocess.run(["git", "init", "-q", str(d)], check=True)
        subprocess.run(["git", "-C", str(d), "add", "-A"], check=True)
        return d

    def check(self, root: pathlib.Path, *extra: str):
        r = subprocess.run([sys.executable, str(SCRIPT), str(root), "--max-function-lines", "80",
                            "--layers", "model,app", *extra], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def test_a_long_function_fails_naming_it(self):
        root = self.tree({"model/a.cpp": function("short_one", 10) + function("long_one", 80)})
        code, out = self.check(root)
        self.assertEqual(code, 1, out)
        self.assertIn("model/a.cpp:14: long_one is 83 lines (at most 80)", out)
        self.assertNotIn("short_one", out)

    def test_eighty_lines_pass(self):
        code, out = self.check(self.tree({"app/a.cpp": function("exactly", 77)}))
        self.assertEqual(code, 0, out)

    def test_other_folders_are_not_checked(self):
        code, out = self.check(self.tree({"tests/t.cpp": function("long_test", 200),
                                          "reports/r.cpp": function("long_report", 200)}))
        self.assertEqual(code, 0, out)

    def test_a_constructor_is_named_by_its_class_not_its_initializers(self):
        text = "struct s { s(int); int m; };\n" + "s::s(int x) : m(x) {\n" + "  m += 1;\n" * 90 + "}\n"
        code, out = self.check(self.tree({"model/c.cpp": text}))
        self.assertEqual(code, 1, out)
        self.assertIn("s::s is 92 lines", out)

    def test_the_allow_file_lets_a_named_function_pass(self):
        root = self.tree({"model/a.cpp": function("long_one", 100),
                          "scripts/code_size_allow.txt": "# why\nmodel/a.cpp:long_one  # being split (someone)\n"})
        code, out = self.check(root)
        self.assertEqual(code, 0, out)
        self.assertIn("1 allowed", out)

    def test_an_allowed_function_that_got_short_fails_until_removed(self):
        root = self.tree({"model/a.cpp": function("long_one", 10),
                          "scripts/code_size_allow.txt": "model/a.cpp:long_one  # being split (someone)\n"})
        code, out = self.check(root)
        self.assertEqual(code, 1, out)
        self.assertIn("model/a.cpp:long_one is no longer above 80 lines", out)

    def test_an_allow_line_without_a_reason_is_refused(self):
        root = self.tree({"model/a.cpp": function("long_one", 100),
                          "scripts/code_size_allow.txt": "model/a.cpp:long_one\n"})
        code, out = self.check(root)
        self.assertEqual(code, 2, out)
        self.assertIn("code_size_allow.txt:1: expected `path:function  # reason (owner)`", out)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=1)
