// The suite: what to run and how to measure it, parsed from YAML (a file or the built-in
// default). Every error names where it is: file:line:column. Command-line overrides are in
// suite_overrides.hpp, the expansion into points in suite_plan.hpp.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "profilers/profiler.hpp" // profiler_options

namespace speedlab::app {

struct config_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where a value came from, for messages.
struct source_location {
  std::string file; // suite file, "<built-in default suite>" or "<command line>"
  int line = 0, column = 0; // 1-based; 0 when unknown
  std::string str() const;
};

struct measure_options {
  std::size_t warmup_runs = 1;
  double warmup_min_time_s = 0.0;
  std::size_t min_samples = 5;
  std::size_t max_samples = 1000;
  double min_time_s = 0.1;
  double max_time_s = 3.0;       // per point: a measurement always ends
  double target_noise = 0.02;    // relative half-width of the median's 95% CI
  // The stopping criterion by name (app/suite/stopping.hpp: noise, the default, or fixed);
  // the suite's `measure: stopping:`.
  std::string stopping = "noise";
  bool operator==(const measure_options&) const = default;
};

struct workload_request {
  std::string name;
  source_location where;
  std::vector<std::string> variants; // empty: all
  std::vector<source_location> variant_where;
  std::map<std::string, std::vector<std::string>> params; // expanded values
  std::map<std::string, source_location> param_where;
  std::optional<measure_options> measure;
};

// Rounds per point unless the suite or --rounds says otherwise: enough processes per side
// for `speedlab compare` to see run-to-run spread (docs/reports.md, "speedlab compare").
inline constexpr int default_rounds = 5;
// Rounds of a command-line suite (`speedlab run --workload W ...`, the built-in suite narrowed
// by -w) unless --rounds says otherwise: the built-in suite's `rounds: 1` is the quick start's
// first look, but two such runs are meant to be compared. 20: of 5, 10, 20 and 40 tried on the
// busy 2-core machine, the only one that found a serial variant 20% slower every time; the
// false alarms the drift between two runs causes stay (docs/reports.md, "Two runs at the
// defaults").
inline constexpr int command_line_suite_rounds = 20;

struct suite_config {
  std::string source = "<built-in default suite>";
  std::string output = "speedlab-out";
  bool isolate = true;
  double timeout_s = 60;        // per run (setup, or one repetition); the child is killed after it
  int threads = 0;              // 0: all cores
  measure_options measure;
  // Each point measured in this many rounds (separate processes when isolated), round-robin
  // over the plan (app/run/rounds.hpp); 1: one run per point, as before rounds existed.
  int rounds = default_rounds;
  std::vector<std::string> profilers{"host", "cupti"};
  std::vector<std::string> reports{"markdown", "html", "json", "csv", "perfetto", "nsys-sqlite"};
  std::string calibrate = "cached"; // off | cached | quick | full
  bool self_timing = false;         // variants that can time their own work do (run_context)
  profiling::profiler_options profiler_options; // the `cupti:` and `counters:` sections
  std::string python = "python3";   // interpreter of the Python variants (`python:`, --python)
  std::string python_chosen_by;     // "--python" or "the suite key python:"; empty: discovered
  std::vector<std::string> python_variants; // extra Python variant files (`python_variants:`)
  bool python_enabled = true;       // --no-python: C++ variants only
  std::vector<workload_request> workloads; // empty: every loaded workload at its defaults
};

// Bounds checked while parsing, before anything is expanded (YAML aliases can repeat a
// list without the file growing).
inline constexpr std::size_t max_workload_entries = 1000;
inline constexpr std::size_t max_suite_values = 1000000;             // parameter values in all
inline constexpr std::size_t max_suite_value_bytes = std::size_t{256} << 20;
inline constexpr std::size_t max_suite_file_bytes = std::size_t{16} << 20;

// Throws config_error unless `text` is UTF-8 text without control characters (tabs and line
// ends allowed), naming file:line:column of the first bad byte.
void check_text(const std::string& text, const std::string& file);

// Parses YAML text; `file` names it in messages. Throws config_error.
suite_config parse_suite(const std::string& yaml_text, const std::string& file);
suite_config load_suite_file(const std::string& path);
const char* default_suite_yaml();

// One measured point: a workload, a variant, and one value per parameter.
struct planned_point {
  std::string workload, variant;
  std::map<std::string, std::string> params;
  measure_options measure;
  std::vector<std::string> size_axes; // the workload's declared size axes (results carry them)
};

} // namespace speedlab::app
