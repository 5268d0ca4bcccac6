#include "app/suite/suite_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h> // YAML::DeepRecursion
#include <yaml-cpp/yaml.h>

#include "app/suite/checked_number.hpp"
#include "app/suite/names.hpp"
#include "app/suite/stopping.hpp"
#include "app/suite/sweep.hpp"

namespace speedlab::app {

std::string source_location::str() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

namespace {

source_location where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& message) {
  throw config_error(fmt::format("{}: {}", where(file, node).str(), message));
}

const char* type_name(const YAML::Node& n) {
  switch (n.Type()) {
  case YAML::NodeType::Null: return "nothing (null)";
  case YAML::NodeType::Scalar: return "a scalar";
  case YAML::NodeType::Sequence: return "a list";
  case YAML::NodeType::Map: return "a mapping";
  default: return "an undefined value";
  }
}

std::string scalar(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) fail(file, n, fmt::format("{} must be a single value, found {}", what, type_name(n)));
  // A quoted "\0" gives a NUL byte, which cuts a name or path short where the system reads it.
  if (n.Scalar().find('\0') != std::string::npos)
    fail(file, n, fmt::format("{} holds a NUL byte (\\0 in quotes), which no name or path can hold", what));
  return n.Scalar();
}

// A mapping with at most `max_keys` keys, each a plain name given once. yaml-cpp keeps
// the first of two equal keys silently; here both places are named.
void require_map(const std::string& file, const YAML::Node& n, const std::string& what,
                 std::size_t max_keys = 64) {
  if (!n.IsMap()) fail(file, n, fmt::format("{} must be a mapping, found {}", what, type_name(n)));
  if (n.size() > max_keys) fail(file, n, fmt::format("{} has {} keys; at most {} are allowed", what, n.size(), max_keys));
  std::map<std::string, source_location> seen;
  for (const auto& kv : n) {
    const std::string key = scalar(file, kv.first, "a key in " + what);
    auto [it, fresh] = seen.emplace(key, where(file, kv.first));
    if (!fresh)
      fail(file, kv.first, fmt::format("key '{}' appears twice in {} (first at {})", echo(key), what, it->second.str()));
  }
}

// Rejects keys that are not in `known`, with a did-you-mean.
void check_keys(const std::string& file, const YAML::Node& map, const std::vector<std::string>& known,
                const std::string& section) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string hint = did_you_mean(key, known);
    fail(file, kv.first,
         fmt::format("unknown key '{}' in {}{}; expected one of: {}", echo(key), section,
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), fmt::join(known, ", ")));
  }
}

double number(const std::string& file, const YAML::Node& n, const std::string& what, const number_rule& rule) {
  const std::string text = scalar(file, n, what);
  try {
    return checked_number(text, rule);
  } catch (const number_error& e) {
    fail(file, n, fmt::format("{} {}", what, e.what()));
  }
}

std::size_t count(const std::string& file, const YAML::Node& n, const std::string& what, const number_rule& rule) {
  return static_cast<std::size_t>(number(file, n, what, rule));
}

bool boolean(const std::string& file, const YAML::Node& n, const std::string& what) {
  const std::string s = scalar(file, n, what);
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(file, n, fmt::format("{} must be true or false, found '{}'", what, echo(s)));
}

std::vector<std::string> string_list(const std::string& file, const YAML::Node& n, const std::string& what) {
  std::vector<std::string> out;
  if (n.IsScalar()) return {scalar(file, n, what)};
  if (!n.IsSequence()) fail(file, n, fmt::format("{} must be a list of names, found {}", what, type_name(n)));
  if (n.size() > 64) fail(file, n, fmt::format("{} has {} entries; at most 64 are allowed", what, n.size()));
  for (const auto& item : n) out.push_back(scalar(file, item, what + " entry"));
  return out;
}

void parse_measure(const std::string& file, const YAML::Node& m, measure_options& out) {
  require_map(file, m, "'measure'");
  check_keys(file, m, {"min_samples", "max_samples", "min_time", "max_time", "target_noise", "stopping"}, "'measure'");
  if (m["min_samples"]) out.min_samples = count(file, m["min_samples"], "measure.min_samples", limits::samples);
  if (m["max_samples"]) out.max_samples = count(file, m["max_samples"], "measure.max_samples", limits::samples);
  if (m["min_time"]) out.min_time_s = number(file, m["min_time"], "measure.min_time", limits::min_time_s);
  if (m["max_time"]) out.max_time_s = number(file, m["max_time"], "measure.max_time", limits::max_time_s);
  if (m["target_noise"]) out.target_noise = number(file, m["target_noise"], "measure.target_noise", limits::target_noise);
  if (m["stopping"]) {
    out.stopping = scalar(file, m["stopping"], "measure.stopping");
    try {
      find_stopping_criterion(out.stopping);
    } catch (const config_error& e) {
      fail(file, m["stopping"], fmt::format("measure.stopping: {}", e.what()));
    }
  }
  if (out.min_samples > out.max_samples)
    fail(file, m, fmt::format("measure.min_samples ({}) is larger than measure.max_samples ({})", out.min_samples,
                              out.max_samples));
  if (out.min_time_s > out.max_time_s)
    fail(file, m, fmt::format("measure.min_time ({} s) is larger than measure.max_time ({} s)", out.min_time_s,
                              out.max_time_s));
}

