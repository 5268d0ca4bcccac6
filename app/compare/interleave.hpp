// speedlab compare --base-plugins A --new-plugins B [SUITE] --out OUT: one process loads both
// plugin sets and measures round r of every point on both sides in one child, repetition by
// repetition (app/run/run_side.hpp, measure_pair; which side starts alternating per round
// and point: ABBA, so a linear drift cancels), into two ordinary run folders OUT/base and
// OUT/new, then compares them round by round (analysis/compare.hpp, "paired") into
// OUT/compare.*. Like asv's `continuous --interleave-rounds`, one step further: a load or
// frequency shift during a round hits both sides alike.
#pragma once

#include <string>
#include <vector>

#include "app/compare/compare_command.hpp"
#include "app/run/run_options.hpp"

namespace speedlab::app {

// Rounds when neither --rounds nor more in the suite say otherwise: from 10 rounds the paired
// test trims one round at each end (a stalled round), with 7 degrees of freedom (over 8 points
// its quantile at 0.05 / 8 is 3.34; 4.31 with 5 rounds); 10 rounds measured 2.09x and 2.68x the
// time of two 1-round runs (docs/reports.md, "The gate, interleaved").
inline constexpr int default_interleave_rounds = 10;

struct interleave_options {
  run_options run;                          // suite, -w/-v/-p and settings; output unused
  std::vector<std::string> base_plugins, new_plugins; // plugin folders (or files) of each side
  compare_cli_options compare;              // threshold, formats, out_dir (OUT)
};

int command_compare_interleaved(const interleave_options& options);

} // namespace speedlab::app
