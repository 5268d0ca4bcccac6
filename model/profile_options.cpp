#include "model/profile_options.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

namespace speedlab::profile {
namespace {

constexpr std::array<const char*, option_count> names = {"SPEEDLAB_PROFILE_DIR",
                                                         "SPEEDLAB_PROFILE_FLUSH_MS",
                                                         "SPEEDLAB_PROFILE_FORCE_AFTER_MS",
                                                         "SPEEDLAB_PROFILE_MAX_BUFFER_MIB",
                                                         "SPEEDLAB_PROFILE_BUFFER_KIB",
                                                         "SPEEDLAB_PROFILE_LAUNCH_CALLS",
                                                         "SPEEDLAB_PROFILE_LAUNCH_SAMPLE",
                                                         "SPEEDLAB_PROFILE_CLOCK",
                                                         "SPEEDLAB_PROFILE_RUNTIME_API",
                                                         "SPEEDLAB_PROFILE_DRIVER_API",
                                                         "SPEEDLAB_PROFILE_API",
                                                         "SPEEDLAB_PROFILE_API_SOURCE",
                                                         "SPEEDLAB_PROFILE_SYNC_RECORDS",
                                                         "SPEEDLAB_PROFILE_SOURCE_LAUNCHES",
                                                         "SPEEDLAB_PROFILE_METRICS",
                                                         "SPEEDLAB_PROFILE_METRIC_SET",
                                                         "SPEEDLAB_PROFILE_COUNTERS_K",
                                                         "SPEEDLAB_PROFILE_SIGNAL_WAIT_MS",
                                                         "SPEEDLAB_PROFILE_SIGNALS",
                                                         "SPEEDLAB_PROFILE_NVTX",
                                                         "SPEEDLAB_PROFILE_PYTHON_LINES",
                                                         "SPEEDLAB_PROFILE_PYTHON_DEPTH",
                                                         "SPEEDLAB_PROFILE_PYTHON_LIBRARY_PATHS",
                                                         "SPEEDLAB_PROFILE_PYTHON_USER_PATHS"};
static_assert(static_cast<std::size_t>(option::python_user_paths) + 1 == option_count);
constexpr std::string_view prefix = "SPEEDLAB_PROFILE_";

// A setting's key in the block: its variable's name without the prefix, lower case
// ("flush_ms" for SPEEDLAB_PROFILE_FLUSH_MS).
std::string block_key(option o) {
  std::string key(variable_name(o) + prefix.size());
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

// A whole number and nothing else (strict), or its leading digits (lenient: strtol's reading,
// which the library has always taken for these settings).
std::optional<long long> strict_number(const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}
long long lenient_number(const std::string& text) { return std::strtoll(text.c_str(), nullptr, 10); }

std::string quoted(option o, const std::string& value) { return std::string(variable_name(o)) + "='" + value + "'"; }

std::vector<std::string> split_names(const std::string& list, char separator = ',') {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(separator, at), list.size());
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

std::string joined(const std::vector<std::string>& v, char separator = ',') {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : std::string(1, separator)) + x;
  return s;
}

// The library's numbers: the flush interval, buffers, counters and windows.
void parse_numbers(const std::map<option, std::string>& v, parsed_injection_options& out) {
  injection_options& o = out.options;
  auto text = [&](option k) -> const std::string* {
    auto it = v.find(k);
    return it == v.end() ? nullptr : &it->second;
  };
  if (const auto* t = text(option::flush_ms)) {
    if (const long long n = lenient_number(*t); valid_flush_ms(n)) o.flush_ms = static_cast<std::uint32_t>(n);
    else
      out.problems[option::flush_ms] =
          quoted(option::flush_ms, *t) + " is not 1 to 3600000 ms: " + std::to_string(default_flush_ms) + " ms is used";
  }
  if (const auto* t = text(option::force_after_ms)) {
    if (const auto n = strict_number(*t); n && *n >= 0)
      o.cupti.force_after_ms = static_cast<std::uint64_t>(*n);
    else
      out.problems[option::force_after_ms] = quoted(option::force_after_ms, *t) + " is not a whole number of milliseconds: " +
                                             std::to_string(o.force_after_ms_or_default()) + " ms is used";
  }
  if (const auto* t = text(option::max_buffer_mib)) {
    if (const long long n = lenient_number(*t); n > 0)
      o.cupti.max_buffer_mib = static_cast<std::size_t>(n);
    else out.problems[option::max_buffer_mib] = quoted(option::max_buffer_mib, *t) + " is not a positive number: the default is used";
  }
  if (const auto* t = text(option::buffer_kib)) {
    const long long n = lenient_number(*t);
    if (n >= static_cast<long long>(min_buffer_kib) && n <= static_cast<long long>(max_buffer_kib))
      o.cupti.buffer_kib = static_cast<std::size_t>(n);
    else out.problems[option::buffer_kib] = quoted(option::buffer_kib, *t) + " is not 64 to 1048576: the default is used";
  }
  if (const auto* t = text(option::source_launches)) {
    if (const auto n = strict_number(*t); n && *n > 0)
      o.source.launches = static_cast<std::uint64_t>(*n);
    else out.problems[option::source_launches] = quoted(option::source_launches, *t) + " is not a positive whole number";
  }
  if (const auto* t = text(option::counters_k)) {
    if (const long long n = lenient_number(*t); n > 0)
      o.counters.per_kernel = static_cast<std::size_t>(n);
    else out.problems[option::counters_k] = quoted(option::counters_k, *t) + " is not a positive number: the default is used";
  }
  if (const auto* t = text(option::python_depth)) {
    if (const auto n = strict_number(*t); n && *n > 0 && *n <= static_cast<long long>(max_python_depth))
      o.python.max_depth = static_cast<std::size_t>(*n);
    else
      out.problems[option::python_depth] = quoted(option::python_depth, *t) + " is not a whole number from 1 to " +
                                           std::to_string(max_python_depth) + ": " +
                                           std::to_string(default_python_depth) + " is used";
  }
  if (const auto* t = text(option::signal_wait_ms)) {
    if (const auto n = strict_number(*t); n && *n > 0 && *n <= max_signal_wait_ms) o.signal_wait_ms = static_cast<std::uint32_t>(*n);
    else
      out.problems[option::signal_wait_ms] = quoted(option::signal_wait_ms, *t) +
                                             " is not a number of milliseconds from 1 to 600000: " +
                                             std::to_string(default_signal_wait_ms) + " ms is used";
  }
}

// The switches and names.
void parse_words(const std::map<option, std::string>& v, parsed_injection_options& out) {
  injection_options& o = out.options;
  auto text = [&](option k) {
    auto it = v.find(k);
    return it == v.end() ? std::string() : it->second;
  };
  o.dir = text(option::dir);
  std::string launch_problem;
  o.cupti.launches = parse_launch_settings(text(option::launch_calls), text(option::launch_sample), launch_problem);
  if (!launch_problem.empty()) out.problems[option::launch_calls] = launch_problem;
  o.cupti.clock_offset = text(option::clock) == "offset";
  o.cupti.runtime_api = text(option::runtime_api) != "0";
  o.cupti.driver_api = text(option::driver_api) != "0";
  o.cupti.all_api = text(option::api) == "all";
  o.cupti.sync_records = text(option::sync_records) == "1";
  if (const std::string a = text(option::api_source); a == "activity")
    o.cupti.api_records = api_source::activity;
  else if (!a.empty() && a != "callback")
    out.problems[option::api_source] =
        quoted(option::api_source, a) + " is not callback or activity: callbacks are used";
  o.counters.metrics = split_names(text(option::metrics));
  o.counters.metric_set = text(option::metric_set);
  o.signals = text(option::signals) != "0";
  o.nvtx = text(option::nvtx) != "0";
  o.python.lines = text(option::python_lines) != "0";
  o.python.library_paths = split_names(text(option::python_library_paths), ':');
  o.python.user_paths = split_names(text(option::python_user_paths), ':');
}

} // namespace

const char* variable_name(option o) { return names.at(static_cast<std::size_t>(o)); }

bool valid_flush_ms(long long ms) { return ms >= min_flush_ms && ms <= max_flush_ms; }

std::uint64_t injection_options::force_after_ms_or_default() const {
  return cupti.force_after_ms ? *cupti.force_after_ms : std::max<std::uint64_t>(5000, 10ull * flush_ms);
}

std::string counters_injection_options::metric_set_or_names() const {
  return metric_set.empty() ? joined(metrics) : metric_set;
}

std::optional<launch_sampling> parse_launch_sampling(const std::string& text, std::string& problem) {
  const auto slash = text.find('/');
  auto whole = [](const std::string& s, std::uint64_t& out) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoull(s);
    return true;
  };
  std::uint64_t w = 0, p = 0;
  if (slash == std::string::npos || !whole(text.substr(0, slash), w) || !whole(text.substr(slash + 1), p) || w < 1 ||
      w >= p || p > 600000) {
    problem = "'" + text + "' is not WINDOW/PERIOD in whole milliseconds with 1 <= WINDOW < PERIOD <= 600000";
    return std::nullopt;
  }
  return launch_sampling{w * 1'000'000, p * 1'000'000};
}

