// speedlab: where does the time go when numerical code moves to the GPU?
#include <algorithm>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "app/checked_number.hpp"
#include "app/commands.hpp"
#include "app/names.hpp"
#include "app/new_project.hpp"
#include "app/profile_command.hpp"
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
  list_cmd->add_option("--python", list.python.interpreter, "Python interpreter whose Python variants to list");
  list_cmd->add_option("--python-variants", list.python.files, "File of Python variants to add; repeatable");
  list_cmd->add_flag("--no-python", [&list](std::int64_t) { list.python.enabled = false; }, "List the C++ variants only");

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
  auto* force_flag = run_cmd->add_flag("--force", run.force,
                                       "Replace an earlier run in the output folder (otherwise refused)");
  run_cmd->add_flag("--resume", run.resume,
                    "Keep the points already in the output folder and measure only the others (after a crash or Ctrl-C)")
      ->excludes(force_flag);
  run_cmd->add_option("--plugin-path", run.plugin_paths, "Folder (or plugin file) to load plugins from; repeatable");
  run_cmd->add_flag("--no-isolate", no_isolate, "Run every point in this process (a crash ends the suite)");
  run_cmd->add_option("--devices", run.overrides.devices,
                      "GPUs to run each point on, in turn: all, or indices such as 0,1 (default: device 0 only)");
  // Numbers are taken as text and go through checked_number (the suite file's limits).
  std::map<std::string, std::string> numbers;
  auto number_option = [&](const char* name, const char* help) {
    run_cmd->add_option(name, numbers[name], help);
  };
  number_option("--timeout", "Seconds one run may take before it is killed");
  number_option("--max-time", "Most seconds of measurement per point");
  number_option("--min-time", "Least seconds of measurement per point");
  number_option("--min-samples", "Least repetitions per point");
  number_option("--max-samples", "Most repetitions per point");
  number_option("--warmup", "Warm-up repetitions per point");
  number_option("--threads", "Threads for 'threads' variants (0: all cores)");
  number_option("--counters-per-kernel", "Launches profiled per distinct (kernel, grid, block) in the counters pass (K, default 2)");
  run_cmd->add_option("--profilers", profilers, "Profiler backends (host, cupti, counters, none)")->delimiter(',');
  run_cmd->add_option("--metrics", run.overrides.metric_set,
                      "Counter metric set for the counters backend: default, full, or metric names joined by commas");
  run_cmd->add_option("--reports", reports, "Report formats (markdown, html, json, csv, perfetto, nsys-sqlite)")->delimiter(',');
  run_cmd->add_option("--calibrate", run.overrides.calibrate, "Device ceilings: off, cached, quick, full")
      ->check(CLI::IsMember({"off", "cached", "quick", "full"}));
  run_cmd->add_option("--python", run.overrides.python,
                      "Python interpreter of the Python variants (default python3; a venv's or conda's works)");
  run_cmd->add_option("--python-variants", run.overrides.python_variants, "File of Python variants to add; repeatable");
  run_cmd->add_flag("--no-python", run.overrides.no_python, "Run the C++ variants only");
  bool self_timing = false;
  run_cmd->add_flag("--self-timing", self_timing,
                    "Variants that can time their own work (cudaEvents) do, beside the profiler's figures");

  report_options report;
  auto* report_cmd = app.add_subcommand("report", "Regenerate reports from a saved output folder (nothing is re-run)");
  report_cmd->add_option("dir", report.dir, "Output folder of a run")->required();
  report_cmd->add_option("--format,-f", report.formats, "Formats to write (default: all)")->delimiter(',');

  compare_cli_options compare;
  auto* compare_cmd = app.add_subcommand(
      "compare", "Compare two saved runs point by point (exit 1 on a clear regression beyond the threshold)");
  compare_cmd->add_option("base", compare.base_dir, "Output folder of the reference run")->required();
  compare_cmd->add_option("new", compare.new_dir, "Output folder of the run to judge")->required();
  compare_cmd->add_option("--threshold", compare.threshold_percent, "Smallest change in percent that counts, with its whole 95% interval (default 10)")
      ->check(CLI::Range(0.0, 1000.0));
  compare_cmd->add_option("--format,-f", compare.formats, "md, html, json (default md)")->delimiter(',')
      ->check(CLI::IsMember({"md", "html", "json"}));
  compare_cmd->add_option("--out,-o", compare.out_dir, "Folder for compare.md/.html/.json (default: stdout)");

  analyze_options analyze;
  auto* analyze_cmd = app.add_subcommand("analyze", "Print the bottleneck analysis of a saved output folder");
  analyze_cmd->add_option("dir", analyze.dir, "Output folder of a run")->required();
  analyze_cmd->add_flag("--json", analyze.json, "Machine-readable output");

  calibrate_options_cli calibrate;
  auto* calibrate_cmd = app.add_subcommand("calibrate", "Measure the device's and host's ceilings and cache them");
  calibrate_cmd->add_flag("--full", calibrate.full, "Longer, more precise measurement");
  calibrate_cmd->add_flag("--json", calibrate.json, "Machine-readable output");
  calibrate_cmd->add_flag("--no-cache", calibrate.no_cache, "Do not write the cache");

  new_options new_project;
  auto* new_cmd = app.add_subcommand("new", "Write a ready out-of-tree plugin project (CMake, serial reference, "
                                            "validation, work model, suite, README)");
  new_cmd->add_option("name", new_project.name, "Plugin and workload name (lower-case letters, digits, '_', '-')")
      ->required();
  new_cmd->add_flag("--cuda", new_project.cuda, "Add a CUDA variant (a .cu file using <speedlab/cuda.hpp>)");
  new_cmd->add_option("--dir", new_project.dir, "Folder to write (default ./NAME); must be new or empty");

  profile_options profile;
  profile.command_line = command_line;
  auto* profile_cmd = app.add_subcommand(
      "profile", "Run an unmodified program (C++, CuPy, Numba, PyTorch...) with GPU tracing: speedlab profile [options] -- PROGRAM [ARGS...]");
  profile_cmd->add_option("--out,-o", profile.out, "Output folder (refused if not empty, unless --force)");
  profile_cmd->add_flag("--force", profile.force, "Write into a non-empty folder, removing an earlier profile's streams");
  profile_cmd->add_option("--flush-interval", profile.flush_interval_ms,
                          "Milliseconds between flushes of each process's stream (default 500): what a crash can lose")
      ->check(CLI::Range(1u, 3600000u));
  // Everything from the first positional argument on (or after --) is PROGRAM's, untouched.
  profile_cmd->prefix_command();
  profile_cmd->footer("PROGRAM [ARGS...] follow the options, best after --; speedlab exits with PROGRAM's exit code.");

  // `speedlab profile [options] -- PROGRAM ARGS`: whatever follows the first -- is PROGRAM's,
  // options look-alikes included, so CLI11 never sees it.
  int parsed_argc = argc;
  std::vector<std::string> after_dashes;
  if (argc > 1 && std::string(argv[1]) == "profile")
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--") {
        parsed_argc = i;
        after_dashes.assign(argv + i + 1, argv + argc);
        break;
      }

  // CLI11 says "A subcommand is required" for an unknown one: name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> commands;
    for (const auto* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
    if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
      std::cerr << "speedlab: error: " << unknown_name_message("command", argv[1], commands)
                << "\nRun with --help for more information.\n";
      return exit_usage;
    }
  }

  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : exit_usage;
  }

  try {
    if (*list_cmd) return command_list(list);
    if (*run_cmd) {
      auto take = [&](const char* name, const number_rule& rule, auto& target) {
        const std::string& text = numbers[name];
        if (run_cmd->count(name) == 0) return;
        try {
          target = static_cast<typename std::decay_t<decltype(target)>::value_type>(checked_number(text, rule));
        } catch (const number_error& e) {
          throw config_error(fmt::format("<command line>: {} {}", name, e.what()));
        }
      };
      take("--timeout", limits::timeout_s, run.overrides.timeout_s);
      take("--max-time", limits::max_time_s, run.overrides.max_time_s);
      take("--min-time", limits::min_time_s, run.overrides.min_time_s);
      take("--min-samples", limits::samples, run.overrides.min_samples);
      take("--max-samples", limits::samples, run.overrides.max_samples);
      take("--counters-per-kernel", limits::counters_per_kernel, run.overrides.counters_per_kernel);
      take("--warmup", limits::warmup_runs, run.overrides.warmup_runs);
      take("--threads", limits::threads, run.overrides.threads);
      if (no_isolate) run.overrides.isolate = false;
      if (self_timing) run.overrides.self_timing = true;
      if (!profilers.empty()) run.overrides.profilers = profilers;
      if (!reports.empty()) run.overrides.reports = reports;
      return command_run(run);
    }
    if (*report_cmd) return command_report(report);
    if (*analyze_cmd) return command_analyze(analyze);
    if (*compare_cmd) return command_compare(compare);
    if (*calibrate_cmd) return command_calibrate(calibrate);
    if (*profile_cmd) {
      profile.program = profile_cmd->remaining();
      if (parsed_argc < argc) {
        if (!profile.program.empty())
          throw config_error("PROGRAM is given twice: put it after -- only (speedlab profile [options] -- PROGRAM [ARGS...])");
        profile.program = after_dashes;
      }
      return command_profile(profile);
    }
    if (*new_cmd) return command_new(new_project);
  } catch (const std::exception& e) {
    std::cerr << "speedlab: error: " << e.what() << '\n';
    return exit_usage;
  }
  return exit_usage;
}
