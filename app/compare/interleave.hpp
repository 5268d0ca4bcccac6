// speedlab compare --base-plugins A --new-plugins B [SUITE] --out OUT: one process loads both
// plugin sets and measures round r of every point on both sides back to back (the order
// alternating per round and point: ABBA, so a linear drift cancels), into two ordinary run
// folders OUT/base and OUT/new, then compares them round by round (analysis/compare.hpp,
// "paired") into OUT/compare.*. Like asv's `continuous --interleave-rounds`: a load or
// frequency shift during the measurement hits both sides of a round alike.
#pragma once

#include <string>
#include <vector>

#include "app/run/commands.hpp"

namespace speedlab::app {

// Rounds when neither --rounds nor more in the suite say otherwise: the paired t has rounds - 1
// degrees of freedom (over 8 points its quantile at 0.05 / 8 is 4.31 with 5 rounds, 3.11 with
// 10), and 10 rounds measured 1.71x the time of two 1-round runs, within the 2x the gate may
// cost (docs/reports.md, "The gate, interleaved").
inline constexpr int default_interleave_rounds = 10;

struct interleave_options {
  run_options run;                          // suite, -w/-v/-p and settings; output unused
  std::vector<std::string> base_plugins, new_plugins; // plugin folders (or files) of each side
  compare_cli_options compare;              // threshold, formats, out_dir (OUT)
};

int command_compare_interleaved(const interleave_options& options);

} // namespace speedlab::app
