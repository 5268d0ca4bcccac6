#include "app/suite_config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/plugin_loader.hpp"
#include "app/sweep.hpp"

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

void require_map(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsMap()) fail(file, n, fmt::format("{} must be a mapping, found {}", what, type_name(n)));
}

// Rejects keys that are not in `known`, with a did-you-mean.
void check_keys(const std::string& file, const YAML::Node& map, const std::vector<std::string>& known,
                const std::string& section) {
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string hint = did_you_mean(key, known);
    fail(file, kv.first,
         fmt::format("unknown key '{}' in {}{}; expected one of: {}", key, section,
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), fmt::join(known, ", ")));
  }
}

std::string scalar(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) fail(file, n, fmt::format("{} must be a single value, found {}", what, type_name(n)));
  return n.Scalar();
}

double number(const std::string& file, const YAML::Node& n, const std::string& what, double min, double max) {
  const std::string text = scalar(file, n, what);
  double v = 0;
  try {
    v = parse_number(text);
  } catch (const sweep_error&) {
    fail(file, n, fmt::format("{} must be a number, found '{}'", what, text));
  }
  if (v < min || v > max) fail(file, n, fmt::format("{} must be between {} and {}, found {}", what, min, max, text));
  return v;
}

std::size_t count(const std::string& file, const YAML::Node& n, const std::string& what, double min, double max) {
  const double v = number(file, n, what, min, max);
  if (v != std::floor(v)) fail(file, n, fmt::format("{} must be a whole number, found {}", what, n.Scalar()));
  return static_cast<std::size_t>(v);
}

bool boolean(const std::string& file, const YAML::Node& n, const std::string& what) {
  const std::string s = scalar(file, n, what);
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(file, n, fmt::format("{} must be true or false, found '{}'", what, s));
}

std::vector<std::string> string_list(const std::string& file, const YAML::Node& n, const std::string& what) {
  std::vector<std::string> out;
  if (n.IsScalar()) return {n.Scalar()};
  if (!n.IsSequence()) fail(file, n, fmt::format("{} must be a list of names, found {}", what, type_name(n)));
  for (const auto& item : n) out.push_back(scalar(file, item, what + " entry"));
  return out;
}

void parse_measure(const std::string& file, const YAML::Node& m, measure_options& out) {
  require_map(file, m, "'measure'");
  check_keys(file, m, {"min_samples", "max_samples", "min_time", "max_time", "target_noise"}, "'measure'");
  if (m["min_samples"]) out.min_samples = count(file, m["min_samples"], "measure.min_samples", 1, 1e7);
  if (m["max_samples"]) out.max_samples = count(file, m["max_samples"], "measure.max_samples", 1, 1e7);
  if (m["min_time"]) out.min_time_s = number(file, m["min_time"], "measure.min_time (seconds)", 0, 3600);
  if (m["max_time"]) out.max_time_s = number(file, m["max_time"], "measure.max_time (seconds)", 0.001, 86400);
  if (m["target_noise"]) out.target_noise = number(file, m["target_noise"], "measure.target_noise", 0, 1);
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
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    fail(file, n, fmt::format("{} must be one of {}; found '{}'", what, list, v));
  }
  return v;
}

void parse_cupti(const std::string& file, const YAML::Node& c, profiling::profiler_options& out) {
  using opts = profiling::profiler_options;
  require_map(file, c, "'cupti'");
  check_keys(file, c, {"buffer_mib", "max_buffer_mib", "api_records", "launch_records", "clock", "driver_api"},
             "'cupti'");
  constexpr double mib = 1 << 20;
  if (c["buffer_mib"]) out.buffer_bytes = static_cast<std::size_t>(number(file, c["buffer_mib"], "cupti.buffer_mib", 0.004, 4096) * mib);
  if (c["max_buffer_mib"])
    out.max_buffer_bytes = static_cast<std::size_t>(number(file, c["max_buffer_mib"], "cupti.max_buffer_mib", 0.004, 65536) * mib);
  if (out.max_buffer_bytes < out.buffer_bytes)
    fail(file, c, "cupti.max_buffer_mib is smaller than cupti.buffer_mib");
  if (c["api_records"]) out.api_records = boolean(file, c["api_records"], "cupti.api_records");
  if (c["driver_api"]) out.driver_api = boolean(file, c["driver_api"], "cupti.driver_api");
  if (c["launch_records"]) {
    const std::string v = choice(file, c["launch_records"], "cupti.launch_records", {"activity", "callback", "none"});
    out.launches = v == "callback" ? opts::launch_mode::callback
                   : v == "none"   ? opts::launch_mode::none
                                   : opts::launch_mode::activity;
  }
  if (c["clock"])
    out.clock = choice(file, c["clock"], "cupti.clock", {"callback", "offset"}) == "offset" ? opts::clock_mode::offset
                                                                                             : opts::clock_mode::callback;
}