// One of `choices`, or an error naming them.
std::string choice(const std::string& file, const YAML::Node& n, const std::string& what,
                   const std::vector<std::string>& choices) {
  const std::string v = scalar(file, n, what);
  if (std::find(choices.begin(), choices.end(), v) == choices.end())
    fail(file, n, fmt::format("{} must be one of {}; found '{}'", what, fmt::join(choices, ", "), echo(v)));
  return v;
}

// A profiler backend's section (profilers/options_section.hpp) over its YAML mapping: each
// key's messages name "<section>.<key>" and its place in the file.
class yaml_section_reader final : public profiling::section_reader {
public:
  yaml_section_reader(const std::string& file, const YAML::Node& node, std::string section)
      : m_file(file), m_node(node), m_section(std::move(section)) {}
  bool has(const std::string& key) const override { return static_cast<bool>(m_node[key]); }
  double number(const std::string& key, const profiling::number_bounds& bounds) override {
    return app::number(m_file, m_node[key], what(key), bounds);
  }
  bool boolean(const std::string& key) override { return app::boolean(m_file, m_node[key], what(key)); }
  std::string choice(const std::string& key, const std::vector<std::string>& choices) override {
    return app::choice(m_file, m_node[key], what(key), choices);
  }
  std::vector<std::string> names(const std::string& key) override { return string_list(m_file, m_node[key], what(key)); }
  [[noreturn]] void fail(const std::string& key, const std::string& problem) override {
    app::fail(m_file, key.empty() ? m_node : m_node[key], problem);
  }

private:
  std::string what(const std::string& key) const { return m_section + "." + key; }
  const std::string& m_file;
  const YAML::Node m_node; // const: operator[] only reads
  std::string m_section;
};

// The suite sections of the profiler backends that have one (`cupti:`, `counters:`).
void parse_backend_sections(const std::string& file, const YAML::Node& root, profiling::profiler_options& out) {
  for (const auto& [name, backend] : profiling::profiler_registry()) {
    const YAML::Node c = root[name];
    if (!backend.options || !c) continue;
    require_map(file, c, "'" + name + "'");
    check_keys(file, c, backend.options->keys, "'" + name + "'");
    yaml_section_reader reader(file, c, name);
    backend.options->read(reader, out);
  }
}

void parse_warmup(const std::string& file, const YAML::Node& w, measure_options& out) {
  if (w.IsScalar()) {
    out.warmup_runs = count(file, w, "warmup (runs)", limits::warmup_runs);
    return;
  }
  require_map(file, w, "'warmup'");
  check_keys(file, w, {"runs", "min_time"}, "'warmup'");
  if (w["runs"]) out.warmup_runs = count(file, w["runs"], "warmup.runs", limits::warmup_runs);
  if (w["min_time"]) out.warmup_min_time_s = number(file, w["min_time"], "warmup.min_time", limits::warmup_min_time_s);
}

// The values a suite may hold in all, counted while parsing so that a list repeated
// through YAML aliases is refused before it is expanded, not after memory ran out.
struct value_budget {
  std::size_t values = 0, bytes = 0;
  void add(const std::string& file, const YAML::Node& at, const std::vector<std::string>& more) {
    values += more.size();
    for (const auto& v : more) bytes += v.size() + sizeof(std::string);
    if (values > max_suite_values || bytes > max_suite_value_bytes)
      fail(file, at, fmt::format("the suite's parameter values exceed {} values or {} MiB in all; split it into "
                                 "several suites",
                                 max_suite_values, max_suite_value_bytes >> 20));
  }
};

std::vector<std::string> expand(const std::string& file, const YAML::Node& n, const std::string& param,
                                value_budget& budget) {
  std::vector<std::string> out;
  auto add = [&](const YAML::Node& item) {
    const std::string text = scalar(file, item, fmt::format("a value of parameter '{}'", echo(param)));
    std::vector<std::string> values;
    try {
      values = expand_sweep(text);
    } catch (const sweep_error& e) {
      fail(file, item, fmt::format("parameter '{}': {}", echo(param), e.what()));
    }
    if (out.size() + values.size() > max_sweep_points)
      fail(file, item, fmt::format("parameter '{}' has more than {} values", echo(param), max_sweep_points));
    budget.add(file, item, values);
    for (auto& v : values) out.push_back(std::move(v));
  };
  if (n.IsSequence()) {
    if (n.size() > max_sweep_points)
      fail(file, n, fmt::format("parameter '{}' lists {} values; at most {} are allowed", echo(param), n.size(),
                                max_sweep_points));
    for (const auto& item : n) add(item);
    if (out.empty()) fail(file, n, fmt::format("parameter '{}' has an empty list of values", echo(param)));
  } else {
    add(n);
  }
  return out;
}

