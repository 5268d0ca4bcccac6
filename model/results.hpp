// What a run measured: one point_result per (workload, variant, parameter point), plus the
// facts about the run as a whole. This is what results.jsonl streams, what analysis reads
// and what reporters render. Times are nanoseconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/counters.hpp"
#include "model/result_sections.hpp"
#include "model/source_view.hpp"
#include "model/states.hpp"

namespace speedlab {

// The JSON schema version of results.jsonl / results.json (docs/results-schema.md).
inline constexpr int results_schema_version = 1;

struct summary_stats {
  std::size_t count = 0;
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0, q1 = 0, q3 = 0;
  double ci_low = 0, ci_high = 0; // 95% confidence interval of the median (order statistics)
  double relative_noise() const { return median > 0 ? (ci_high - ci_low) / (2 * median) : 0; }
};

// Where one repetition's wall time went. GPU-busy parts first (in precedence order: kernel,
// host->device, device->host, other copies, memset), then the GPU-idle time by what the
// calling host thread did: sync (inside a synchronizing CUDA call), api (inside another CUDA
// API call), host (its own code). The parts add up to wall_ns.
struct time_split {
  double kernel = 0, h2d = 0, d2h = 0, copy_other = 0, memset = 0;
  double sync = 0, api = 0, host = 0;
  double wall_ns = 0;
  double gpu_busy() const { return kernel + h2d + d2h + copy_other + memset; }
  double gpu_idle() const { return sync + api + host; }
};

enum class point_status { ok, invalid, failed, crashed, timeout, skipped };
const char* to_string(point_status s);
point_status point_status_from_string(const std::string& s);

struct validation_record {
  bool checked = false;
  bool ok = false;
  std::string message;
  double max_error = 0;
};

struct work_figures {
  double bytes_read = 0, bytes_written = 0, flops = 0, items = 0;
  double host_to_device_bytes = 0, device_to_host_bytes = 0;
  bool fp64 = false;
  double bytes() const { return bytes_read + bytes_written; }
};

// How a plugin's code was compiled, from the flags SPEEDLAB_REGISTER_WORKLOAD exports
// (speedlab_build_flags): with optimization (__OPTIMIZE__) and with NDEBUG. Unknown (both
// empty) for plugins built before the SDK exported it, and for Python variants. An
// unoptimized baseline inflates every speedup over it (issue 26).
struct plugin_build {
  std::optional<bool> optimized, ndebug;
  bool known() const { return optimized.has_value(); }
  bool unoptimized() const { return optimized.has_value() && !*optimized; }
  // "optimized, NDEBUG", "optimized, assertions on", "not optimized, assertions on", "unknown".
  std::string words() const;
  bool operator==(const plugin_build&) const = default;
};
// From the exported flags (bit 0 optimized, bit 1 NDEBUG, bit 2 set when recorded); a
// negative value (no symbol) is unknown.
plugin_build plugin_build_from_flags(int flags);

struct point_result {
  std::string id;                              // "workload/variant/n=1024,op=add"
  std::string workload, variant;
  // serial / threads / cuda; absent only in a record that names none (JSON "kind": "").
  std::optional<variant_kind> kind;
  std::string language = "c++";                // "python": a Python variant (app/python/python_variants.hpp)
  std::map<std::string, std::string> params;
  point_status status = point_status::ok;
  std::string reason;                          // why not ok (signal, exception, timeout, ...)
  bool expected_invalid = false;               // a variant that is wrong on purpose
  int threads = 1;

  std::vector<double> samples_ns;              // wall time of each measured repetition
  // Rounds: the point is measured in `rounds` separate runs (processes when isolated), spread
  // over the run, so drift between processes shows in its spread. sample_rounds[i] is the
  // round (0-based) samples_ns[i] came from; empty in results written before rounds (one
  // round). rounds_planned > rounds when the run was interrupted between a point's rounds.
  std::vector<int> sample_rounds;
  int rounds = 1, rounds_planned = 1;
  summary_stats wall;
  std::map<std::string, double> phase_median_ns; // setup, transfer_in, compute, transfer_out, validate, teardown
  std::size_t warmup_runs = 0;
  std::string stop_reason;                     // which stopping rule ended the measurement

  validation_record first_validation, last_validation;
  work_figures work;

