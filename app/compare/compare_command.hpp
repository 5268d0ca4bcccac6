// `speedlab compare BASE NEW`: two saved runs compared point by point (analysis/compare.hpp),
// written as compare.md / compare.html / compare.json (reports/compare/), with the exit status
// a gate reads. The interleaved form (--base-plugins/--new-plugins) is interleave.hpp.
#pragma once

#include <string>
#include <vector>

#include "app/process/exit_code.hpp"

namespace speedlab::analysis {
struct comparison;
}

namespace speedlab::app {

// speedlab compare BASE NEW: exit 0 no regression shown, 1 a regression (a point clearly
// slower beyond the threshold, broken, or ok in BASE and missing in NEW), 2 bad input
// (exit_usage), 3 could not decide (exit_undecided: no point's time judged).
struct compare_cli_options {
  std::string base_dir, new_dir;
  double threshold_percent = 5;
  std::vector<std::string> formats = {"md"}; // md, html, json
  std::string out_dir;                       // empty: the one format to stdout
  bool paired = false;                       // refuse unless BASE and NEW are one interleaved measurement's sides
  bool allow_missing = false;                // points ok in BASE and missing in NEW are listed, not a regression
};
int command_compare(const compare_cli_options& options);

// Throws config_error (exit 2) on a threshold that is not a finite number in [0, 1000], or
// several formats without --out (standard output takes one).
void check_compare_options(const compare_cli_options& options);

// Writes compare.<format> for each format into out_dir (empty: the one format to stdout),
// says the counts on stderr and returns compare's exit code (compare_exit_code).
int write_comparison(const analysis::comparison& c, const std::vector<std::string>& formats,
                     const std::string& out_dir);

// 1 a regression, 3 nothing decided, 0 otherwise.
int compare_exit_code(const analysis::comparison& c);

} // namespace speedlab::app
