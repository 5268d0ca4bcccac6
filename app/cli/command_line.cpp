// The speedlab program's commands as CLI11 sees them (app/cli/command_line.hpp). Each command's
// options live in state owned by its action, so they outlive parsing; the help texts and
// the order of the options are what --help prints.
#include "app/cli/command_line.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <type_traits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/man_page.hpp"
#include "app/compare/interleave.hpp"
#include "app/new_project/new_project.hpp"
#include "app/profile/profile_command.hpp"
#include "app/run/progress.hpp"
#include "app/suite/checked_number.hpp"
#include "app/suite/names.hpp"
#include "model/atomic_file.hpp"
#include "model/file_problem.hpp"
#include "model/profile_options.hpp"
#include "profilers/profiler.hpp"
#include "reports/reporter.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {

int command_position(int argc, const char* const* argv) {
  int i = 1;
  while (i < argc && argv[i][0] == '-') ++i; // the program's own options take no value
  return i;
}

command_line_input read_command_line(int argc, const char* const* argv) {
  command_line_input input;
  for (int i = 0; i < argc; ++i) input.text += (i ? " " : "") + std::string(argv[i]);
  input.parsed_argc = argc;
  const int command = command_position(argc, argv);
  if (command < argc && std::string(argv[command]) == "profile")
    for (int i = command + 1; i < argc; ++i)
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
  cmd->add_option("--plugin-path", options->plugin_paths, "Folder (or plugin file) to load plugins from; repeatable")
      ->type_name("DIR");
  cmd->add_option_function<std::string>(
         "--python",
         [options](const std::string& python) {
           options->python.interpreter = python;
           options->python.chosen_by = "--python";
         },
         "Python interpreter whose Python variants to list (default: python3 on the PATH, else /usr/bin/python3, "
         "whichever imports what each variant needs)")
      ->type_name("PATH");
  cmd->add_option("--python-variants", options->python.files, "File of Python variants to add; repeatable")
      ->type_name("FILE");
  cmd->add_flag(
      "--no-python", [options](std::int64_t) { options->python.enabled = false; }, "List the C++ variants only");
  return [options] { return command_list(*options); };
}

