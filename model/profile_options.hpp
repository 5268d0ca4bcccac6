// The options of `speedlab profile`'s injection library (profilers/inject), in one typed
// block: speedlab (app/profile, app/python) fills it and writes it into the profiled
// program's environment; the library, loaded there by CUDA, parses it back. This module is
// the one place that names the variables, holds their defaults and checks their values.
//
//   profile::injection_options o;
//   o.dir = out;
//   o.flush_ms = 250;
//   for (const auto& [name, value] : profile::to_environment(o)) env[name] = value; // speedlab: one variable
//
//   const profile::parsed_injection_options p = profile::parse_injection_options(); // the library
//   if (const auto* why = p.problem(profile::option::buffer_kib)) note(*why);
//
// to_environment writes the block whole, as one variable (options_variable: a JSON object,
// each setting by its variable's name without SPEEDLAB_PROFILE_, in lower case): the
// directory and the flush interval, and every other setting only where it differs from its
// default. A setting the block leaves out is read from its own variable, so what a user set
// in the environment (a cost knob of scripts/bench, documented in docs/profile-format.md)
// reaches the library untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace speedlab::profile {

// Every setting, each with one variable (variable_name).
enum class option {
  dir,             // where each process writes its stream
  flush_ms,        // the flush interval (`--flush-interval`)
  force_after_ms,  // a flush forces CUPTI's buffers out after this long (flush_policy.hpp)
  max_buffer_mib,  // the cap on CUPTI's buffers
  buffer_kib,      // CUPTI's buffer size (cost knob)
  launch_calls,    // all, sampled or none (launch_sampler.hpp)
  launch_sample,   // W/P with sampled
  clock,           // offset: CUPTI's times mapped from offsets read at start (cost knob)
  runtime_api,     // 0: no runtime or synchronization records (cost knob)
  driver_api,      // 0: no driver API records (cost knob)
  api,             // all: every API call, not only the analysis's
  api_source,      // activity or callback
  sync_records,    // 1: CUPTI's SYNCHRONIZATION records
  source_launches, // `--source`: the launches sampled
  metrics,         // `--metrics`: the metric names, comma separated
  metric_set,      // the set's name, as the report shows it
  counters_k,      // `--counters-per-kernel`
  signal_wait_ms,  // how long a termination waits for the GPUs
  signals,         // 0: the program's signals left alone
  nvtx,            // 0: not the NVTX tool (no ranges)
  python_lines,    // 0: no Python stacks at CUDA calls (`--no-python-lines`)
  python_depth,    // the frames kept per stack, innermost first
  // Extra path prefixes (':' separated) of library frames, and of the user's (these win).
  python_library_paths,
  python_user_paths,
};
inline constexpr std::size_t option_count = 24;

// The environment variable of a setting (a user may set it; speedlab writes the block).
const char* variable_name(option o);
// The one variable speedlab writes: the whole block.
inline constexpr const char* options_variable = "SPEEDLAB_PROFILE_OPTIONS";

inline constexpr std::uint32_t default_flush_ms = 500, min_flush_ms = 1, max_flush_ms = 3600000;
inline constexpr std::uint32_t default_signal_wait_ms = 5000;
inline constexpr std::uint32_t max_signal_wait_ms = 600000;
inline constexpr std::size_t min_buffer_kib = 64, max_buffer_kib = 1u << 20;

// The flush interval's one check (`--flush-interval` and the library alike): 1 ms to an hour.
bool valid_flush_ms(long long ms);

