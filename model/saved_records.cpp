#include "model/saved_records.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

namespace speedlab {
namespace {

using json = nlohmann::json;

// No count, time, size or rate in a saved run comes near this; a negative number that was
// written as unsigned (18446744073709551611 "dropped records") lands above it.
constexpr double absurd_limit = 9.2e18;

// Every number in a saved record (times, sizes, counts, rates, ids, a CUDA call's return
// value) is finite, not negative and not absurd.
void check_numbers(const json& j, const std::string& path) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_numbers(it.value(), path.empty() ? it.key() : path + "." + it.key());
    return;
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_numbers(j[i], fmt::format("{}[{}]", path, i));
    return;
  }
  if (!j.is_number()) return;
  const double v = j.get<double>();
  if (!std::isfinite(v)) throw bad_record(fmt::format("{}: {} is not a finite number", path, j.dump()));
  if (v < 0) throw bad_record(fmt::format("{}: {} is negative", path, j.dump()));
  if (std::fabs(v) > absurd_limit) throw bad_record(fmt::format("{}: {} is absurd (above 9.2e18)", path, j.dump()));
}

void require_object(const json& j, const char* what) {
  if (!j.is_object()) throw bad_record(fmt::format("not a {} (a JSON object was expected, found {})", what, j.type_name()));
}

std::string require_string(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) throw bad_record(fmt::format("'{}' is missing", key));
  if (!it->is_string()) throw bad_record(fmt::format("'{}' must be a string, found {}", key, it->type_name()));
  if (it->get_ref<const std::string&>().empty()) throw bad_record(fmt::format("'{}' is empty", key));
  return it->get<std::string>();
}

// Type errors from the model's from_json, with the record kind in front.
template <class T>
T convert(const json& j, const char* what) {
  try {
    return j.get<T>();
  } catch (const json::exception& e) {
    throw bad_record(fmt::format("{} has a field of the wrong type: {}", what, e.what()));
  } catch (const std::invalid_argument& e) {
    throw bad_record(fmt::format("{}: {}", what, e.what()));
  }
}

template <class Records>
void check_intervals(const Records& records, const char* what) {
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].end < records[i].start)
      throw bad_record(fmt::format("{}[{}] ends ({}) before it starts ({})", what, i, records[i].end, records[i].start));
}

} // namespace

int check_schema_version(const json& record, int ours) {
  const auto it = record.find("schema_version");
  if (it == record.end()) return 1;
  if (!it->is_number() || it->get<double>() < 1 || !std::isfinite(it->get<double>()))
    throw bad_record(fmt::format("schema_version {} is not a positive number", it->dump()));
  const int major = static_cast<int>(std::floor(std::min(it->get<double>(), 1e9)));
  if (major > ours)
    throw newer_schema_error(fmt::format("written by a newer speedlab (schema version {}; this speedlab reads up to {}); "
                                         "use that version to read it",
                                         it->dump(), ours));
  return major;
}

std::string trace_path_problem(const std::string& trace_file) {
  const std::filesystem::path path(trace_file);
  const bool inside = !path.is_absolute() && !path.empty() && *path.begin() == "traces" &&
                      std::none_of(path.begin(), path.end(), [](const std::filesystem::path& part) { return part == ".."; });
  return inside ? std::string() : fmt::format("trace_file '{}' is not under traces/", trace_file);
}

// A share is a fraction of samples; a line's samples are part of its kernel's.
static void check_source_pass(const source::source_pass& s) {
  auto fraction = [](double v, const std::string& where) {
    if (v > 1.0 + 1e-9) throw bad_record(fmt::format("{}: share {} is above 1", where, v));
  };
  for (std::size_t k = 0; k < s.kernels.size(); ++k) {
    const auto& kernel = s.kernels[k];
    for (std::size_t i = 0; i < kernel.lines.size(); ++i) {
      const auto& line = kernel.lines[i];
      const std::string where = fmt::format("source.kernels[{}].lines[{}]", k, i);
      fraction(line.share, where);
      if (line.samples > kernel.samples)
        throw bad_record(fmt::format("{}: {} samples, more than its kernel's {}", where, line.samples, kernel.samples));
      for (std::size_t r = 0; r < line.stalls.size(); ++r) fraction(line.stalls[r].share, fmt::format("{}.stalls[{}]", where, r));
    }
  }
}

point_result read_point_record(const json& j) {
  require_object(j, "point record");
  check_schema_version(j, results_schema_version);
  for (const char* key : {"id", "workload", "variant"}) require_string(j, key);
  const std::string status = require_string(j, "status");
  try {
    point_status_from_string(status);
  } catch (const std::invalid_argument&) {
    throw bad_record(fmt::format("status '{}' is not one of ok, invalid, failed, crashed, timeout, skipped", status));
  }
  check_numbers(j, "");
  point_result p = convert<point_result>(j, "point record");
  if (!p.trace_file.empty())
    if (std::string why = trace_path_problem(p.trace_file); !why.empty()) throw bad_record(why);
  if (p.status == point_status::ok) {
    // A measured point has measurements; zero times would show as infinite rates.
    if (p.samples_ns.empty()) throw bad_record("status is ok but samples_ns is empty");
    for (std::size_t i = 0; i < p.samples_ns.size(); ++i)
      if (p.samples_ns[i] <= 0) throw bad_record(fmt::format("samples_ns[{}] is {}: a measured time must be positive", i, p.samples_ns[i]));
    if (p.wall.median <= 0) throw bad_record("status is ok but wall.median is not positive");
  }
  if (p.source) check_source_pass(*p.source);
  return p;
}

run_info read_run_record(const json& j) {
  require_object(j, "run record");
  check_schema_version(j, run_info_schema_version);
  check_numbers(j, "");
  return convert<run_info>(j, "run record");
}

trace::device_trace read_trace_record(const json& j) {
  require_object(j, "device trace");
  if (const auto it = j.find("version"); it != j.end()) {
    // A trace names its format "version"; the same rule as schema_version.
    json as_schema = json::object();
    as_schema["schema_version"] = *it;
    check_schema_version(as_schema, trace::trace_format_version);
  }
  check_numbers(j, "");
  trace::device_trace t;
  try {
    t = j.get<trace::device_trace>();
  } catch (const json::exception& e) {
    throw bad_record(fmt::format("device trace has a field of the wrong type: {}", e.what()));
  } catch (const std::runtime_error& e) { // a record of the wrong width, a bad string index
    throw bad_record(e.what());
  }
  check_intervals(t.kernels, "kernels");
  check_intervals(t.memcpys, "memcpys");
  check_intervals(t.memsets, "memsets");
  check_intervals(t.api_calls, "api_calls");
  check_intervals(t.syncs, "syncs");
  check_intervals(t.ranges, "ranges");
  check_intervals(t.overheads, "overheads");
  check_intervals(t.repetitions, "repetitions");
  return t;
}

device_model read_device_record(const json& j) {
  require_object(j, "device model");
  check_numbers(j, "");
  return convert<device_model>(j, "device model");
}

} // namespace speedlab
