// The subcommands of the speedlab program (compare's: app/compare/); main.cpp only parses the
// command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/process/exit_code.hpp"
#include "app/python/python_variants.hpp"
#include "app/run/run_options.hpp"

namespace speedlab::app {

struct list_options {
  std::vector<std::string> plugin_paths;
  python_settings python;
  bool json = false;
};
int command_list(const list_options& options);

int command_run(const run_options& options);

struct report_options {
  std::string dir;
  std::vector<std::string> formats; // empty: every format
  bool summary = false;             // a profile folder: write its summary files, no report
  bool force = false;               // rewrite results.json even from fewer points than it holds
};
int command_report(const report_options& options);

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
