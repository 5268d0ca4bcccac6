#!/usr/bin/env python3
"""scripts/check_layers.py on tiny trees made here (CTest: layer_check_selftest): a layer
reaching up, a folder of app/ reaching outside its row, an app/ folder with no row, and an
include cycle between app/'s folders each fail, naming the file and line; a clean tree passes.

  tests/scripts/check_layers_test.py [REPO_ROOT]
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
SCRIPT = ROOT / "scripts" / "check_layers.py"
LAYERS = ["sdk", "model", "profilers", "device", "analysis", "reports", "app", "plugins"]


class check_layers(unittest.TestCase):
    def tree(self, files: dict) -> pathlib.Path:
        d = pathlib.Path(self.enterContext(tempfile.TemporaryDirectory()))
        for layer in LAYERS:
            (d / layer).mkdir()
        (d / "CMakeLists.txt").write_text("".join(f"add_subdirectory({l})\n" for l in LAYERS))
        for name, text in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text)
        return d

    def check(self, root: pathlib.Path):
        r = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def test_a_clean_tree_passes(self):
        code, out = self.check(self.tree({
            "model/m.hpp": "#include <speedlab/plugin.hpp>\n",
            "app/run/r.cpp": '#include "app/suite/s.hpp"\n#include "model/m.hpp"\n',
            "app/compare/c.cpp": '#include "app/run/r.hpp"\n',
            "app/cli/main.cpp": '#include "app/compare/c.hpp"\n#include "app/run/r.hpp"\n'}))
        self.assertEqual(code, 0, out)
        self.assertIn("layer check: 0 violation(s)", out)

    def test_a_layer_reaching_up_fails(self):
        code, out = self.check(self.tree({"model/m.cpp": '\n#include "analysis/a.hpp"\n'}))
        self.assertEqual(code, 1, out)
        self.assertIn("model/m.cpp:2: model/ includes analysis/a.hpp from analysis/, a layer above it", out)

    def test_an_app_folder_reaching_outside_its_row_fails(self):
        code, out = self.check(self.tree({"app/run/commands.cpp": '#include "app/profile/profile_report.hpp"\n'}))
        self.assertEqual(code, 1, out)
        self.assertIn("app/run/commands.cpp:1: app/run/ includes app/profile/profile_report.hpp from app/profile/", out)

    def test_compare_may_not_reach_cli(self):
        code, out = self.check(self.tree({"app/compare/c.cpp": '#include "app/cli/commands.hpp"\n'}))
        self.assertEqual(code, 1, out)
        self.assertIn("app/compare/ includes app/cli/commands.hpp", out)

    def test_an_app_folder_without_a_row_fails(self):
        code, out = self.check(self.tree({"app/shiny/s.cpp": "int x;\n"}))
        self.assertEqual(code, 1, out)
        self.assertIn("app/shiny/: a folder of app/ with no row in APP_ALLOWED", out)

    def test_an_include_cycle_between_app_folders_is_named(self):
        code, out = self.check(self.tree({"app/run/r.cpp": '#include "app/profile/p.hpp"\n',
                                          "app/profile/p.cpp": '#include "app/run/r.hpp"\n'}))
        self.assertEqual(code, 1, out)
        self.assertIn("app/: the includes has an include cycle: profile -> run -> profile", out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
