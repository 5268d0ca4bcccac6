#include "model/saved_records.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "model/file_problem.hpp"

namespace speedlab {
namespace {

using json = nlohmann::json;

// No count, time, size or rate in a saved run comes near this; a negative number that was
// written as unsigned (18446744073709551611 "dropped records") lands above it.
constexpr double absurd_limit = 9.2e18;

// No record speedlab writes nests deeper than a few levels; a line nested a million deep
// would otherwise exhaust the stack here.
constexpr int max_record_depth = 64;

// Every number in a saved record (times, sizes, counts, rates, ids, a CUDA call's return
// value) is finite, not negative and not absurd.
void check_numbers(const json& j, const std::string& path, int depth = 0) {
  if ((j.is_object() || j.is_array()) && depth >= max_record_depth) {
    const std::string field = path.substr(0, path.find_first_of(".[")); // "extra", not 64 levels of "[0]"
    throw bad_record(fmt::format("{}: lists or objects nested more than {} deep; no speedlab record is",
                                 field.empty() ? "the record" : field, max_record_depth));
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      check_numbers(it.value(), path.empty() ? it.key() : path + "." + it.key(), depth + 1);
    return;
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_numbers(j[i], fmt::format("{}[{}]", path, i), depth + 1);
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
    throw bad_record(fmt::format("{} has a field of the wrong type: {}", what, json_problem(e)));
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

// The parser's words for what it met, as a user would say them (the parser's own text
// quotes what it read, which may be anything).
std::string parse_problem_words(const std::string& full) {
  const std::string what = full.substr(0, full.find("; last read:")); // the rest quotes the input
  struct known {
    const char* says;
    const char* words;
  };
  static constexpr known table[] = {
      {"unexpected end of input", "truncated: it ends in the middle of a value"},
      {"missing closing quote", "truncated: a string has no closing quote"},
      {"control character", "a string holds a control character that must be escaped"},
      {"UTF-8", "not UTF-8 text"},
      {"surrogate", "a string holds a broken \\u escape"},
      {"'\\u' must be followed", "a string holds a broken \\u escape"},
      {"forbidden character after backslash", "a string holds an unknown escape after a backslash"},
      {"invalid number", "a malformed number"},
      {"invalid literal", "a bare word where a value should be (strings need quotes)"},
      {"expected end of input", "more text after the value"},
      {"while parsing object key", "an object key that is not a quoted string"},
      {"while parsing object separator", "a missing ':' between a key and its value"},
      {"while parsing object", "a missing ',' or '}' in an object"},
      {"while parsing array", "a missing ',' or ']' in a list"},
  };
  for (const auto& k : table)
    if (what.find(k.says) != std::string::npos) return k.words;
  return "an unexpected character";
}

} // namespace

std::string json_problem(const std::exception& e) {
  if (const auto* f = dynamic_cast<const std::filesystem::filesystem_error*>(&e)) return file_problem(*f);
  const std::string what = e.what();
  if (const auto* p = dynamic_cast<const json::parse_error*>(&e)) {
    int line = 0, column = 0;
    const auto at = what.find("at line ");
    if (at == std::string::npos || std::sscanf(what.c_str() + at, "at line %d, column %d", &line, &column) != 2)
      return fmt::format("not valid JSON at byte {}: {}", p->byte, parse_problem_words(what));
    const std::string place = line > 1 ? fmt::format("line {}, column {}", line, column) : fmt::format("column {}", column);
    return fmt::format("not valid JSON at {}: {}", place, parse_problem_words(what));
  }
  if (dynamic_cast<const json::exception*>(&e) && what.rfind("[json.exception.", 0) == 0)
    if (const auto end = what.find("] "); end != std::string::npos) return what.substr(end + 2);
  return what;
}

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
  if (const auto* s = p.sections.get<source::source_pass>()) check_source_pass(*s);
  return p;
}

bool extends_partial(const point_result& earlier, const point_result& later) {
  if (earlier.id != later.id || earlier.status != point_status::ok || earlier.rounds >= earlier.rounds_planned)
    return false;
  if (later.rounds_planned != earlier.rounds_planned || later.rounds <= earlier.rounds) return false;
  const auto prefix = [](const auto& a, const auto& b) {
    return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
  };
  return prefix(earlier.samples_ns, later.samples_ns) && prefix(earlier.sample_rounds, later.sample_rounds);
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
    throw bad_record(fmt::format("device trace has a field of the wrong type: {}", json_problem(e)));
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