// `counters:` {metrics: default | full | [metric, ...], per_kernel: K}
void parse_counters(const std::string& file, const YAML::Node& c, profiling::profiler_options& out) {
  require_map(file, c, "'counters'");
  check_keys(file, c, {"metrics", "per_kernel"}, "'counters'");
  if (const YAML::Node m = c["metrics"]) {
    std::string set;
    if (m.IsSequence()) {
      for (const auto& name : string_list(file, m, "counters.metrics")) set += (set.empty() ? "" : ",") + name;
    } else {
      set = scalar(file, m, "counters.metrics");
    }
    try {
      counters::metric_set(set);
    } catch (const std::invalid_argument& e) {
      fail(file, m, fmt::format("counters.metrics: {}", e.what()));
    }
    out.metric_set = set;
  }
  if (c["per_kernel"]) out.counters_per_kernel = count(file, c["per_kernel"], "counters.per_kernel (launches)", 1, 1e6);
}

void parse_warmup(const std::string& file, const YAML::Node& w, measure_options& out) {
  if (w.IsScalar()) {
    out.warmup_runs = count(file, w, "warmup (runs)", 0, 1e6);
    return;
  }
  require_map(file, w, "'warmup'");
  check_keys(file, w, {"runs", "min_time"}, "'warmup'");
  if (w["runs"]) out.warmup_runs = count(file, w["runs"], "warmup.runs", 0, 1e6);
  if (w["min_time"]) out.warmup_min_time_s = number(file, w["min_time"], "warmup.min_time (seconds)", 0, 600);
}

std::vector<std::string> expand(const std::string& file, const YAML::Node& n, const std::string& param) {
  std::vector<std::string> out;
  auto add = [&](const YAML::Node& item) {
    const std::string text = scalar(file, item, fmt::format("a value of parameter '{}'", param));
    try {
      for (auto& v : expand_sweep(text)) out.push_back(std::move(v));
    } catch (const sweep_error& e) {
      fail(file, item, fmt::format("parameter '{}': {}", param, e.what()));
    }
  };
  if (n.IsSequence()) {
    for (const auto& item : n) add(item);
    if (out.empty()) fail(file, n, fmt::format("parameter '{}' has an empty list of values", param));
  } else {
    add(n);
  }
  return out;
}

} // namespace

