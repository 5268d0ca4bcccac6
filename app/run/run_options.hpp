// What `speedlab run` takes from its command line (app/cli/command_line.cpp), and the suite it
// makes of it: what `speedlab compare --base-plugins/--new-plugins` measures on each side
// (app/run/run_side.hpp) too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/suite/suite_config.hpp"
#include "app/suite/suite_overrides.hpp"

namespace speedlab::app {

struct run_options {
  std::optional<std::string> suite_file;
  cli_overrides overrides;
  std::vector<std::string> plugin_paths;
  std::string command_line;
  bool force = false;  // replace an earlier run in the output folder (said loudly)
  bool resume = false; // keep an earlier run's points and measure only the others
};

// The suite with the command line applied, its profilers and report formats checked.
suite_config prepare_suite(const run_options& options);

} // namespace speedlab::app
