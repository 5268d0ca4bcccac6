// The speedlab program's commands as CLI11 sees them (app/cli/command_line.hpp). Each command's
// options live in state owned by its action, so they outlive parsing; the help texts and
// the order of the options are what --help prints.
#include "app/cli/command_line.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/suite/checked_number.hpp"
#include "app/run/commands.hpp"
#include "app/compare/interleave.hpp"
#include "app/suite/names.hpp"
#include "app/new_project/new_project.hpp"
#include "app/profile/profile_command.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::app {

command_line_input read_command_line(int argc, const char* const* argv) {
  command_line_input input;
  for (int i = 0; i < argc; ++i) input.text += (i ? " " : "") + std::string(argv[i]);
  input.parsed_argc = argc;
  if (argc > 1 && std::string(argv[1]) == "profile")
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--") {
        input.parsed_argc = i;
        input.program_after_dashes.emplace(argv + i + 1, argv + argc);
        break;
      }
  return input;
}

command_action add_list_command(CLI::App& app) {
  auto options = std::make_shared<list_options>();
  auto* cmd = app.add_subcommand("list", "List workloads, variants, parameters and whether each variant can run here");
  cmd->add_flag("--json", options->json, "Machine-readable output");
  cmd->add_option("--plugin-path", options->plugin_paths, "Folder (or plugin file) to load plugins from; repeatable");
  cmd->add_option_function<std::string>(
      "--python",
      [options](const std::string& python) {
        options->python.interpreter = python;
        options->python.chosen_by = "--python";
      },
      "Python interpreter whose Python variants to list (default: python3 on the PATH, else /usr/bin/python3, "
      "whichever imports what each variant needs)");
  cmd->add_option("--python-variants", options->python.files, "File of Python variants to add; repeatable");
  cmd->add_flag(
      "--no-python", [options](std::int64_t) { options->python.enabled = false; }, "List the C++ variants only");
  return [options] { return command_list(*options); };
}

