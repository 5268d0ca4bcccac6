#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "model/json_support.hpp"
#include "model/results.hpp"

namespace speedlab {

const char* to_string(point_status s) {
  switch (s) {
  case point_status::ok: return "ok";
  case point_status::invalid: return "invalid";
  case point_status::failed: return "failed";
  case point_status::crashed: return "crashed";
  case point_status::timeout: return "timeout";
  case point_status::skipped: return "skipped";
  }
  return "failed";
}

point_status point_status_from_string(const std::string& s) {
  for (auto st : {point_status::ok, point_status::invalid, point_status::failed, point_status::crashed,
                  point_status::timeout, point_status::skipped})
    if (s == to_string(st)) return st;
  throw std::invalid_argument("unknown point status '" + s + "'");
}

namespace {
// Parameters that size a problem, in order of preference, for sweeps and crossovers.
constexpr const char* guessed_size_params[] = {"n", "size", "M", "samples", "elements"};
} // namespace

std::vector<std::string> point_result::size_params() const {
  std::vector<std::string> out;
  for (const auto& name : size_axes)
    if (params.count(name)) out.push_back(name);
  if (!out.empty()) return out;
  for (const char* name : guessed_size_params)
    if (params.count(name)) return {name};
  return {};
}

std::string point_result::size_param() const {
  const auto axes = size_params();
  return axes.empty() ? std::string() : axes.front();
}

double point_result::size_value() const {
  const std::string p = size_param();
  return p.empty() ? 0.0 : std::strtod(params.at(p).c_str(), nullptr);
}

double point_result::size_product() const {
  const auto axes = size_params();
  if (axes.empty()) return 0;
  double product = 1;
  for (const auto& a : axes) product *= std::strtod(params.at(a).c_str(), nullptr);
  return product;
}

std::string point_result::params_key(bool without_size) const {
  return params_key_without(without_size ? std::vector<std::string>{size_param()} : std::vector<std::string>{});
}

std::string point_result::params_key_without(const std::vector<std::string>& skip) const {
  std::string key;
  for (const auto& [k, v] : params) {
    if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
    if (!key.empty()) key += ',';
    key += k + '=' + v;
  }
  return key;
}

std::vector<std::vector<double>> point_result::samples_by_round() const {
  if (sample_rounds.size() != samples_ns.size()) return samples_ns.empty() ? std::vector<std::vector<double>>{}
                                                                           : std::vector<std::vector<double>>{samples_ns};
  std::map<int, std::vector<double>> by;
  for (std::size_t i = 0; i < samples_ns.size(); ++i) by[sample_rounds[i]].push_back(samples_ns[i]);
  std::vector<std::vector<double>> out;
  for (auto& [round, s] : by) out.push_back(std::move(s));
  return out;
}

SPEEDLAB_JSON_FIELDS(summary_stats, count, median, mean, stddev, min, max, q1, q3, ci_low,
                                                ci_high)
SPEEDLAB_JSON_FIELDS(time_split, kernel, h2d, d2h, copy_other, memset, sync, api, host,
                                                wall_ns)
SPEEDLAB_JSON_FIELDS(validation_record, checked, ok, message, max_error)
SPEEDLAB_JSON_FIELDS(work_figures, bytes_read, bytes_written, flops, items,
                                                host_to_device_bytes, device_to_host_bytes, fp64)
SPEEDLAB_JSON_FIELDS(plugin_build, optimized, ndebug)
SPEEDLAB_JSON_FIELDS(run_info, speedlab_version, started_at, hostname, cpu_model, cpu_cores,
                                                gpu_name, command_line, suite, wall_s, profilers, notes, driver_version,
                                                threads, settings, plugin_builds, interleave_id,
                                                interleave_side, interleave_partner)

plugin_build plugin_build_from_flags(int flags) {
  plugin_build b;
  if (flags < 0 || !(flags & 4)) return b;
  b.optimized = (flags & 1) != 0;
  b.ndebug = (flags & 2) != 0;
  return b;
}

std::string plugin_build::words() const {
  if (!optimized) return "unknown";
  std::string s = *optimized ? "optimized" : "not optimized";
  if (ndebug) s += *ndebug ? ", NDEBUG" : ", assertions on";
  return s;
}

void to_json(nlohmann::json& j, const point_result& p) {
  j = nlohmann::json{{"id", p.id},
                     {"workload", p.workload},
                     {"variant", p.variant},
                     {"kind", p.kind ? to_string(*p.kind) : ""},
                     {"language", p.language},
                     {"params", p.params},
                     {"status", to_string(p.status)},
                     {"reason", p.reason},
                     {"expected_invalid", p.expected_invalid},
                     {"threads", p.threads},
                     {"samples_ns", p.samples_ns},
                     {"wall", p.wall},
                     {"phase_median_ns", p.phase_median_ns},
                     {"warmup_runs", p.warmup_runs},
                     {"stop_reason", p.stop_reason},
                     {"first_validation", p.first_validation},
                     {"last_validation", p.last_validation},
                     {"work", p.work},
                     {"cpu_utilization", p.cpu_utilization},
                     {"splits", p.splits},
                     {"split_median", p.split_median},
                     {"split_q1", p.split_q1},
                     {"split_q3", p.split_q3},
                     {"dropped_records", p.dropped_records},
                     {"profiler", p.profiler},
                     {"profiler_messages", p.profiler_messages},
                     {"trace_file", p.trace_file},
                     {"started_unix_s", p.started_unix_s},
                     {"duration_s", p.duration_s}};
  if (!p.sample_rounds.empty()) { // only results measured in rounds
    j["sample_rounds"] = p.sample_rounds;
    j["rounds"] = p.rounds;
    j["rounds_planned"] = p.rounds_planned;
  }
  if (p.other_busy_cores >= 0) { // only points the host backend measured the machine for
    j["other_busy_cores"] = p.other_busy_cores;
    j["other_busy_span_s"] = p.other_busy_span_s;
  }
  if (!p.self_timed_ns.empty()) j["self_timed_ns"] = p.self_timed_ns; // only runs with self_timing
  if (!p.size_axes.empty()) j["size_axes"] = p.size_axes;             // only plugins that declare them
  if (p.build.known()) j["plugin_build"] = p.build;                    // only plugins that export it
  p.sections.write(j); // only backends with a section of their own (counters, source)
}

void from_json(const nlohmann::json& j, point_result& p) {
  auto get = [&j](const char* key, auto& field) {
    if (auto it = j.find(key); it != j.end() && !it->is_null()) json_checked::assign(*it, key, field);
  };
  get("id", p.id);
  get("workload", p.workload);
  get("variant", p.variant);
  std::string kind;
  get("kind", kind);
  p.kind = kind.empty() ? std::nullopt : std::optional(parse_variant_kind(kind));
  get("language", p.language);
  get("params", p.params);
  std::string status = "ok";
  get("status", status);
  p.status = point_status_from_string(status);
  get("reason", p.reason);
  get("expected_invalid", p.expected_invalid);
  get("threads", p.threads);
  get("samples_ns", p.samples_ns);
  get("wall", p.wall);
  get("phase_median_ns", p.phase_median_ns);
  get("warmup_runs", p.warmup_runs);
  get("stop_reason", p.stop_reason);
  get("first_validation", p.first_validation);
  get("last_validation", p.last_validation);
  get("work", p.work);
  get("cpu_utilization", p.cpu_utilization);
  get("splits", p.splits);
  get("split_median", p.split_median);
  get("split_q1", p.split_q1);
  get("split_q3", p.split_q3);
  get("dropped_records", p.dropped_records);
  get("profiler", p.profiler);
  get("profiler_messages", p.profiler_messages);
  get("trace_file", p.trace_file);
  get("started_unix_s", p.started_unix_s);
  get("duration_s", p.duration_s);
  get("self_timed_ns", p.self_timed_ns);
  get("size_axes", p.size_axes);
  get("plugin_build", p.build);
  get("sample_rounds", p.sample_rounds);
  get("rounds", p.rounds);
  get("other_busy_cores", p.other_busy_cores);
  get("other_busy_span_s", p.other_busy_span_s);
  get("rounds_planned", p.rounds_planned);
  // A round list that does not match the samples cannot say where they came from: refused,
  // like any other malformed field, rather than guessed.
  if (!p.sample_rounds.empty() && p.sample_rounds.size() != p.samples_ns.size())
    throw std::invalid_argument("sample_rounds has " + std::to_string(p.sample_rounds.size()) + " entries for " +
                                std::to_string(p.samples_ns.size()) + " samples_ns");
  for (int r : p.sample_rounds)
    if (r < 0 || r >= p.rounds_planned)
      throw std::invalid_argument("sample_rounds: round " + std::to_string(r) + " outside 0.." +
                                  std::to_string(p.rounds_planned - 1));
  p.sections.read(j);
}

} // namespace speedlab