namespace {

// A number option's text as given (option name -> text): taken as text, so speedlab's syntax
// (1e3, 2^10) works, and checked by checked_number when the command runs: finite, in range.
using number_texts = std::map<std::string, std::string>;

// The type --help and the man pages show for a number option (CLI11 would say TEXT).
const char* number_type(const number_rule& rule) {
  const std::string unit = rule.unit;
  if (unit == "seconds") return "SECONDS";
  if (unit == "milliseconds") return "MS";
  if (unit == "percent") return "PERCENT";
  return rule.integer ? "INT" : "FLOAT";
}

CLI::Option* add_number_option(CLI::App* cmd, number_texts& texts, const char* name, const number_rule& rule,
                               const std::string& help) {
  return cmd->add_option(name, texts[name], help)->type_name(number_type(rule));
}

// A number option, when given, checked (NaN, infinities and values out of range refused).
std::optional<double> given_number(const CLI::App& cmd, const number_texts& texts, const char* name,
                                   const number_rule& rule) {
  if (cmd.count(name) == 0) return std::nullopt;
  try {
    return checked_number(texts.at(name), rule);
  } catch (const number_error& e) {
    throw config_error(fmt::format("<command line>: {} {}", name, e.what()));
  }
}

template <class T>
void take_number(const CLI::App& cmd, const number_texts& texts, const char* name, const number_rule& rule,
                 std::optional<T>& target) {
  if (const auto v = given_number(cmd, texts, name, rule)) target = static_cast<T>(*v);
}

template <class T>
void take_number(const CLI::App& cmd, const number_texts& texts, const char* name, const number_rule& rule, T& target) {
  if (const auto v = given_number(cmd, texts, name, rule)) target = static_cast<T>(*v);
}

// --out/--dir naming a file, or a path through one, said before anything runs (creating the
// folder would fail with "Not a directory").
void check_folder_option(const char* option, const std::string& dir) {
  if (dir.empty()) return;
  if (const auto file = file_in_the_way(dir))
    throw config_error(fmt::format("{} {}: '{}' is a file, not a folder; give a folder to write into", option,
                                   echo(dir, 1024), echo(file->string(), 1024))); // paths are long; 10 MB is not
}

// `run`'s options that are not in run_options as CLI11 fills them: numbers are taken as
// text (number_texts), flags only override when given.
struct run_command_line {
  run_options run;
  number_texts numbers;
  std::vector<std::string> profilers, reports;
  std::vector<std::string> variants_by_v; // -v, --variant's deprecated short name
  bool no_isolate = false;
  bool self_timing = false;
};

// The number options and flags into run_options (after parsing).
void take_run_settings(const CLI::App& cmd, run_command_line& line) {
  cli_overrides& o = line.run.overrides;
  const number_texts& n = line.numbers;
  if (!line.variants_by_v.empty()) {
    std::cerr << "speedlab: warning: -v is deprecated as the short name of --variant and goes in the next release "
                 "(elsewhere -v means verbose or version); write --variant\n";
    o.variants.insert(o.variants.end(), line.variants_by_v.begin(), line.variants_by_v.end());
  }
  take_number(cmd, n, "--timeout", limits::timeout_s, o.timeout_s);
  take_number(cmd, n, "--max-time", limits::max_time_s, o.max_time_s);
  take_number(cmd, n, "--min-time", limits::min_time_s, o.min_time_s);
  take_number(cmd, n, "--min-samples", limits::samples, o.min_samples);
  take_number(cmd, n, "--max-samples", limits::samples, o.max_samples);
  take_number(cmd, n, "--counters-per-kernel", limits::counters_per_kernel, o.counters_per_kernel);
  take_number(cmd, n, "--warmup", limits::warmup_runs, o.warmup_runs);
  take_number(cmd, n, "--threads", limits::threads, o.threads);
  take_number(cmd, n, "--rounds", limits::rounds, o.rounds);
  if (line.no_isolate) o.isolate = false;
  if (line.self_timing) o.self_timing = true;
  if (!line.profilers.empty()) o.profilers = line.profilers;
  if (!line.reports.empty()) o.reports = line.reports;
  if (o.output) check_folder_option("--out", *o.output);
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

void add_selection_options(CLI::App* cmd, run_command_line& line) {
  cli_overrides& o = line.run.overrides;
  cmd->add_option("--workload,-w", o.workloads, "Workload to run; repeatable")->type_name("NAME");
  cmd->add_option("--variant", o.variants, "Variant to run; repeatable")->type_name("NAME");
  // Up to 0.1.0, -v was --variant; git, cargo and nsys mean verbose or version by it. Kept for
  // one release, hidden, with a warning (take_run_settings).
  cmd->add_option("-v", line.variants_by_v, "Deprecated: --variant")->group("");
  cmd->add_option("--param,-p", o.params, "name=value or name=sweep (2^10..2^20, 1e3:1e6:10, a,b)")
      ->type_name("NAME=VALUE");
}

// The measurement settings `run` and `compare --base-plugins/--new-plugins` share; returns
// their names (compare refuses them when it only reads two folders).
std::vector<std::string> add_measure_options(CLI::App* cmd, run_command_line& line) {
  run_options& run = line.run;
  std::vector<std::string> names;
  auto number_option = [&](const char* name, const number_rule& rule, const char* help) {
    add_number_option(cmd, line.numbers, name, rule, help);
    names.push_back(name);
  };
  number_option("--timeout", limits::timeout_s, "Seconds one run may take before it is killed");
  number_option("--max-time", limits::max_time_s, "Most seconds of measurement per point");
  number_option("--min-time", limits::min_time_s, "Least seconds of measurement per point");
  number_option("--min-samples", limits::samples, "Least repetitions per point");
  number_option("--max-samples", limits::samples, "Most repetitions per point");
  number_option("--warmup", limits::warmup_runs, "Warm-up repetitions per point");
  number_option("--threads", limits::threads, "Threads for 'threads' variants (0: all cores)");
  number_option("--rounds", limits::rounds,
                "Rounds per point: separate runs spread over the suite, for compare's run-to-run spread "
                "(default 5; 20 for -w without a suite file; 10 when compare measures both sides)");
  number_option("--counters-per-kernel", limits::counters_per_kernel,
                "Launches profiled per distinct (kernel, grid, block) in the counters pass (K, default 2)");
  cmd->add_option("--profilers", line.profilers, "Profiler backends (" + backend_list() + ")")
      ->delimiter(',')
      ->type_name("NAMES");
  cmd->add_option("--metrics", run.overrides.metric_set,
                  "Counter metric set for the counters backend: default, full, or metric names joined by commas")
      ->type_name("SET");
  cmd->add_option("--reports", line.reports,
                  "Report formats: " + reports::format_list())
      ->delimiter(',')
      ->type_name("FORMATS");
  cmd->add_option("--calibrate", run.overrides.calibrate, "Device ceilings: off, cached, quick, full")
      ->check(CLI::IsMember({"off", "cached", "quick", "full"}))
      ->type_name("MODE");
  cmd->add_option("--python", run.overrides.python,
                  "Python interpreter of the Python variants (default: python3 on the PATH, else /usr/bin/python3, "
                  "whichever imports what each variant needs; a venv's or conda's works)")
      ->type_name("PATH");
  cmd->add_option("--python-variants", run.overrides.python_variants, "File of Python variants to add; repeatable")
      ->type_name("FILE");
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
  cmd->add_option("SUITE", run.suite_file, "Suite file (YAML)")->type_name("");
  add_selection_options(cmd, *line);
  cmd->add_option("--out,-o", run.overrides.output, "Output folder")->type_name("DIR");
  auto* force_flag =
      cmd->add_flag("--force", run.force, "Replace an earlier run in the output folder (otherwise refused)");
  cmd->add_flag("--resume", run.resume,
                "Keep the points already in the output folder and measure only the others (after a crash or Ctrl-C)")
      ->excludes(force_flag);
  cmd->add_option("--plugin-path", run.plugin_paths, "Folder (or plugin file) to load plugins from; repeatable")
      ->type_name("DIR");
  cmd->add_flag("--no-isolate", line->no_isolate, "Run every point in this process (a crash ends the suite)");
  cmd->add_option("--devices", run.overrides.devices,
                  "GPUs to run each point on, in turn: all, or indices such as 0,1 (default: device 0 only)")
      ->type_name("all|LIST");
  add_measure_options(cmd, *line);
  return [cmd, line] { return run_from_command_line(*cmd, *line); };
}

command_action add_report_command(CLI::App& app) {
  auto options = std::make_shared<report_options>();
  auto* cmd = app.add_subcommand("report", "Regenerate reports from a saved output folder (nothing is re-run)");
  cmd->add_option("DIR", options->dir, "Output folder of a run")->required()->type_name("");
  cmd->add_option("--format,-f", options->formats,
                  "Formats to write: " + reports::format_list() + "; default: all")
      ->delimiter(',')
      ->type_name("FORMATS");
  cmd->add_flag("--summary", options->summary,
                "A profile folder: write each rank folder's summary.json from its streams (no report), for a job's "
                "merge to read instead of the streams (docs/ranks.md)");
  cmd->add_flag("--force", options->force,
                "Rewrite results.json and the reports even when results.jsonl yields fewer points than results.json "
                "holds (refused otherwise: the last complete copy is kept)");
  return [options] { return command_report(*options); };
}

namespace {

// `compare`: two saved folders, or, with --base-plugins/--new-plugins, both sides measured now.
struct compare_command_line {
  compare_cli_options compare;
  number_texts numbers; // --threshold
  run_command_line measure;
  std::vector<std::string> measure_only; // options that only mean something when measuring
  std::vector<std::string> base_plugins, new_plugins;
};

int compare_from_command_line(const CLI::App& cmd, compare_command_line& line) {
  compare_cli_options& c = line.compare;
  take_number(cmd, line.numbers, "--threshold", limits::threshold_percent, c.threshold_percent);
  check_folder_option("--out", c.out_dir);
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
      "compare", "Compare two saved runs point by point (exit 0 no regression shown, 1 a regression, 2 bad input, "
                 "3 could not decide); with "
                 "--base-plugins and --new-plugins, measure both sides now, interleaved, and compare them round by "
                 "round");
  cmd->add_option("BASE", options.base_dir, "Output folder of the reference run (measuring: the suite file, optional)")
      ->type_name("");
  cmd->add_option("NEW", options.new_dir, "Output folder of the run to judge")->type_name("");
  cmd->add_option("--base-plugins", line->base_plugins,
                  "Measure now: plugin folder (or file) of the reference side, e.g. main's build/plugins; repeatable")
      ->allow_extra_args(false) // one folder per use: a suite file after it stays the suite
      ->type_name("DIR");
  cmd->add_option("--new-plugins", line->new_plugins,
                  "Measure now: plugin folder (or file) of the side to judge, e.g. the PR's build/plugins; repeatable")
      ->allow_extra_args(false)
      ->type_name("DIR");
  add_number_option(cmd, line->numbers, "--threshold", limits::threshold_percent,
                    "Smallest change in percent that matters: a point is slower or faster when beyond it and "
                    "significant over the whole comparison (default 5)");
  cmd->add_flag("--allow-missing", options.allow_missing,
                "Points ok in BASE and missing in NEW are listed, not a regression (exit 1 without it)");
  cmd->add_option("--format,-f", options.formats,
                  "md (or markdown), html, json (default md; several need --out; measuring: all three)")
      ->delimiter(',')
      ->check(CLI::IsMember({"md", "markdown", "html", "htm", "json"}))
      ->type_name("FORMATS");
  cmd->add_option("--out,-o", options.out_dir,
                  "Folder for compare.md/.html/.json (default: stdout; measuring: required, also holds base/ and new/)")
      ->type_name("DIR");
  cmd->add_flag(
      "--paired", options.paired,
      "Refuse unless BASE and NEW are the two sides of one interleaved measurement (compared round by round)");
  add_selection_options(cmd, line->measure);
  cmd->add_flag("--force", line->measure.run.force, "Measuring: replace earlier runs in OUT/base and OUT/new");
  cmd->add_flag("--no-isolate", line->measure.no_isolate, "Measuring: run every point in this process");
  line->measure_only = add_measure_options(cmd, line->measure);
  for (const char* n : {"--workload", "--variant", "-v", "--param", "--force", "--no-isolate"})
    line->measure_only.push_back(n);
  return [cmd, line] { return compare_from_command_line(*cmd, *line); };
}

command_action add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<analyze_options>();
  auto* cmd = app.add_subcommand("analyze", "Print the bottleneck analysis of a saved output folder");
  cmd->add_option("DIR", options->dir, "Output folder of a run")->required()->type_name("");
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
  cmd->add_option("NAME", options->name, "Plugin and workload name (lower-case letters, digits, '_', '-')")
      ->required()
      ->type_name("");
  cmd->add_flag("--cuda", options->cuda, "Add a CUDA variant (a .cu file using <speedlab/cuda.hpp>)");
  cmd->add_option("--dir", options->dir, "Folder to write (default ./NAME); must be new or empty")->type_name("DIR");
  return [options] {
    check_folder_option("--dir", options->dir);
    return command_new(*options);
  };
}

namespace {

std::string version_text() { return std::string("speedlab ") + SPEEDLAB_VERSION; }

// -V/--version and -q/--quiet, on the program and on each command (`speedlab run -V` works as
// `speedlab -V run`, as in git, cargo and nsys).
void add_program_flags(CLI::App& cmd) {
  cmd.set_version_flag("-V,--version", version_text(), "Print the version and exit");
  cmd.add_flag_callback(
      "-q,--quiet", [] { set_quiet(true); }, "No progress and no notes on stderr (warnings and errors still print)");
}

std::vector<const CLI::App*> visible_commands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const auto* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) out.push_back(sub);
  return out;
}