  double cpu_utilization = 0;                  // median process CPU time / wall time
  // Cores other programs kept busy while the point's rounds ran (app/process/machine_load.hpp:
  // the machine's busy CPU time, a VM's steal time included, less speedlab's and the round's
  // process's own, over the rounds' wall time, weighted by it); -1 where not measured (no
  // /proc/stat, results from before it). other_busy_span_s: the seconds it covers.
  double other_busy_cores = -1;
  double other_busy_span_s = 0;
  std::vector<time_split> splits;              // one per repetition (with device data)
  std::optional<time_split> split_median;      // component-wise median over repetitions
  std::optional<time_split> split_q1, split_q3;
  std::uint64_t dropped_records = 0;
  std::string profiler;                        // backend that produced splits
  std::vector<std::string> profiler_messages;
  std::string trace_file;                      // relative to the output folder, if any
  // The variant's own timings (run_context::report_timing), one value per measured
  // repetition in samples_ns order; 0 where a repetition reported none. Runs with
  // self_timing only.
  std::map<std::string, std::vector<double>> self_timed_ns;
  // What backends recorded beyond the timings, one section each, keyed by the backend
  // (result_sections.hpp): the counters backend's pass (counters::counter_pass), the source
  // backend's (source::source_pass, from a process of its own after the point's); a section
  // is absent when not asked for or unavailable.
  result_sections sections;

  double started_unix_s = 0;
  double duration_s = 0;                       // whole point, setup to teardown

  // The parameters the plugin declared as size axes (param_spec::size_axis), in declaration
  // order; empty for plugins that declare none (and results written before axes existed).
  std::vector<std::string> size_axes;

  // How the plugin measured here was compiled (C++ variants of plugins that export it).
  plugin_build build;

  bool valid() const { return status == point_status::ok; }
  // The size axes of this point: the declared ones present in params, else the first of
  // n, size, M, samples, elements (plugins that declare none).
  std::vector<std::string> size_params() const;
  // The first size axis ("" when none), for sweeps along one size.
  std::string size_param() const;
  double size_value() const;
  // The product of every size axis (the number of elements of a 2-D problem); size_value()
  // with one axis.
  double size_product() const;
  std::string params_key(bool without_size = false) const;
  // The parameters as "k=v,..." without those named in `skip`.
  std::string params_key_without(const std::vector<std::string>& skip) const;
  // The samples of each round, in round order (one group for results without rounds);
  // rounds that kept no sample are left out.
  std::vector<std::vector<double>> samples_by_round() const;
};

struct run_info {
  std::string speedlab_version;
  std::string started_at;        // ISO-8601 UTC
  std::string hostname;
  std::string cpu_model;
  int cpu_cores = 0;
  std::string gpu_name;          // empty without a GPU
  std::string command_line;
  std::string suite;             // suite file or "built-in default"
  double wall_s = 0;
  std::vector<std::string> profilers;
  std::vector<std::string> notes; // things the user must know (profiler unavailable, ...)
  // What `speedlab compare` checks before comparing two runs (analysis/run_settings.hpp).
  // Empty / 0 in runs written before they were recorded.
  std::string driver_version;     // CUDA driver of the GPU ("12.4"); empty without one
  int threads = 0;                // threads of the threads variants (--threads, or all cores)
  std::map<std::string, std::string> settings;       // the suite's measurement settings, as text
  std::map<std::string, plugin_build> plugin_builds; // per workload: how its plugin was compiled
  // `speedlab compare --base-plugins A --new-plugins B` measures both sides in one process,
  // round k of a point on each side back to back, so compare can pair round k with round k.
  // Empty in runs measured on their own.
  std::string interleave_id;      // shared by the two sides of one interleaved measurement
  std::string interleave_side;    // "base" or "new"
  std::string interleave_partner; // the other side's folder, relative to this one ("../new")
};

void to_json(nlohmann::json& j, const summary_stats& s);
void from_json(const nlohmann::json& j, summary_stats& s);
void to_json(nlohmann::json& j, const time_split& s);
void from_json(const nlohmann::json& j, time_split& s);
void to_json(nlohmann::json& j, const validation_record& v);
void from_json(const nlohmann::json& j, validation_record& v);
void to_json(nlohmann::json& j, const work_figures& w);
void from_json(const nlohmann::json& j, work_figures& w);
void to_json(nlohmann::json& j, const point_result& p);
void from_json(const nlohmann::json& j, point_result& p);
void to_json(nlohmann::json& j, const plugin_build& b);
void from_json(const nlohmann::json& j, plugin_build& b);
void to_json(nlohmann::json& j, const run_info& r);
void from_json(const nlohmann::json& j, run_info& r);

} // namespace speedlab
