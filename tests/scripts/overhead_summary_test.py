#!/usr/bin/env python3
"""scripts/bench/overhead_summary.py (CTest: overhead_summary_selftest). MODE=pooled on runs
made up here: rounds stay paired within their run, the sign count and the verdict follow the
data. MODE=light on the recorded runs of tests/fixtures/bench/light-steady: the figures that
docs/results/light-capture.md quotes, one run and two pooled, and the placement table.

  tests/scripts/overhead_summary_test.py [REPO_ROOT]
"""
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
SCRIPT = ROOT / "scripts" / "bench" / "overhead_summary.py"


def run_file(d: pathlib.Path, name: str, rounds: int, drift: float, speedlab_minus_nsys: float, seed: int,
             machine: float = 3.0) -> str:
    """A run's results.jsonl: each round's machine drifts (shared by its tools); speedlab is
    nsys + speedlab_minus_nsys, give or take a little."""
    rng = random.Random(seed)
    lines = []
    for r in range(1, rounds + 1):
        base = machine + drift * rng.random()
        nsys = base + 1.0
        for tool, v in (("plain", base), ("nsys", nsys), ("speedlab", nsys + speedlab_minus_nsys + 0.01 * rng.random())):
            lines.append({"workload": "storm", "tool": tool, "round": r, "proc": 0, "value": v, "call_us": None,
                          "unit": "plain_us_per_launch", "exit": 0})
    path = d / f"{name}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def pooled(*paths: str) -> list:
    out = subprocess.run([sys.executable, str(SCRIPT), *paths], env={**os.environ, "MODE": "pooled"},
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.startswith("| storm |")]


class pooled_mode(unittest.TestCase):
    def setUp(self):
        self.dir = pathlib.Path(self.enterContext(tempfile.TemporaryDirectory()))

    def test_below_in_every_round(self):
        # Rounds drift by 2 us, far more than the 0.2 us between the tools: paired within
        # the round, the difference still shows in every round and pooled.
        a = run_file(self.dir, "a", 10, 2.0, -0.2, 1)
        b = run_file(self.dir, "b", 12, 2.0, -0.2, 2)
        rows = pooled(a, b)
        diff = [r for r in rows if "below nsys" in r or "not told apart" in r or "above nsys" in r]
        self.assertEqual(len(diff), 3, rows)  # a, b, pooled
        pooled_row = [r for r in diff if "**pooled**" in r][0]
        cells = [c.strip() for c in pooled_row.split("|")]
        self.assertEqual(cells[4], "22")  # rounds of both runs
        self.assertEqual(cells[6], "22")  # every round below
        self.assertTrue(cells[5].startswith("-0.2"), cells[5])
        self.assertIn("below nsys", pooled_row)
        self.assertLess(float(cells[7]), 0.001)  # sign test: 22 of 22

    def test_rounds_are_not_paired_across_runs(self):
        # The same round numbers in two runs on machines 10 us apart: pairing across runs
        # would make speedlab look 10 us dearer or cheaper; within each run it is +0.3.
        a = run_file(self.dir, "a", 8, 0.0, +0.3, 3)
        far = run_file(self.dir, "far", 8, 0.0, +0.3, 4, machine=13.0)
        pooled_row = [r for r in pooled(a, far) if "**pooled**" in r and "per launch |" in r][0]
        cells = [c.strip() for c in pooled_row.split("|")]
        self.assertEqual(cells[4], "16")  # each run's 8 rounds, not 8 rounds of both
        self.assertTrue(cells[5].startswith("+0.3"), cells[5])
        self.assertEqual(cells[6], "0")
        self.assertIn("above nsys", pooled_row)

    def test_no_difference_is_not_a_verdict(self):
        rng = random.Random(5)
        a = run_file(self.dir, "a", 16, 1.0, 0.0, 6)
        lines = [json.loads(l) for l in pathlib.Path(a).read_text().splitlines()]
        for x in lines:  # speedlab +-0.5 around nsys, either way
            if x["tool"] == "speedlab":
                x["value"] += rng.uniform(-0.5, 0.5)
        pathlib.Path(a).write_text("".join(json.dumps(x) + "\n" for x in lines))
        row = [r for r in pooled(a) if "| a |" in r][0]
        self.assertIn("not told apart from nsys", row)


RECORDED = ROOT / "tests" / "fixtures" / "bench" / "light-steady"


def light(*paths, loop_figure="us_per_step") -> str:
    env = {**os.environ, "MODE": "light", "LOOP_FIGURE": loop_figure}
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, paths)], env=env, capture_output=True, text=True,
                          check=True).stdout


def difference_line(out: str, head: str, pair: str) -> str:
    """The line of `pair` (e.g. "speedlab - sl-floor") under the heading that starts with head."""
    block = out.split(f"\n{head}", 1)[1]
    return [line for line in block.splitlines() if line.startswith(f"- {pair}:")][0]