suite_config parse_suite(const std::string& yaml_text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw config_error(fmt::format("{}:{}:{}: invalid YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  suite_config s;
  s.source = file;
  if (root.IsNull()) return s; // an empty file: the defaults, every workload
  require_map(file, root, "the suite");
  check_keys(file, root,
             {"output", "isolate", "timeout", "threads", "warmup", "measure", "profilers", "reports", "calibrate",
              "self_timing", "cupti", "counters", "workloads"},
             "the suite");
  if (root["output"]) s.output = scalar(file, root["output"], "output (a folder)");
  if (root["isolate"]) s.isolate = boolean(file, root["isolate"], "isolate");
  if (root["timeout"]) s.timeout_s = number(file, root["timeout"], "timeout (seconds per run)", 0.01, 86400);
  if (root["threads"]) s.threads = static_cast<int>(count(file, root["threads"], "threads", 0, 4096));
  if (root["warmup"]) parse_warmup(file, root["warmup"], s.measure);
  if (root["measure"]) parse_measure(file, root["measure"], s.measure);
  if (root["profilers"]) s.profilers = string_list(file, root["profilers"], "profilers");
  if (root["reports"]) s.reports = string_list(file, root["reports"], "reports");
  if (root["self_timing"]) s.self_timing = boolean(file, root["self_timing"], "self_timing");
  if (root["cupti"]) parse_cupti(file, root["cupti"], s.profiler_options);
  if (root["counters"]) parse_counters(file, root["counters"], s.profiler_options);
  if (root["calibrate"]) {
    s.calibrate = scalar(file, root["calibrate"], "calibrate");
    const std::vector<std::string> modes{"off", "cached", "quick", "full"};
    if (std::find(modes.begin(), modes.end(), s.calibrate) == modes.end())
      fail(file, root["calibrate"], fmt::format("calibrate must be one of off, cached, quick, full; found '{}'", s.calibrate));
  }
  if (const YAML::Node ws = root["workloads"]) {
    if (!ws.IsSequence()) fail(file, ws, fmt::format("'workloads' must be a list, found {}", type_name(ws)));
    for (const auto& w : ws) {
      workload_request r;
      r.where = where(file, w);
      if (w.IsScalar()) {
        r.name = w.Scalar();
        s.workloads.push_back(std::move(r));
        continue;
      }
      require_map(file, w, "a workload entry");
      check_keys(file, w, {"name", "variants", "params", "measure", "warmup"}, "a workload entry");
      if (!w["name"]) fail(file, w, "a workload entry needs a 'name'");
      r.name = scalar(file, w["name"], "workload name");
      r.where = where(file, w["name"]);
      if (const YAML::Node vs = w["variants"]) {
        if (vs.IsScalar()) {
          r.variants.push_back(vs.Scalar());
          r.variant_where.push_back(where(file, vs));
        } else if (vs.IsSequence()) {
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
          const std::string name = kv.first.as<std::string>();
          r.params[name] = expand(file, kv.second, name);
          r.param_where[name] = where(file, kv.first);
        }
      }
      if (w["measure"] || w["warmup"]) {
        measure_options m = s.measure;
        if (w["warmup"]) parse_warmup(file, w["warmup"], m);
        if (w["measure"]) parse_measure(file, w["measure"], m);
        r.measure = m;
      }
      s.workloads.push_back(std::move(r));
    }
  }
  return s;
}

suite_config load_suite_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw config_error(fmt::format("{}: cannot open the suite file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_suite(ss.str(), path);
}

void apply_overrides(suite_config& s, const cli_overrides& cli) {
  if (cli.output) s.output = *cli.output;
  if (cli.isolate) s.isolate = *cli.isolate;
  if (cli.timeout_s) s.timeout_s = *cli.timeout_s;
  if (cli.threads) s.threads = *cli.threads;
  if (cli.profilers) s.profilers = *cli.profilers;
  if (cli.reports) s.reports = *cli.reports;
  if (cli.calibrate) s.calibrate = *cli.calibrate;
  if (cli.self_timing) s.self_timing = *cli.self_timing;
  if (cli.metric_set) {
    try {
      counters::metric_set(*cli.metric_set);
    } catch (const std::invalid_argument& e) {
      throw config_error(fmt::format("<command line>: --metrics: {}", e.what()));
    }
    s.profiler_options.metric_set = *cli.metric_set;
  }
  if (cli.counters_per_kernel) s.profiler_options.counters_per_kernel = *cli.counters_per_kernel;
  auto apply_measure = [&](measure_options& m) {
    if (cli.max_time_s) m.max_time_s = *cli.max_time_s;
    if (cli.min_time_s) m.min_time_s = *cli.min_time_s;
    if (cli.min_samples) m.min_samples = *cli.min_samples;
    if (cli.max_samples) m.max_samples = *cli.max_samples;
    if (cli.warmup_runs) m.warmup_runs = *cli.warmup_runs;
    if (m.min_samples > m.max_samples) m.max_samples = m.min_samples;
    if (m.min_time_s > m.max_time_s) m.min_time_s = m.max_time_s;
  };
  apply_measure(s.measure);
  for (auto& w : s.workloads)
    if (w.measure) apply_measure(*w.measure);

  const source_location cmd{"<command line>", 0, 0};
  if (!cli.workloads.empty()) {
    // --workload selects (and keeps the suite's settings for those it already names).
    std::vector<workload_request> selected;
    for (const auto& name : cli.workloads) {
      auto it = std::find_if(s.workloads.begin(), s.workloads.end(), [&](const auto& w) { return w.name == name; });
      if (it != s.workloads.end()) selected.push_back(*it);
      else selected.push_back(workload_request{name, {"<command line>", 0, 0}, {}, {}, {}, {}, {}});
    }
    s.workloads = std::move(selected);
  }
  if (!cli.variants.empty()) {
    if (s.workloads.empty()) throw config_error("<command line>: --variant needs workloads (a suite or --workload)");
    for (auto& w : s.workloads) {
      w.variants = cli.variants;
      w.variant_where.assign(cli.variants.size(), cmd);
    }
  }
  for (const auto& p : cli.params) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      throw config_error(fmt::format("<command line>: --param '{}' must look like name=value or name=2^10..2^20", p));
    const std::string name = p.substr(0, eq);
    std::vector<std::string> values;
    try {
      values = expand_sweep(p.substr(eq + 1));
    } catch (const sweep_error& e) {
      throw config_error(fmt::format("<command line>: --param {}: {}", name, e.what()));
    }
    if (s.workloads.empty()) throw config_error("<command line>: --param needs workloads (a suite or --workload)");
    for (auto& w : s.workloads) {
      w.params[name] = values;
      w.param_where[name] = cmd;
    }
  }
}

namespace {

std::vector<std::string> names_of(const plugin_registry& reg) {
  std::vector<std::string> out;
  for (const auto& [name, _] : reg.workloads()) out.push_back(name);
  return out;
}

std::string unknown_name_message(const std::string& what, const std::string& wrong,
                                 const std::vector<std::string>& valid) {
  const std::string hint = did_you_mean(wrong, valid);
  return fmt::format("unknown {} '{}'{}; valid {}s: {}", what, wrong,
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), what,
                     valid.empty() ? std::string("(none loaded)") : fmt::format("{}", fmt::join(valid, ", ")));
}

void check_value(const param_spec& spec, const std::string& value, const source_location& loc,
                 const std::string& workload) {
  auto bad = [&](const std::string& why) {
    throw config_error(fmt::format("{}: workload '{}' parameter '{}' = '{}': {}", loc.str(), workload, spec.name,
                                   value, why));
  };
  if (spec.type == param_type::text) {
    if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
      bad(fmt::format("expected one of {}", fmt::join(spec.choices, ", ")));
    return;
  }
  double v = 0;
  try {
    v = parse_number(value);
  } catch (const sweep_error&) {
    bad(spec.type == param_type::integer ? "expected an integer" : "expected a number");
  }
  if (spec.type == param_type::integer && v != std::floor(v)) bad("expected an integer");
  if (spec.min_value && v < *spec.min_value) bad(fmt::format("below the minimum {}", format_number(*spec.min_value)));
  if (spec.max_value && v > *spec.max_value) bad(fmt::format("above the maximum {}", format_number(*spec.max_value)));
}

} // namespace

std::vector<planned_point> plan_points(const suite_config& suite, const plugin_registry& registry) {
  std::vector<workload_request> requests = suite.workloads;
  if (requests.empty())
    for (const auto& name : names_of(registry)) requests.push_back(workload_request{name, {suite.source, 0, 0}, {}, {}, {}, {}, {}});

  std::vector<planned_point> points;
  for (const auto& req : requests) {
    const loaded_workload* w = registry.find(req.name);
    if (!w) throw config_error(fmt::format("{}: {}", req.where.str(), unknown_name_message("workload", req.name, names_of(registry))));

    std::vector<std::string> valid_variants;
    for (const auto& v : w->info.variants) valid_variants.push_back(v.name);
    std::vector<std::string> variants = req.variants.empty() ? valid_variants : req.variants;
    for (std::size_t i = 0; i < req.variants.size(); ++i)
      if (!w->find_variant(req.variants[i]))
        throw config_error(fmt::format("{}: workload '{}': {}", req.variant_where[i].str(), req.name,
                                       unknown_name_message("variant", req.variants[i], valid_variants)));

    // Parameter values: the request's, else the declared default.
    std::vector<std::string> valid_params;
    for (const auto& p : w->info.parameters) valid_params.push_back(p.name);
    for (const auto& [name, _] : req.params)
      if (std::find(valid_params.begin(), valid_params.end(), name) == valid_params.end())
        throw config_error(fmt::format("{}: workload '{}': {}", req.param_where.at(name).str(), req.name,
                                       unknown_name_message("parameter", name, valid_params)));
    std::vector<std::pair<std::string, std::vector<std::string>>> axes;
    for (const auto& spec : w->info.parameters) {
      std::vector<std::string> values;
      source_location loc{suite.source, 0, 0};
      if (auto it = req.params.find(spec.name); it != req.params.end()) {
        values = it->second;
        loc = req.param_where.at(spec.name);
      } else {
        values = {spec.default_value};
        loc = {"<default of plugin " + w->file.filename().string() + ">", 0, 0};
      }
      for (auto& v : values) {
        // Integers are stored without exponent or fraction so ids are stable.
        if (spec.type != param_type::text) {
          try {
            v = format_number(parse_number(v));
          } catch (const sweep_error&) {
          }
        }
        check_value(spec, v, loc, req.name);
      }
      axes.emplace_back(spec.name, std::move(values));
    }

    // Cartesian product, variants outermost so a variant's sweep stays together.
    std::size_t total = 1;
    for (const auto& [_, values] : axes) total *= values.size();
    if (total * variants.size() > 100000)
      throw config_error(fmt::format("{}: workload '{}' expands to {} points; at most 100000 are allowed",
                                     req.where.str(), req.name, total * variants.size()));
    for (const auto& variant : variants) {
      for (std::size_t index = 0; index < total; ++index) {
        planned_point p{req.name, variant, {}, req.measure.value_or(suite.measure)};
        std::size_t rest = index;
        for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
          p.params[it->first] = it->second[rest % it->second.size()];
          rest /= it->second.size();
        }
        points.push_back(std::move(p));
      }
    }
  }
  return points;
}

} // namespace speedlab::app