launch_settings parse_launch_settings(const std::string& calls, const std::string& sample, std::string& problem) {
  launch_settings s;
  if (calls == "all")
    s.mode = launch_mode::all;
  else if (calls == "none" || calls == "0")
    s.mode = launch_mode::none;
  else if (!calls.empty() && calls != "sampled")
    problem =
        quoted(option::launch_calls, calls) + " is not sampled, all or none: launch calls are recorded in windows";
  if (sample.empty()) return s;
  std::string why;
  if (const auto w = parse_launch_sampling(sample, why)) s.sampling = *w;
  else problem = std::string(variable_name(option::launch_sample)) + "=" + why + ": 20/200 is used";
  return s;
}

std::map<std::string, std::string> to_environment(const injection_options& o) {
  const injection_options d;
  nlohmann::json block = nlohmann::json::object();
  auto put = [&](option k, std::string value) { block[block_key(k)] = std::move(value); };
  put(option::dir, o.dir);
  put(option::flush_ms, std::to_string(o.flush_ms));
  if (o.cupti.force_after_ms) put(option::force_after_ms, std::to_string(*o.cupti.force_after_ms));
  if (o.cupti.max_buffer_mib) put(option::max_buffer_mib, std::to_string(*o.cupti.max_buffer_mib));
  if (o.cupti.buffer_kib) put(option::buffer_kib, std::to_string(*o.cupti.buffer_kib));
  if (o.cupti.launches.mode != d.cupti.launches.mode)
    put(option::launch_calls, o.cupti.launches.mode == launch_mode::sampled ? "sampled"
                              : o.cupti.launches.mode == launch_mode::all   ? "all"
                                                                            : "none");
  if (o.cupti.launches.sampling != d.cupti.launches.sampling)
    put(option::launch_sample, std::to_string(o.cupti.launches.sampling.window_ns / 1'000'000) + "/" +
                                   std::to_string(o.cupti.launches.sampling.period_ns / 1'000'000));
  if (o.cupti.clock_offset) put(option::clock, "offset");
  if (!o.cupti.runtime_api) put(option::runtime_api, "0");
  if (!o.cupti.driver_api) put(option::driver_api, "0");
  if (o.cupti.all_api) put(option::api, "all");
  if (o.cupti.api_records != d.cupti.api_records)
    put(option::api_source, o.cupti.api_records == api_source::callback ? "callback" : "activity");
  if (o.cupti.sync_records) put(option::sync_records, "1");
  if (o.source.launches) put(option::source_launches, std::to_string(*o.source.launches));
  if (!o.counters.metrics.empty()) put(option::metrics, joined(o.counters.metrics));
  if (!o.counters.metric_set.empty()) put(option::metric_set, o.counters.metric_set);
  if (o.counters.per_kernel) put(option::counters_k, std::to_string(*o.counters.per_kernel));
  if (o.signal_wait_ms != d.signal_wait_ms) put(option::signal_wait_ms, std::to_string(o.signal_wait_ms));
  if (!o.signals) put(option::signals, "0");
  if (!o.nvtx) put(option::nvtx, "0");
  if (!o.python.lines) put(option::python_lines, "0");
  if (o.python.max_depth != d.python.max_depth) put(option::python_depth, std::to_string(o.python.max_depth));
  if (!o.python.library_paths.empty()) put(option::python_library_paths, joined(o.python.library_paths, ':'));
  if (!o.python.user_paths.empty()) put(option::python_user_paths, joined(o.python.user_paths, ':'));
  return {{options_variable, block.dump()}};
}