class light_mode_recorded(unittest.TestCase):
    """The steady-state figures of docs/results/light-capture.md, from the runs' own files."""

    def test_one_storm_run(self):
        line = difference_line(light(RECORDED / "storm-2.jsonl"), "storm, paired", "speedlab - sl-floor")
        self.assertIn("+0.30 [-0.11, +0.69] us per launch; upper end +0.69", line)
        self.assertIn("not told apart from sl-floor, 39 rounds", line)

    def test_upper_end_is_the_intervals_own(self):
        # One bootstrap for the figure and its upper end: the two tops agree on every line.
        out = light(RECORDED / "storm-1.jsonl")
        for line in out.splitlines():
            if "upper end" in line:
                top = line.split("]")[0].split(",")[-1].strip()
                self.assertEqual(top, line.split("upper end ")[1].split()[0], line)

    def test_two_storm_runs_pooled(self):
        out = light(RECORDED / "storm-1.jsonl", RECORDED / "storm-2.jsonl")
        line = difference_line(out, "storm, paired", "speedlab - sl-floor")
        self.assertIn("+0.19 [-0.08, +0.55] us per launch", line)
        self.assertIn("55 rounds", line)  # 16 + 39: round 1 of each run is not one round
        self.assertIn("| sl-floor | 55 |", out)
        self.assertIn("+1.31 [+1.08, +1.67]", out)  # the floor against plain
        call = difference_line(out, "storm-call, paired", "speedlab - sl-floor")
        self.assertIn("+0.13 [-0.04, +0.63]", call)

    def test_torch_runs_disagree(self):
        first = difference_line(light(RECORDED / "torch-1.jsonl", loop_figure="mean_us_per_step"),
                                "torch (percent of plain)", "speedlab - plain")
        second = difference_line(light(RECORDED / "torch-2.jsonl", loop_figure="mean_us_per_step"),
                                 "torch (percent of plain)", "speedlab - plain")
        self.assertIn("+16.2 [+13.9, +25.7]", first)
        self.assertIn("above plain, 21 rounds", first)
        self.assertIn("+0.3 [-3.8, +15.6]", second)
        self.assertIn("not told apart from plain, 7 rounds", second)

    def test_storm_four_runs_pooled(self):
        # Two pinned calls of the last session, one pinned and one unpinned call of this one.
        runs = [RECORDED / f for f in ("storm-1.jsonl", "storm-2.jsonl", "storm-3.jsonl", "storm-4-unpinned.jsonl")]
        out = light(*runs)
        line = difference_line(out, "storm, paired", "speedlab - sl-floor")
        self.assertIn("+0.24 [+0.07, +0.54] us per launch; upper end +0.54 (above sl-floor, 85 rounds)", line)
        call = difference_line(out, "storm-call, paired", "speedlab - sl-floor")
        self.assertIn("+0.17 [+0.07, +0.32]", call)
        self.assertIn("| sl-floor | 85 | 5.06 [4.86, 5.30] | +1.08 [+0.93, +1.27] |", out)
        unpinned = difference_line(light(RECORDED / "storm-4-unpinned.jsonl"), "storm, paired", "speedlab - sl-floor")
        self.assertIn("+0.12 [-0.16, +0.31]", unpinned)

    def test_torch_floor_above_the_bound(self):
        # Every loop run pooled: the default against plain; the two with kernel records alone.
        runs = [RECORDED / f for f in ("torch-1.jsonl", "torch-2.jsonl", "torch-3-unpinned.jsonl",
                                       "torch-4-unpinned.jsonl")]
        line = difference_line(light(*runs, loop_figure="mean_us_per_step"), "torch (percent of plain)",
                               "speedlab - plain")
        self.assertIn("+15.1 [+11.8, +22.7] % of plain's step", line)
        self.assertIn("55 rounds", line)
        floor = difference_line(light(RECORDED / "torch-2.jsonl", RECORDED / "torch-4-unpinned.jsonl",
                                      loop_figure="mean_us_per_step"), "torch (percent of plain)", "sl-floor - plain")
        self.assertIn("+9.2 [+7.2, +22.4] % of plain's step; upper end +22.4 (above plain, 13 rounds)", floor)

    def test_cupti_floor_on_the_storm(self):
        # CUPTI's bare kernel records (floor_probe.cpp) against plain, speedlab's floor and the
        # default, paired by round in one call.
        out = light(RECORDED / "floor-1-unpinned.jsonl", loop_figure="mean_us_per_step")
        self.assertIn("+1.26 [+0.87, +2.03] us per launch", difference_line(out, "storm, paired", "cupti-bare - plain"))
        self.assertIn("-0.17 [-0.83, +1.11] us per launch; upper end +1.11 (not told apart from cupti-bare, 8 rounds)",
                      difference_line(out, "storm, paired", "sl-floor - cupti-bare"))
        self.assertIn("+0.07 [-0.70, +1.36] us per launch",
                      difference_line(out, "storm, paired", "speedlab - cupti-bare"))
        self.assertIn("not told apart from plain", difference_line(out, "storm-call, paired", "cupti-attach - plain"))

    def test_cupti_floor_on_the_loop_above_the_bound(self):
        # The four calls with kernel records alone pooled; CUPTI's own floor in the last two.
        runs = [RECORDED / f for f in ("torch-2.jsonl", "torch-4-unpinned.jsonl", "floor-1-unpinned.jsonl",
                                       "floor-2-unpinned.jsonl")]
        out = light(*runs, loop_figure="mean_us_per_step")
        head = "torch (percent of plain)"
        self.assertIn("+12.4 [+7.5, +19.6] % of plain's step; upper end +19.6 (above plain, 27 rounds)",
                      difference_line(out, head, "sl-floor - plain"))
        self.assertIn("+18.6 [+6.0, +22.7] % of plain's step; upper end +22.7 (above plain, 14 rounds)",
                      difference_line(out, head, "cupti-bare - plain"))
        self.assertIn("-4.6 [-12.6, +4.6] % of cupti-bare's step; upper end +4.6 (not told apart from cupti-bare, 14 rounds)",
                      difference_line(out, head, "sl-floor - cupti-bare"))
        # Eight rounds put the default below CUPTI's bare records, which it contains: across
        # processes the loop's intervals of a few rounds are too narrow (the results page says so).
        self.assertIn("below cupti-bare, 8 rounds", difference_line(out, head, "speedlab - cupti-bare"))
        every = [RECORDED / f for f in ("torch-1.jsonl", "torch-2.jsonl", "torch-3-unpinned.jsonl",
                                        "torch-4-unpinned.jsonl", "floor-1-unpinned.jsonl")]
        self.assertIn("+15.1 [+10.6, +18.8] % of plain's step; upper end +18.8 (above plain, 63 rounds)",
                      difference_line(light(*every, loop_figure="mean_us_per_step"), head, "speedlab - plain"))

    def test_probe_counts_every_kernel(self):
        # The probe's processes ran traced: each names the kernels CUPTI handed it, none dropped.
        rows = [json.loads(line) for f in ("floor-1-unpinned.jsonl", "floor-2-unpinned.jsonl")
                for line in (RECORDED / f).read_text().splitlines()]
        bare = [r for r in rows if r["tool"] == "cupti-bare"]
        self.assertEqual(len(bare), 22)
        self.assertTrue(all(r["probe_kernels"] > 0 and r["probe_dropped"] == 0 and r["value"] for r in bare), bare)
        self.assertTrue(all(r["probe_kernels"] == 0 for r in rows if r["tool"] == "cupti-attach"))

    def test_compile_loop_eight_rounds(self):
        runs = [RECORDED / f"compile-{i}-unpinned.jsonl" for i in (1, 2, 3)]
        out = light(*runs, loop_figure="mean_us_per_step")
        head = "compile (percent of plain)"
        self.assertIn("+8.9 [+0.6, +26.2] % of plain's step; upper end +26.2 (above plain, 8 rounds)",
                      difference_line(out, head, "speedlab - plain"))
        self.assertIn("+20.9 [+2.0, +27.4]", difference_line(out, head, "nsys - plain"))
        self.assertIn("+21.4 [+9.7, +27.8]", difference_line(out, head, "sl-full - plain"))
        self.assertIn("+43.1 [+32.9, +59.7]", difference_line(out, head, "torchprof - plain"))
        self.assertIn("| compile | speedlab | 8 | 1.97 | 1.96 |", out)
        self.assertIn("| compile | nsys | 8 | 0.63 | - |", out)
        self.assertIn("| compile | torchprof | 8 | 34.74 | - |", out)

    def test_placement_table(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [{"workload": "storm", "tool": t, "round": r, "proc": 0, "value": v, "unit": "u", "exit": 0,
                     "call_us": None, "main_cpu": cpu, "beside_main": beside}
                    for r, (t, v, cpu, beside) in enumerate([("plain", 4.0, 2, []), ("speedlab", 6.5, 3, ["cuda0"]),
                                                             ("plain", 4.2, 2, []), ("speedlab", 5.0, 3, [])], 1)]
            path = pathlib.Path(d) / "r.jsonl"
            path.write_text("".join(json.dumps(x) + "\n" for x in rows))
            out = light(path)
        self.assertIn("| storm | plain | 2 | alone | 2 | 4.10 |", out)
        self.assertIn("| storm | speedlab | 3 | shared | 1 | 6.50 |", out)
        self.assertIn("| storm | speedlab | 3 | alone | 1 | 5.00 |", out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