// Every name an option of `cmd` answers to, hidden ones left out (for "did you mean").
std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const auto* opt : cmd.get_options()) {
    if (opt->get_group().empty()) continue;
    for (const auto& n : opt->get_lnames()) names.push_back("--" + n);
    for (const auto& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

// "unknown option '--outt' (did you mean '--out'?)" for `word` (--name=value: the name).
std::string unknown_option(const CLI::App& cmd, const std::string& word) {
  const std::string name = word.substr(0, word.find('='));
  const std::string hint = did_you_mean(name, option_names(cmd));
  return fmt::format("unknown option '{}'{}", echo(name),
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
}

// What CLI11 calls "The following argument was not expected": an unknown option (with the
// closest name) or an argument too many. `at` becomes the command that did not expect it.
std::string extras_problem(const CLI::App& app, const CLI::App*& at) {
  std::vector<std::string> extras = at->remaining();
  if (extras.empty()) {
    at = &app; // an unknown option before the command
    extras = app.remaining();
  }
  if (extras.empty()) return "an argument was not expected";
  const std::string& word = extras.front();
  if (word.size() > 1 && word[0] == '-') {
    const std::string name = word.substr(0, word.find('='));
    const std::string hint = did_you_mean(name, option_names(*at));
    return fmt::format("unknown option '{}'{}", echo(name),
                       hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
  }
  return fmt::format("unexpected argument '{}'{}", echo(word),
                     extras.size() > 1 ? fmt::format(" (and {} more)", extras.size() - 1) : "");
}

std::string command_names(const CLI::App& app) {
  std::string out;
  for (const auto* sub : visible_commands(app)) out += (out.empty() ? "" : ", ") + sub->get_name();
  return out;
}

} // namespace

namespace {

// profile's options other than PROGRAM; the numbers are checked when it runs (take_profile_numbers).
void add_profile_options(CLI::App* cmd, profile_options& options, number_texts& numbers) {
  cmd->add_option("--out,-o", options.out, "Output folder (refused if not empty, unless --force)")->type_name("DIR");
  cmd->add_flag("--force", options.force, "Write into a non-empty folder, removing an earlier profile's streams");
  add_number_option(cmd, numbers, "--flush-interval", limits::flush_interval_ms,
                    fmt::format("Milliseconds between flushes of each process's stream (default {}): what a crash "
                                "can lose",
                                profile::default_flush_ms));
  cmd->add_option("--metrics", options.metrics,
                  "Hardware counters for the first K launches of each (kernel, grid, block), read by replaying "
                  "them (those launches run slower): default, full, dram, or metric names joined by commas")
      ->type_name("SET");
  add_number_option(cmd, numbers, "--counters-per-kernel", limits::profile_counters_per_kernel,
                    "Launches read per distinct (kernel, grid, block) with --metrics (K, default 2)");
  cmd->add_option("--calibrate", options.calibrate,
                  "Device ceilings for the kernels' roofs (as run): off, cached (default: this GPU's cached "
                  "calibration, else a quick one), quick, full")
      ->check(CLI::IsMember({"off", "cached", "quick", "full"}))
      ->type_name("MODE");
  cmd->add_flag("--source", options.source,
                "Source lines of the kernels (PC sampling, then SASS metrics, over the first launches; kernels "
                "built with -lineinfo get file:line): docs/analysis.md, source view");
  add_number_option(cmd, numbers, "--source-launches", limits::source_launches,
                    "With --source: launches sampled (N, default 100), then N more with SASS metrics (those run "
                    "slower)");
  cmd->add_flag_callback(
      "--no-python-lines", [&options] { options.python_lines = false; },
      "In a Python program, do not record the Python stack (the line of your code) at each CUDA call");
  cmd->add_flag("--full", options.full,
                "Record every CUDA call (CUPTI's API activity records) instead of the light default, which times "
                "launch calls in windows (20 ms of every 200 ms) and estimates the rest; costs more per launch");
  cmd->add_flag_callback(
      "--no-report", [&options] { options.report = false; },
      "Record only: write the streams and the program's facts, no report (`speedlab report DIR` analyzes them "
      "later, on any machine)");
}

void take_profile_numbers(const CLI::App& cmd, const number_texts& numbers, profile_options& options) {
  take_number(cmd, numbers, "--flush-interval", limits::flush_interval_ms, options.flush_interval_ms);
  take_number(cmd, numbers, "--counters-per-kernel", limits::profile_counters_per_kernel, options.counters_per_kernel);
  take_number(cmd, numbers, "--source-launches", limits::source_launches, options.source_launches);
  check_folder_option("--out", options.out);
}

} // namespace

command_action add_profile_command(CLI::App& app, const command_line_input& input) {
  auto options = std::make_shared<profile_options>();
  auto numbers = std::make_shared<number_texts>();
  options->command_line = input.text;
  auto* cmd = app.add_subcommand("profile", "Run an unmodified program (C++, CuPy, Numba, PyTorch...) with GPU "
                                            "tracing: speedlab profile [options] -- PROGRAM [ARGS...]");
  add_profile_options(cmd, *options, *numbers);
  // Everything from the first positional argument on (or after --) is PROGRAM's, untouched.
  cmd->prefix_command();
  cmd->footer("PROGRAM [ARGS...] follow the options, best after --; speedlab exits with PROGRAM's exit code.");
  return [cmd, options, numbers, after_dashes = input.program_after_dashes] {
    take_profile_numbers(*cmd, *numbers, *options);
    options->program = cmd->remaining();
    // prefix_command() hands an unknown option to PROGRAM; no program's name starts with '-'.
    if (!options->program.empty() && options->program.front().size() > 1 && options->program.front()[0] == '-')
      throw config_error(fmt::format("{}\n{}\nRun 'speedlab profile --help' for more.",
                                     unknown_option(*cmd, options->program.front()), usage_line(*cmd)));
    if (after_dashes) {
      if (!options->program.empty())
        throw config_error(
            "PROGRAM is given twice: put it after -- only (speedlab profile [options] -- PROGRAM [ARGS...])");
      options->program = *after_dashes;
    }
    return command_profile(*options);
  };
}

void describe_program(CLI::App& app) {
  app.name("speedlab");
  // The commands share this formatter: git's and cargo's word, not CLI11's "SUBCOMMAND".
  app.get_formatter()->label("SUBCOMMAND", "COMMAND");
  app.description("speedlab: runs workload variants (serial, threads, CUDA) over problem sizes, validates them,\n"
                  "profiles them (host timers, CUPTI, NVTX) and reports where the time goes and why.");
  app.require_subcommand(1);
  add_program_flags(app);
}

std::string usage_line(const CLI::App& cmd) {
  const std::string name = cmd.get_parent() ? "speedlab " + cmd.get_name() : std::string("speedlab");
  CLI::Formatter formatter;
  formatter.label("SUBCOMMAND", "COMMAND");
  std::string usage = formatter.make_usage(&cmd, name);
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  return usage;
}

std::string usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  std::string problem = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e))
    problem = extras_problem(app, at);
  else if (at == &app && dynamic_cast<const CLI::RequiredError*>(&e))
    problem = "a command is required: " + command_names(app);
  const std::string name = at == &app ? "speedlab" : "speedlab " + at->get_name();
  return fmt::format("{}: error: {}\n{}\nRun '{} --help' for more.\n", name, problem, usage_line(*at), name);
}