namespace {

// `run`'s options that are not in run_options as CLI11 fills them: numbers are taken as
// text and go through checked_number (the suite file's limits), flags only override when given.
struct run_command_line {
  run_options run;
  std::map<std::string, std::string> numbers; // option name -> its text
  std::vector<std::string> profilers, reports;
  bool no_isolate = false;
  bool self_timing = false;
};

// A number option of `run`, when given, checked and stored in `target`.
template <class T>
void take_number(const CLI::App& cmd, const run_command_line& line, const char* name, const number_rule& rule,
                 std::optional<T>& target) {
  if (cmd.count(name) == 0) return;
  try {
    target = static_cast<T>(checked_number(line.numbers.at(name), rule));
  } catch (const number_error& e) {
    throw config_error(fmt::format("<command line>: {} {}", name, e.what()));
  }
}

// The number options and flags into run_options (after parsing).
void take_run_settings(const CLI::App& cmd, run_command_line& line) {
  cli_overrides& o = line.run.overrides;
  take_number(cmd, line, "--timeout", limits::timeout_s, o.timeout_s);
  take_number(cmd, line, "--max-time", limits::max_time_s, o.max_time_s);
  take_number(cmd, line, "--min-time", limits::min_time_s, o.min_time_s);
  take_number(cmd, line, "--min-samples", limits::samples, o.min_samples);
  take_number(cmd, line, "--max-samples", limits::samples, o.max_samples);
  take_number(cmd, line, "--counters-per-kernel", limits::counters_per_kernel, o.counters_per_kernel);
  take_number(cmd, line, "--warmup", limits::warmup_runs, o.warmup_runs);
  take_number(cmd, line, "--threads", limits::threads, o.threads);
  take_number(cmd, line, "--rounds", limits::rounds, o.rounds);
  if (line.no_isolate) o.isolate = false;
  if (line.self_timing) o.self_timing = true;
  if (!line.profilers.empty()) o.profilers = line.profilers;
  if (!line.reports.empty()) o.reports = line.reports;
}

int run_from_command_line(const CLI::App& cmd, run_command_line& line) {
  take_run_settings(cmd, line);
  return command_run(line.run);
}

// The backends the registry knows (those this build left out say so when chosen): the help
// names no backend itself.
std::string backend_list() {
  std::string out;
  for (const auto& entry : profiling::profiler_registry()) out += (out.empty() ? "" : ", ") + entry.first;
  return out;
}

void add_selection_options(CLI::App* cmd, run_options& run) {
  cmd->add_option("--workload,-w", run.overrides.workloads, "Workload to run; repeatable");
  cmd->add_option("--variant,-v", run.overrides.variants, "Variant to run; repeatable");
  cmd->add_option("--param,-p", run.overrides.params, "name=value or name=sweep (2^10..2^20, 1e3:1e6:10, a,b)");
}

// The measurement settings `run` and `compare --base-plugins/--new-plugins` share; returns
// their names (compare refuses them when it only reads two folders).
std::vector<std::string> add_measure_options(CLI::App* cmd, run_command_line& line) {
  run_options& run = line.run;
  std::vector<std::string> names;
  auto number_option = [&](const char* name, const char* help) {
    cmd->add_option(name, line.numbers[name], help);
    names.push_back(name);
  };
  number_option("--timeout", "Seconds one run may take before it is killed");
  number_option("--max-time", "Most seconds of measurement per point");
  number_option("--min-time", "Least seconds of measurement per point");
  number_option("--min-samples", "Least repetitions per point");
  number_option("--max-samples", "Most repetitions per point");
  number_option("--warmup", "Warm-up repetitions per point");
  number_option("--threads", "Threads for 'threads' variants (0: all cores)");
  number_option("--rounds", "Rounds per point: separate runs spread over the suite, for compare's run-to-run spread "
                            "(default 5; 10 when compare measures both sides)");
  number_option("--counters-per-kernel",
                "Launches profiled per distinct (kernel, grid, block) in the counters pass (K, default 2)");
  cmd->add_option("--profilers", line.profilers, "Profiler backends (" + backend_list() + ")")->delimiter(',');
  cmd->add_option("--metrics", run.overrides.metric_set,
                  "Counter metric set for the counters backend: default, full, or metric names joined by commas");
  cmd->add_option("--reports", line.reports, "Report formats (markdown or md, html, json, csv, perfetto, nsys-sqlite or nsys)")
      ->delimiter(',');
  cmd->add_option("--calibrate", run.overrides.calibrate, "Device ceilings: off, cached, quick, full")
      ->check(CLI::IsMember({"off", "cached", "quick", "full"}));
  cmd->add_option("--python", run.overrides.python,
                  "Python interpreter of the Python variants (default: python3 on the PATH, else /usr/bin/python3, "
                  "whichever imports what each variant needs; a venv's or conda's works)");
  cmd->add_option("--python-variants", run.overrides.python_variants, "File of Python variants to add; repeatable");
  cmd->add_flag("--no-python", run.overrides.no_python, "Run the C++ variants only");
  cmd->add_flag("--self-timing", line.self_timing,
                "Variants that can time their own work (cudaEvents) do, beside the profiler's figures");
  for (const char* n : {"--profilers", "--metrics", "--reports", "--calibrate", "--python", "--python-variants",
                        "--no-python", "--self-timing"})
    names.push_back(n);
  return names;
}

} // namespace

command_action add_run_command(CLI::App& app, const command_line_input& input) {
  auto line = std::make_shared<run_command_line>();
  run_options& run = line->run;
  run.command_line = input.text;
  auto* cmd = app.add_subcommand("run", "Run a suite (the built-in default without SUITE.yaml)");
  cmd->add_option("suite", run.suite_file, "Suite file (YAML)");
  add_selection_options(cmd, run);
  cmd->add_option("--out,-o", run.overrides.output, "Output folder");
  auto* force_flag =
      cmd->add_flag("--force", run.force, "Replace an earlier run in the output folder (otherwise refused)");
  cmd->add_flag("--resume", run.resume,
                "Keep the points already in the output folder and measure only the others (after a crash or Ctrl-C)")
      ->excludes(force_flag);
  cmd->add_option("--plugin-path", run.plugin_paths, "Folder (or plugin file) to load plugins from; repeatable");
  cmd->add_flag("--no-isolate", line->no_isolate, "Run every point in this process (a crash ends the suite)");
  cmd->add_option("--devices", run.overrides.devices,
                  "GPUs to run each point on, in turn: all, or indices such as 0,1 (default: device 0 only)");
  add_measure_options(cmd, *line);
  return [cmd, line] { return run_from_command_line(*cmd, *line); };
}

command_action add_report_command(CLI::App& app) {
  auto options = std::make_shared<report_options>();
  auto* cmd = app.add_subcommand("report", "Regenerate reports from a saved output folder (nothing is re-run)");
  cmd->add_option("dir", options->dir, "Output folder of a run")->required();
  cmd->add_option("--format,-f", options->formats, "Formats to write: markdown (md), html, json, csv, perfetto, nsys-sqlite (nsys); default: all")->delimiter(',');
  cmd->add_flag("--summary", options->summary,
                "A profile folder: write each rank folder's summary.json from its streams (no report), for a job's "
                "merge to read instead of the streams (docs/ranks.md)");
  return [options] { return command_report(*options); };
}

