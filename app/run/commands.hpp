// The subcommands of the speedlab program; main.cpp only parses the command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/suite/suite_overrides.hpp"
#include "app/python/python_variants.hpp"
#include "app/suite/suite_config.hpp"

namespace speedlab::analysis {
struct comparison;
}

namespace speedlab::app {

// Exit codes: 0 every point valid (or skipped with a reason, or wrong on purpose and
// flagged), 1 some run failed or was invalid or a report could not be written, 2 usage or
// configuration error (an output folder in use or holding an earlier run included; nothing
// valid to read), 128 + signal when SIGINT/SIGTERM/SIGHUP stopped a run (130, 143, 129);
// compare only: 3 could not decide (no point's time judged, nothing compared).
enum exit_code : int { exit_ok = 0, exit_failures = 1, exit_usage = 2, exit_undecided = 3 };

struct list_options {
  std::vector<std::string> plugin_paths;
  python_settings python;
  bool json = false;
};
int command_list(const list_options& options);

struct run_options {
  std::optional<std::string> suite_file;
  cli_overrides overrides;
  std::vector<std::string> plugin_paths;
  std::string command_line;
  bool force = false;  // replace an earlier run in the output folder (said loudly)
  bool resume = false; // keep an earlier run's points and measure only the others
};
int command_run(const run_options& options);

struct report_options {
  std::string dir;
  std::vector<std::string> formats; // empty: every format
  bool summary = false;             // a profile folder: write its summary files, no report
  bool force = false;               // rewrite results.json even from fewer points than it holds
};
int command_report(const report_options& options);

// speedlab compare BASE NEW: exit 0 no regression shown, 1 a regression (a point clearly
// slower beyond the threshold, broken, or ok in BASE and missing in NEW), 2 bad input
// (exit_usage), 3 could not decide (exit_undecided: no point's time judged).
struct compare_cli_options {
  std::string base_dir, new_dir;
  double threshold_percent = 5;
  std::vector<std::string> formats = {"md"}; // md, html, json
  std::string out_dir;                       // empty: the one format to stdout
  bool paired = false; // refuse unless BASE and NEW are one interleaved measurement's sides
  bool allow_missing = false; // points ok in BASE and missing in NEW are listed, not a regression
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

struct analyze_options {
  std::string dir;
  bool json = false;
};
int command_analyze(const analyze_options& options);

struct calibrate_options_cli {
  bool full = false;
  bool json = false;
  bool no_cache = false;
};
int command_calibrate(const calibrate_options_cli& options);

} // namespace speedlab::app