namespace {

struct man_command_line {
  std::string command, date, out;
};

// Every page into `dir`: speedlab.1 and speedlab-COMMAND.1 for each command (the build's).
int write_man_pages(const CLI::App& app, const man_command_line& line) {
  check_folder_option("--out", line.out);
  std::filesystem::create_directories(line.out);
  std::vector<std::string> commands = {""};
  for (const auto* sub : visible_commands(app)) commands.push_back(sub->get_name());
  for (const auto& command : commands) {
    const auto file = std::filesystem::path(line.out) / (command.empty() ? "speedlab.1" : "speedlab-" + command + ".1");
    write_file_atomically(file, man_page(app, command, line.date));
    std::cout << file.string() << '\n';
  }
  return 0;
}

} // namespace

command_action add_man_command(CLI::App& app) {
  auto line = std::make_shared<man_command_line>();
  auto* cmd = app.add_subcommand("help-man", "Print the manual page of speedlab or of COMMAND (roff), for the build");
  cmd->group(""); // hidden: the build runs it (cmake/SpeedlabPackage.cmake)
  cmd->add_option("COMMAND", line->command, "A command; none: the program's page");
  cmd->add_option("--date", line->date, "The date the pages show");
  cmd->add_option("--out", line->out, "Write every page into this folder instead");
  return [&app, line] {
    if (!line->out.empty()) return write_man_pages(app, *line);
    std::vector<std::string> names;
    for (const auto* sub : visible_commands(app)) names.push_back(sub->get_name());
    if (!line->command.empty() && std::find(names.begin(), names.end(), line->command) == names.end())
      throw config_error(unknown_name_message("command", line->command, names));
    std::cout << man_page(app, line->command, line->date);
    return 0;
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
  commands["help-man"] = add_man_command(app);
  for (auto* sub : app.get_subcommands({})) {
    add_program_flags(*sub);
    if (!sub->get_group().empty()) sub->group("Commands"); // --help's heading (CLI11: "Subcommands")
  }
  return commands;
}

std::optional<std::string> unknown_command(const CLI::App& app, int argc, const char* const* argv) {
  const int at = command_position(argc, argv);
  if (at >= argc) return std::nullopt;
  const std::string word = argv[at];
  for (const auto* sub : app.get_subcommands({}))
    if (sub->get_name() == word) return std::nullopt;
  std::vector<std::string> commands;
  for (const auto* sub : visible_commands(app)) commands.push_back(sub->get_name());
  return unknown_name_message("command", word, commands);
}

} // namespace speedlab::app