namespace {

// `compare`: two saved folders, or, with --base-plugins/--new-plugins, both sides measured now.
struct compare_command_line {
  compare_cli_options compare;
  run_command_line measure;
  std::vector<std::string> measure_only; // options that only mean something when measuring
  std::vector<std::string> base_plugins, new_plugins;
};

int compare_from_command_line(const CLI::App& cmd, compare_command_line& line) {
  compare_cli_options& c = line.compare;
  const bool measuring = cmd.count("--base-plugins") + cmd.count("--new-plugins") > 0;
  if (!measuring) {
    for (const auto& name : line.measure_only)
      if (cmd.count(name))
        throw config_error(fmt::format("{} is for measuring: give it with --base-plugins DIR --new-plugins DIR "
                                       "(comparing two saved folders measures nothing)",
                                       name));
    if (c.base_dir.empty() || c.new_dir.empty())
      throw config_error("compare needs two run folders, BASE and NEW (or --base-plugins DIR --new-plugins DIR to "
                         "measure both sides now)");
    return command_compare(c);
  }
  if (!c.new_dir.empty())
    throw config_error(fmt::format("with --base-plugins/--new-plugins compare measures both sides: give at most a "
                                   "suite file, not two folders ('{}', '{}')",
                                   c.base_dir, c.new_dir));
  take_run_settings(cmd, line.measure);
  interleave_options o;
  o.run = line.measure.run;
  if (!c.base_dir.empty()) o.run.suite_file = c.base_dir;
  o.base_plugins = line.base_plugins;
  o.new_plugins = line.new_plugins;
  o.compare = c;
  if (!cmd.count("--format")) o.compare.formats = {"md", "json", "html"};
  return command_compare_interleaved(o);
}

} // namespace

command_action add_compare_command(CLI::App& app, const command_line_input& input) {
  auto line = std::make_shared<compare_command_line>();
  compare_cli_options& options = line->compare;
  line->measure.run.command_line = input.text;
  auto* cmd = app.add_subcommand(
      "compare", "Compare two saved runs point by point (exit 1 on a clear regression beyond the threshold); with "
                 "--base-plugins and --new-plugins, measure both sides now, interleaved, and compare them round by "
                 "round");
  cmd->add_option("base", options.base_dir, "Output folder of the reference run (measuring: the suite file, optional)");
  cmd->add_option("new", options.new_dir, "Output folder of the run to judge");
  cmd->add_option("--base-plugins", line->base_plugins,
                  "Measure now: plugin folder (or file) of the reference side, e.g. main's build/plugins; repeatable")
      ->allow_extra_args(false); // one folder per use: a suite file after it stays the suite
  cmd->add_option("--new-plugins", line->new_plugins,
                  "Measure now: plugin folder (or file) of the side to judge, e.g. the PR's build/plugins; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--threshold", options.threshold_percent,
                  "Smallest change in percent that matters: a point is slower or faster when beyond it and "
                  "significant over the whole comparison (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--format,-f", options.formats,
                  "md (or markdown), html, json (default md; measuring: all three)")
      ->delimiter(',')
      ->check(CLI::IsMember({"md", "markdown", "html", "htm", "json"}));
  cmd->add_option("--out,-o", options.out_dir,
                  "Folder for compare.md/.html/.json (default: stdout; measuring: required, also holds base/ and new/)");
  cmd->add_flag("--paired", options.paired,
                "Refuse unless BASE and NEW are the two sides of one interleaved measurement (compared round by round)");
  add_selection_options(cmd, line->measure.run);
  cmd->add_flag("--force", line->measure.run.force, "Measuring: replace earlier runs in OUT/base and OUT/new");
  cmd->add_flag("--no-isolate", line->measure.no_isolate, "Measuring: run every point in this process");
  line->measure_only = add_measure_options(cmd, line->measure);
  for (const char* n : {"--workload", "--variant", "--param", "--force", "--no-isolate"}) line->measure_only.push_back(n);
  return [cmd, line] { return compare_from_command_line(*cmd, *line); };
}

command_action add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<analyze_options>();
  auto* cmd = app.add_subcommand("analyze", "Print the bottleneck analysis of a saved output folder");
  cmd->add_option("dir", options->dir, "Output folder of a run")->required();
  cmd->add_flag("--json", options->json, "Machine-readable output");
  return [options] { return command_analyze(*options); };
}