// Launch calls: every one, in sampled windows (the default: the light capture, issue 41), or none.
enum class launch_mode { all, sampled, none };
struct launch_sampling {
  std::uint64_t window_ns = 20'000'000;  // recorded ...
  std::uint64_t period_ns = 200'000'000; // ... of every period, from the first window's start
  bool operator==(const launch_sampling&) const = default;
};
// "W/P" in milliseconds ("20/200"): 1 <= W < P <= 600000. nullopt (and `problem` said) otherwise.
std::optional<launch_sampling> parse_launch_sampling(const std::string& text, std::string& problem);
struct launch_settings {
  launch_mode mode = launch_mode::sampled;
  launch_sampling sampling;
  bool operator==(const launch_settings&) const = default;
};
// launch_calls ("" or "sampled": in windows, the default; "all": every launch call; "none" or
// "0") and launch_sample ("W/P", with "sampled"). A value that is neither is said in `problem`
// and the default taken (in windows of 20/200).
launch_settings parse_launch_settings(const std::string& calls, const std::string& sample, std::string& problem);

enum class api_source { activity, callback };

// Each program session's block (profilers/program_session.hpp reads its own in configure()).
struct cupti_injection_options {               // the cupti session: buffers, records, launch calls, clock
  std::optional<std::uint64_t> force_after_ms; // unset: injection_options::force_after_ms_or_default()
  std::optional<std::size_t> max_buffer_mib;   // unset: the library's cap
  std::optional<std::size_t> buffer_kib;       // unset: the library's size
  launch_settings launches;
  bool clock_offset = false;
  bool runtime_api = true, driver_api = true;
  bool all_api = false;
  api_source api_records = api_source::callback; // activity: the full capture (`--full`)
  bool sync_records = false;
  // The full capture (`speedlab profile --full`): every launch call, and every API call as
  // CUPTI's RUNTIME/DRIVER activity records, at their cost (docs/results/light-capture.md).
  void use_full_capture() {
    api_records = api_source::activity;
    launches.mode = launch_mode::all;
  }
  bool operator==(const cupti_injection_options&) const = default;
};
struct counters_injection_options { // `--metrics`
  std::vector<std::string> metrics; // none: no counters
  std::string metric_set;           // empty: the metric names (metric_set_or_names)
  std::optional<std::size_t> per_kernel;
  std::string metric_set_or_names() const;
  bool operator==(const counters_injection_options&) const = default;
};
struct source_injection_options { // `--source`
  std::optional<std::uint64_t> launches;
  bool operator==(const source_injection_options&) const = default;
};

inline constexpr std::size_t default_python_depth = 128, max_python_depth = 1024;
struct python_injection_options { // the python session: stacks at CUDA calls of a Python program
  bool lines = true;              // on in every Python program unless `--no-python-lines`
  std::size_t max_depth = default_python_depth;
  std::vector<std::string> library_paths, user_paths; // profilers/python/user_frames.hpp
  bool operator==(const python_injection_options&) const = default;
};

struct injection_options {
  // The library's own: where, how often, signals, NVTX.
  std::string dir;
  std::uint32_t flush_ms = default_flush_ms;
  std::uint32_t signal_wait_ms = default_signal_wait_ms;
  bool signals = true;
  bool nvtx = true;
  cupti_injection_options cupti;
  counters_injection_options counters;
  source_injection_options source;
  python_injection_options python;

  // A GPU never idle at a flush: force its records out after 10 flushes, and 5 s at least.
  std::uint64_t force_after_ms_or_default() const;
  bool operator==(const injection_options&) const = default;
};

// The variable for `o`: options_variable and the block (see above: the directory and flush
// interval always, the rest where they differ from the defaults).
std::map<std::string, std::string> to_environment(const injection_options& o);

// What the library read: the options, and for each variable set to a value it cannot take,
// why (its default is used then), and whether a variable was set at all.
struct parsed_injection_options {
  injection_options options;
  std::map<option, std::string> problems;
  std::vector<option> set; // the settings present (in the block or their variable) and not empty
  const std::string* problem(option o) const;
  bool is_set(option o) const;
};

// Reads the block and every variable through `get` (getenv by default: the library reads its
// process's environment); a setting in the block wins over its own variable.
using variable_lookup = std::function<const char*(const char*)>;
parsed_injection_options parse_injection_options(const variable_lookup& get = {});

} // namespace speedlab::profile
