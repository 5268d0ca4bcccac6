// Command-line settings applied over a parsed suite. Numbers are checked against the same
// limits as the suite file's (checked_number.hpp); errors say "<command line>: --option".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/suite/suite_config.hpp"

namespace speedlab::app {

struct cli_overrides {
  std::vector<std::string> workloads, variants, params; // params: name=value-or-sweep
  std::optional<std::string> output;
  std::optional<bool> isolate;
  std::optional<double> timeout_s, max_time_s, min_time_s;
  std::optional<std::size_t> min_samples, max_samples, warmup_runs;
  std::optional<int> rounds;
  std::optional<int> threads;
  std::optional<std::vector<std::string>> profilers, reports;
  std::optional<std::string> calibrate;
  std::optional<bool> self_timing;
  std::optional<std::string> python;       // --python: the interpreter
  std::vector<std::string> python_variants; // --python-variants: more files
  bool no_python = false;                   // --no-python
  std::optional<std::string> metric_set;          // --metrics (counters backend)
  std::optional<std::size_t> counters_per_kernel; // --counters-per-kernel (K)
  std::optional<std::string> devices;             // --devices all|0,1,... (app/run/device_list.hpp)
};

// Throws config_error.
void apply_overrides(suite_config& suite, const cli_overrides& cli);

// --metrics: the counters backend's metric set (a named set or metric names joined by
// commas), checked by model/counters as the backend's own `counters: metrics:` reader checks
// it; returns the set unchanged, or throws config_error "<where>: <option>: <why>".
std::string checked_metric_set(const std::string& set, const std::string& where, const std::string& option);

} // namespace speedlab::app