workload_request parse_workload(const std::string& file, const YAML::Node& w, const measure_options& suite_measure,
                                value_budget& budget) {
  workload_request r;
  r.where = where(file, w);
  if (w.IsScalar()) {
    r.name = scalar(file, w, "workload name");
    return r;
  }
  require_map(file, w, "a workload entry");
  check_keys(file, w, {"name", "variants", "params", "measure", "warmup"}, "a workload entry");
  if (!w["name"]) fail(file, w, "a workload entry needs a 'name'");
  r.name = scalar(file, w["name"], "workload name");
  r.where = where(file, w["name"]);
  if (r.name.empty()) fail(file, w["name"], "the workload name is empty");
  if (const YAML::Node vs = w["variants"]) {
    if (vs.IsScalar()) {
      r.variants.push_back(scalar(file, vs, "a variant name"));
      r.variant_where.push_back(where(file, vs));
    } else if (vs.IsSequence()) {
      // An empty list would mean "all" by accident: say so instead.
      if (vs.size() == 0) fail(file, vs, "'variants' is an empty list; leave it out to run every variant");
      if (vs.size() > 256) fail(file, vs, fmt::format("'variants' has {} entries; at most 256 are allowed", vs.size()));
      for (const auto& v : vs) {
        r.variants.push_back(scalar(file, v, "a variant name"));
        r.variant_where.push_back(where(file, v));
      }
    } else {
      fail(file, vs, fmt::format("'variants' must be a list of names, found {}", type_name(vs)));
    }
  }
  if (const YAML::Node ps = w["params"]) {
    require_map(file, ps, "'params'");
    for (const auto& kv : ps) {
      const std::string name = scalar(file, kv.first, "a parameter name");
      r.params[name] = expand(file, kv.second, name, budget);
      r.param_where[name] = where(file, kv.first);
    }
  }
  if (w["measure"] || w["warmup"]) {
    measure_options m = suite_measure;
    if (w["warmup"]) parse_warmup(file, w["warmup"], m);
    if (w["measure"]) parse_measure(file, w["measure"], m);
    r.measure = m;
  }
  return r;
}

} // namespace

namespace {

// Where byte `at` of `text` is, as file:line:column.
std::string text_position(const std::string& text, std::size_t at, const std::string& file) {
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  const auto start = text.rfind('\n', at == 0 ? 0 : at - 1);
  const std::size_t column = start == std::string::npos || at == 0 ? at + 1 : at - start;
  return fmt::format("{}:{}:{}", file, line, column);
}

// The length of the UTF-8 sequence at `at`, or 0 where it is not UTF-8.
std::size_t utf8_length(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char c = byte(at);
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 && c >= 0xc2 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e && c <= 0xf4 ? 4 : 0;
  if (n == 0 || at + n > text.size()) return 0;
  for (std::size_t i = 1; i < n; ++i)
    if ((byte(at + i) >> 6) != 0x2) return 0;
  return n;
}

// Where `text` first has `limit` flow collections ([ or {) open, or npos: yaml-cpp reads a
// flow collection to its end before it notices the depth, so its mark is past the place.
std::size_t flow_too_deep_at(const std::string& text, int limit) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"') ++i;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n' || text[i - 1] == '\t')) {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '[' || c == '{') {
      if (++depth >= limit) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

} // namespace