const std::string* parsed_injection_options::problem(option o) const {
  auto it = problems.find(o);
  return it == problems.end() ? nullptr : &it->second;
}

bool parsed_injection_options::is_set(option o) const { return std::find(set.begin(), set.end(), o) != set.end(); }

// The settings speedlab wrote (options_variable): each key a setting's, each value its text.
// A block that is not such an object is said in `problems` (under dir) and ignored.
std::map<option, std::string> read_block(const char* text, parsed_injection_options& out) {
  std::map<option, std::string> values;
  if (!text || !*text) return values;
  const nlohmann::json block = nlohmann::json::parse(text, nullptr, false);
  if (!block.is_object()) {
    out.problems[option::dir] = std::string(options_variable) + " is not a JSON object of settings: ignored";
    return values;
  }
  for (std::size_t i = 0; i < option_count; ++i) {
    const auto o = static_cast<option>(i);
    if (auto it = block.find(block_key(o)); it != block.end() && it->is_string() && !it->get<std::string>().empty())
      values[o] = it->get<std::string>();
  }
  return values;
}

parsed_injection_options parse_injection_options(const variable_lookup& get) {
  parsed_injection_options out;
  auto lookup = [&](const char* name) { return get ? get(name) : std::getenv(name); };
  // The block first; a setting it leaves out may come from its own variable (a user's knob).
  std::map<option, std::string> values = read_block(lookup(options_variable), out);
  for (std::size_t i = 0; i < option_count; ++i) {
    const auto o = static_cast<option>(i);
    if (!values.count(o))
      if (const char* v = lookup(variable_name(o)); v && *v) values[o] = v;
    if (values.count(o)) out.set.push_back(o);
  }
  parse_words(values, out);
  parse_numbers(values, out);
  return out;
}

} // namespace speedlab::profile
