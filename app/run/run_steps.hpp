// The steps of `speedlab run` (app/cli/commands.cpp), which run_side (run_side.hpp) takes too:
// what app/run/ offers the commands above it. app/compare/ measures through run_side.hpp only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/analyze.hpp"
#include "app/plugins/plugin_loader.hpp"
#include "app/run/output_folder.hpp"
#include "app/run/run_options.hpp"
#include "app/run/runner.hpp"
#include "app/suite/suite_config.hpp"
#include "model/results.hpp"

namespace speedlab::app {

void load_plugins(plugin_registry& registry, const std::vector<std::string>& cli_paths);
bool counts_as_failure(const point_result& p);
void print_findings(const analysis::analysis_result& result);
written_reports write_reports(const saved_run& saved, const analysis::analysis_result& result,
                              const std::vector<std::string>& formats);
analysis::analysis_result analyze_saved(const saved_run& saved);

// `run`'s suite: prepare_suite, and a command-line suite (-w without a suite file) measured in
// command_line_suite_rounds unless --rounds says otherwise.
suite_config prepare_run_suite(const run_options& options);
std::vector<planned_point> on_devices(const std::vector<planned_point>& points, const std::vector<int>& devices,
                                      const plugin_registry& registry);
std::vector<planned_point> plan_run(suite_config& suite, const run_options& options, const plugin_registry& registry);
std::unique_ptr<output_folder> open_output(const suite_config& suite, const run_options& options,
                                           std::set<std::string>& notes);
void add_measure_settings(std::map<std::string, std::string>& out, const measure_options& m, const std::string& prefix);
std::map<std::string, std::string> measurement_settings(const suite_config& suite);
void record_plugin_builds(run_info& info, const std::vector<planned_point>& planned, const plugin_registry& registry);
void record_device(run_info& info, const std::optional<analysis::device_model>& device);
run_info new_run_info(const run_options& options, const suite_config& suite);
// One round of one point: its request (the round's share of the budget and its backends) and
// the device its parameters name (--devices).
struct round_plan {
  run_request request;
  std::optional<int> device;
};
round_plan plan_round(const planned_point& pp, int rounds, int round, const suite_config& suite,
                      const plugin_registry& registry, output_folder& folder, int threads);
// What every round's result gets after measuring: the plugin's build, the device parameter.
void finish_round(point_result& r, const round_plan& plan, const suite_config& suite);
std::optional<point_result> measure_round(const planned_point& pp, int rounds, int round, const suite_config& suite,
                                          const plugin_registry& registry, output_folder& folder, int threads);
std::vector<point_result> measure_points(const std::vector<planned_point>& points, const suite_config& suite,
                                         const plugin_registry& registry, output_folder& folder, int threads,
                                         std::set<std::string>& notes,
                                         std::vector<std::optional<point_result>> started = {});
// Throws config_error naming each unknown name in `wanted` (a profiler, a report format).
void check_names(const std::vector<std::string>& wanted, const std::vector<std::string>& valid, const char* what);

} // namespace speedlab::app