// A suite is YAML text: UTF-8 without control characters. Anything else (a binary file,
// three NUL bytes, UTF-16) would otherwise read as an empty document, i.e. every workload.
void check_text(const std::string& text, const std::string& file) {
  if (text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff')))
    throw config_error(fmt::format("{}: the suite file is UTF-16 text; save it as UTF-8 (YAML)", file));
  for (std::size_t at = 0; at < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
      throw config_error(fmt::format("{}: the suite file is not text (byte 0x{:02x}{}); a suite is a YAML text file",
                                     text_position(text, at, file), c, c == 0 ? ", a NUL byte" : ", a control character"));
    const std::size_t n = utf8_length(text, at);
    if (n == 0)
      throw config_error(fmt::format("{}: the suite file is not UTF-8 text (byte 0x{:02x}); a suite is a YAML text "
                                     "file in UTF-8",
                                     text_position(text, at, file), c));
    at += n;
  }
}

suite_config parse_suite(const std::string& yaml_text, const std::string& file) {
  check_text(yaml_text, file);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message is "bad file".
    const std::size_t flow = flow_too_deep_at(yaml_text, e.depth());
    const std::string at = flow != std::string::npos ? text_position(yaml_text, flow, file)
                                                     : fmt::format("{}:{}:{}", file, e.mark.line + 1, e.mark.column + 1);
    throw config_error(fmt::format("{}: invalid YAML: lists or mappings nested more than {} deep (the most the "
                                   "reader takes; a suite needs a few levels)",
                                   at, e.depth() - 1));
  } catch (const YAML::Exception& e) {
    throw config_error(fmt::format("{}:{}:{}: invalid YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  suite_config s;
  s.source = file;
  if (root.IsNull()) return s; // an empty document: the defaults, every workload
  require_map(file, root, "the suite");
  std::vector<std::string> keys{"output",   "isolate", "timeout",     "threads", "rounds",          "warmup",
                                "measure",  "profilers", "reports", "calibrate", "self_timing", "python",
                                "python_variants", "workloads"};
  for (const auto& [name, backend] : profiling::profiler_registry())
    if (backend.options) keys.push_back(name); // each backend's own section
  check_keys(file, root, keys, "the suite");
  if (root["output"]) {
    s.output = scalar(file, root["output"], "output (a folder)");
    if (s.output.empty()) fail(file, root["output"], "output is an empty path; name a folder");
  }
  if (root["isolate"]) s.isolate = boolean(file, root["isolate"], "isolate");
  if (root["timeout"]) s.timeout_s = number(file, root["timeout"], "timeout", limits::timeout_s);
  if (root["threads"]) s.threads = static_cast<int>(count(file, root["threads"], "threads", limits::threads));
  if (root["rounds"]) s.rounds = static_cast<int>(count(file, root["rounds"], "rounds", limits::rounds));
  if (root["warmup"]) parse_warmup(file, root["warmup"], s.measure);
  if (root["measure"]) parse_measure(file, root["measure"], s.measure);
  if (root["profilers"]) s.profilers = string_list(file, root["profilers"], "profilers");
  if (root["reports"]) s.reports = string_list(file, root["reports"], "reports");
  if (root["self_timing"]) s.self_timing = boolean(file, root["self_timing"], "self_timing");
  parse_backend_sections(file, root, s.profiler_options);
  if (root["python"]) {
    s.python = scalar(file, root["python"], "python (the interpreter of the Python variants)");
    if (s.python.empty())
      fail(file, root["python"], "python is empty; name an interpreter, or leave it out to let speedlab pick one");
    s.python_chosen_by = "the suite key python:";
  }
  if (root["python_variants"]) {
    // Files of Python variants, relative to the suite file.
    const auto base = std::filesystem::path(file).parent_path();
    for (auto& f : string_list(file, root["python_variants"], "python_variants"))
      s.python_variants.push_back(std::filesystem::path(f).is_absolute() ? f : (base / f).string());
  }
  if (root["calibrate"]) s.calibrate = choice(file, root["calibrate"], "calibrate", {"off", "cached", "quick", "full"});
  if (const YAML::Node ws = root["workloads"]) {
    if (!ws.IsSequence()) fail(file, ws, fmt::format("'workloads' must be a list, found {}", type_name(ws)));
    // An empty list would silently mean every workload: it selects none, so say so.
    if (ws.size() == 0) fail(file, ws, "'workloads' is an empty list, which selects no workload; leave it out to run every workload");
    if (ws.size() > max_workload_entries)
      fail(file, ws, fmt::format("'workloads' has {} entries; at most {} are allowed", ws.size(), max_workload_entries));
    value_budget budget;
    for (const auto& w : ws) s.workloads.push_back(parse_workload(file, w, s.measure, budget));
  }
  return s;
}

suite_config load_suite_file(const std::string& path) {
  if (path.empty()) throw config_error("the suite file name is empty");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw config_error(fmt::format("{}: is a folder, not a suite file (a YAML file)", path));
  std::ifstream in(path);
  if (!in) throw config_error(fmt::format("{}: cannot open the suite file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() > max_suite_file_bytes)
    throw config_error(fmt::format("{}: the suite file has {} bytes; at most {} MiB are read", path, text.size(),
                                   max_suite_file_bytes >> 20));
  // Only blanks and comments would silently run the built-in suite's defaults.
  std::istringstream lines(text);
  std::string line;
  bool content = false;
  while (!content && std::getline(lines, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    content = first != std::string::npos && line[first] != '#';
  }
  if (!content)
    throw config_error(fmt::format("{}: the suite file is empty (run without a suite file for the built-in one)", path));
  return parse_suite(text, path);
}

} // namespace speedlab::app
