// speedlab: where does the time go when numerical code moves to the GPU?
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/commands.hpp"
#include "speedlab/config.hpp"

int main(int argc, char** argv) {
  using namespace speedlab::app;
  CLI::App app{"speedlab: runs workload variants (serial, threads, CUDA) over problem sizes, validates them,\n"
               "profiles them (host timers, CUPTI, NVTX) and reports where the time goes and why."};
  app.set_version_flag("--version", std::string("speedlab ") + SPEEDLAB_VERSION);
  app.require_subcommand(1);

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

  list_options list;
  auto* list_cmd = app.add_subcommand("list", "List workloads, variants, parameters and whether each variant can run here");
  list_cmd->add_flag("--json", list.json, "Machine-readable output");
  list_cmd->add_option("--plugin-path", list.plugin_paths, "Folder (or plugin file) to load plugins from; repeatable");

  run_options run;
  run.command_line = command_line;
  std::vector<std::string> profilers, reports;
  bool no_isolate = false;
  auto* run_cmd = app.add_subcommand("run", "Run a suite (the built-in default without SUITE.yaml)");
  run_cmd->add_option("suite", run.suite_file, "Suite file (YAML)");
  run_cmd->add_option("--workload,-w", run.overrides.workloads, "Workload to run; repeatable");
  run_cmd->add_option("--variant,-v", run.overrides.variants, "Variant to run; repeatable");
  run_cmd->add_option("--param,-p", run.overrides.params, "name=value or name=sweep (2^10..2^20, 1e3:1e6:10, a,b)");
  run_cmd->add_option("--out,-o", run.overrides.output, "Output folder");
  run_cmd->add_option("--plugin-path", run.plugin_paths, "Folder (or plugin file) to load plugins from; repeatable");
  run_cmd->add_flag("--no-isolate", no_isolate, "Run every point in this process (a crash ends the suite)");
  run_cmd->add_option("--timeout", run.overrides.timeout_s, "Seconds one run may take before it is killed")->check(CLI::PositiveNumber);
  run_cmd->add_option("--max-time", run.overrides.max_time_s, "Most seconds of measurement per point")->check(CLI::PositiveNumber);
  run_cmd->add_option("--min-time", run.overrides.min_time_s, "Least seconds of measurement per point")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--min-samples", run.overrides.min_samples, "Least repetitions per point")->check(CLI::PositiveNumber);
  run_cmd->add_option("--max-samples", run.overrides.max_samples, "Most repetitions per point")->check(CLI::PositiveNumber);
  run_cmd->add_option("--warmup", run.overrides.warmup_runs, "Warm-up repetitions per point");
  run_cmd->add_option("--threads", run.overrides.threads, "Threads for 'threads' variants (0: all cores)")->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--profilers", profilers, "Profiler backends (host, cupti, counters, none)")->delimiter(',');
  run_cmd->add_option("--metrics", run.overrides.metric_set,
                      "Counter metric set for the counters backend: default, full, or metric names joined by commas");
  run_cmd->add_option("--counters-per-kernel", run.overrides.counters_per_kernel,
                      "Launches profiled per distinct (kernel, grid, block) in the counters pass (K, default 2)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--reports", reports, "Report formats (markdown, html, json, csv, perfetto, nsys-sqlite)")->delimiter(',');
  run_cmd->add_option("--calibrate", run.overrides.calibrate, "Device ceilings: off, cached, quick, full")
      ->check(CLI::IsMember({"off", "cached", "quick", "full"}));
  bool self_timing = false;
  run_cmd->add_flag("--self-timing", self_timing,
                    "Variants that can time their own work (cudaEvents) do, beside the profiler's figures");

  report_options report;
  auto* report_cmd = app.add_subcommand("report", "Regenerate reports from a saved output folder (nothing is re-run)");
  report_cmd->add_option("dir", report.dir, "Output folder of a run")->required();
  report_cmd->add_option("--format,-f", report.formats, "Formats to write (default: all)")->delimiter(',');

  analyze_options analyze;
  auto* analyze_cmd = app.add_subcommand("analyze", "Print the bottleneck analysis of a saved output folder");
  analyze_cmd->add_option("dir", analyze.dir, "Output folder of a run")->required();
  analyze_cmd->add_flag("--json", analyze.json, "Machine-readable output");

  calibrate_options_cli calibrate;
  auto* calibrate_cmd = app.add_subcommand("calibrate", "Measure the device's and host's ceilings and cache them");
  calibrate_cmd->add_flag("--full", calibrate.full, "Longer, more precise measurement");
  calibrate_cmd->add_flag("--json", calibrate.json, "Machine-readable output");
  calibrate_cmd->add_flag("--no-cache", calibrate.no_cache, "Do not write the cache");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : exit_usage;
  }

  try {
    if (*list_cmd) return command_list(list);
    if (*run_cmd) {
      if (no_isolate) run.overrides.isolate = false;
      if (self_timing) run.overrides.self_timing = true;
      if (!profilers.empty()) run.overrides.profilers = profilers;
      if (!reports.empty()) run.overrides.reports = reports;
      return command_run(run);
    }
    if (*report_cmd) return command_report(report);
    if (*analyze_cmd) return command_analyze(analyze);
    if (*calibrate_cmd) return command_calibrate(calibrate);
  } catch (const std::exception& e) {
    std::cerr << "speedlab: error: " << e.what() << '\n';
    return exit_usage;
  }
  return exit_usage;
}
