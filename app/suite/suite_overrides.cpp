#include "app/suite/suite_overrides.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "app/suite/checked_number.hpp"
#include "app/suite/names.hpp"
#include "app/suite/sweep.hpp"
#include "model/counters.hpp"
#include "profilers/counters/counters_options.hpp"

namespace speedlab::app {
namespace {

const source_location command_line{"<command line>", 0, 0};

template <class T>
void check(const std::optional<T>& value, const char* option, const number_rule& rule) {
  if (!value) return;
  try {
    checked_value(static_cast<double>(*value), rule);
  } catch (const number_error& e) {
    throw config_error(fmt::format("<command line>: {} {}", option, e.what()));
  }
}

// Every number in range and the pairs in order, before anything is applied.
void check_overrides(const cli_overrides& cli) {
  check(cli.timeout_s, "--timeout", limits::timeout_s);
  check(cli.max_time_s, "--max-time", limits::max_time_s);
  check(cli.min_time_s, "--min-time", limits::min_time_s);
  check(cli.min_samples, "--min-samples", limits::samples);
  check(cli.max_samples, "--max-samples", limits::samples);
  check(cli.warmup_runs, "--warmup", limits::warmup_runs);
  check(cli.threads, "--threads", limits::threads);
  check(cli.rounds, "--rounds", limits::rounds);
  check(cli.counters_per_kernel, "--counters-per-kernel", limits::counters_per_kernel);
  if (cli.min_samples && cli.max_samples && *cli.min_samples > *cli.max_samples)
    throw config_error(fmt::format("<command line>: --min-samples ({}) is larger than --max-samples ({})",
                                   *cli.min_samples, *cli.max_samples));
  if (cli.min_time_s && cli.max_time_s && *cli.min_time_s > *cli.max_time_s)
    throw config_error(fmt::format("<command line>: --min-time ({} s) is larger than --max-time ({} s)", *cli.min_time_s,
                                   *cli.max_time_s));
  if (cli.output && cli.output->empty()) throw config_error("<command line>: --out is an empty path; name a folder");
  if (cli.python && cli.python->empty())
    throw config_error("<command line>: --python is empty; name an interpreter, or leave it out to let speedlab pick one");
}

// The run-wide settings and the measurement bounds, over the suite's.
void apply_settings(suite_config& s, const cli_overrides& cli) {
  if (cli.output) s.output = *cli.output;
  if (cli.isolate) s.isolate = *cli.isolate;
  if (cli.timeout_s) s.timeout_s = *cli.timeout_s;
  if (cli.threads) s.threads = *cli.threads;
  if (cli.rounds) s.rounds = *cli.rounds;
  if (cli.profilers) s.profilers = *cli.profilers;
  if (cli.reports) s.reports = *cli.reports;
  if (cli.calibrate) s.calibrate = *cli.calibrate;
  if (cli.self_timing) s.self_timing = *cli.self_timing;
  if (cli.python) {
    s.python = *cli.python;
    s.python_chosen_by = "--python";
  }
  for (const auto& f : cli.python_variants) s.python_variants.push_back(f);
  if (cli.no_python) s.python_enabled = false;
  auto& counters = s.profiler_options.block<profiling::counters_options>(); // --metrics, --counters-per-kernel
  if (cli.metric_set) counters.metric_set = checked_metric_set(*cli.metric_set, command_line.file, "--metrics");
  if (cli.counters_per_kernel) counters.counters_per_kernel = *cli.counters_per_kernel;
  // One bound given on the command line moves the suite's other bound with it.
  auto apply_measure = [&](measure_options& m) {
    if (cli.max_time_s) m.max_time_s = *cli.max_time_s;
    if (cli.min_time_s) m.min_time_s = *cli.min_time_s;
    if (cli.min_samples) m.min_samples = *cli.min_samples;
    if (cli.max_samples) m.max_samples = *cli.max_samples;
    if (cli.warmup_runs) m.warmup_runs = *cli.warmup_runs;
    if (m.min_samples > m.max_samples) m.max_samples = m.min_samples;
    if (m.min_time_s > m.max_time_s) m.min_time_s = m.max_time_s;
  };
  apply_measure(s.measure);
  for (auto& w : s.workloads)
    if (w.measure) apply_measure(*w.measure);
}

// --workload, --variant and --param: what runs.
void apply_selection(suite_config& s, const cli_overrides& cli) {
  if (!cli.workloads.empty()) {
    // --workload selects (and keeps the suite's settings for those it already names).
    std::vector<workload_request> selected;
    for (const auto& name : cli.workloads) {
      if (name.empty()) throw config_error("<command line>: --workload is empty; name a workload");
      auto it = std::find_if(s.workloads.begin(), s.workloads.end(), [&](const auto& w) { return w.name == name; });
      if (it != s.workloads.end()) selected.push_back(*it);
      else selected.push_back(workload_request{name, command_line, {}, {}, {}, {}, {}});
    }
    s.workloads = std::move(selected);
  }
  if (!cli.variants.empty()) {
    if (s.workloads.empty()) throw config_error("<command line>: --variant needs workloads (a suite or --workload)");
    for (auto& w : s.workloads) {
      w.variants = cli.variants;
      w.variant_where.assign(cli.variants.size(), command_line);
    }
  }
  for (const auto& p : cli.params) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      throw config_error(fmt::format("<command line>: --param '{}' must look like name=value or name=2^10..2^20", echo(p)));
    const std::string name = p.substr(0, eq);
    std::vector<std::string> values;
    try {
      values = expand_sweep(p.substr(eq + 1));
    } catch (const sweep_error& e) {
      throw config_error(fmt::format("<command line>: --param {}: {}", echo(name), e.what()));
    }
    if (s.workloads.empty()) throw config_error("<command line>: --param needs workloads (a suite or --workload)");
    for (auto& w : s.workloads) {
      w.params[name] = values;
      w.param_where[name] = command_line;
    }
  }
}

} // namespace

std::string checked_metric_set(const std::string& set, const std::string& where, const std::string& option) {
  try {
    counters::metric_set(set);
  } catch (const std::invalid_argument& e) {
    throw config_error(fmt::format("{}: {}: {}", where, option, e.what()));
  }
  return set;
}

void apply_overrides(suite_config& s, const cli_overrides& cli) {
  check_overrides(cli);
  apply_settings(s, cli);
  apply_selection(s, cli);
}

} // namespace speedlab::app