command_action add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<calibrate_options_cli>();
  auto* cmd = app.add_subcommand("calibrate", "Measure the device's and host's ceilings and cache them");
  cmd->add_flag("--full", options->full, "Longer, more precise measurement");
  cmd->add_flag("--json", options->json, "Machine-readable output");
  cmd->add_flag("--no-cache", options->no_cache, "Do not write the cache");
  return [options] { return command_calibrate(*options); };
}

command_action add_new_command(CLI::App& app) {
  auto options = std::make_shared<new_options>();
  auto* cmd = app.add_subcommand("new", "Write a ready out-of-tree plugin project (CMake, serial reference, "
                                        "validation, work model, suite, README)");
  cmd->add_option("name", options->name, "Plugin and workload name (lower-case letters, digits, '_', '-')")->required();
  cmd->add_flag("--cuda", options->cuda, "Add a CUDA variant (a .cu file using <speedlab/cuda.hpp>)");
  cmd->add_option("--dir", options->dir, "Folder to write (default ./NAME); must be new or empty");
  return [options] { return command_new(*options); };
}

command_action add_profile_command(CLI::App& app, const command_line_input& input) {
  auto options = std::make_shared<profile_options>();
  options->command_line = input.text;
  auto* cmd = app.add_subcommand("profile", "Run an unmodified program (C++, CuPy, Numba, PyTorch...) with GPU "
                                            "tracing: speedlab profile [options] -- PROGRAM [ARGS...]");
  cmd->add_option("--out,-o", options->out, "Output folder (refused if not empty, unless --force)");
  cmd->add_flag("--force", options->force, "Write into a non-empty folder, removing an earlier profile's streams");
  cmd->add_option("--flush-interval", options->flush_interval_ms,
                  fmt::format("Milliseconds between flushes of each process's stream (default {}): what a crash can "
                              "lose",
                              profile::default_flush_ms))
      ->check(CLI::Range(profile::min_flush_ms, profile::max_flush_ms));
  cmd->add_option("--metrics", options->metrics,
                  "Hardware counters for the first K launches of each (kernel, grid, block), read by replaying "
                  "them (those launches run slower): default, full, dram, or metric names joined by commas");
  cmd->add_option("--counters-per-kernel", options->counters_per_kernel,
                  "Launches read per distinct (kernel, grid, block) with --metrics (K, default 2)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  cmd->add_option("--calibrate", options->calibrate,
                  "Device ceilings for the kernels' roofs (as run): off, cached (default: this GPU's cached "
                  "calibration, else a quick one), quick, full")
      ->check(CLI::IsMember({"off", "cached", "quick", "full"}));
  cmd->add_flag("--source", options->source,
                "Source lines of the kernels (PC sampling, then SASS metrics, over the first launches; kernels "
                "built with -lineinfo get file:line): docs/analysis.md, source view");
  cmd->add_option("--source-launches", options->source_launches,
                  "With --source: launches sampled (N, default 100), then N more with SASS metrics (those run slower)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  // Everything from the first positional argument on (or after --) is PROGRAM's, untouched.
  cmd->prefix_command();
  cmd->footer("PROGRAM [ARGS...] follow the options, best after --; speedlab exits with PROGRAM's exit code.");
  return [cmd, options, after_dashes = input.program_after_dashes] {
    options->program = cmd->remaining();
    if (after_dashes) {
      if (!options->program.empty())
        throw config_error(
            "PROGRAM is given twice: put it after -- only (speedlab profile [options] -- PROGRAM [ARGS...])");
      options->program = *after_dashes;
    }
    return command_profile(*options);
  };
}

command_registry add_every_command(CLI::App& app, const command_line_input& input) {
  command_registry commands;
  commands["list"] = add_list_command(app);
  commands["run"] = add_run_command(app, input);
  commands["report"] = add_report_command(app);
  commands["compare"] = add_compare_command(app, input);
  commands["analyze"] = add_analyze_command(app);
  commands["calibrate"] = add_calibrate_command(app);
  commands["new"] = add_new_command(app);
  commands["profile"] = add_profile_command(app, input);
  return commands;
}

std::optional<std::string> unknown_command(const CLI::App& app, int argc, const char* const* argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  std::vector<std::string> commands;
  for (const auto* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  if (std::find(commands.begin(), commands.end(), argv[1]) != commands.end()) return std::nullopt;
  return unknown_name_message("command", argv[1], commands);
}

} // namespace speedlab::app
