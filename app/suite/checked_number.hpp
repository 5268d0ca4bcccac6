// The one way a number from the command line or a suite file becomes a setting: parsed in
// speedlab's syntax (1e3, 2^10), finite, within the setting's range, whole where it counts
// something. Both sources share the rules below, so `--timeout 0` and `timeout: 0` fail
// the same way with the same limits.
#pragma once

#include <stdexcept>
#include <string>

#include "model/profile_options.hpp"
#include "profilers/counters/counters_options.hpp"
#include "profilers/options_section.hpp"

namespace speedlab::app {

// min, max, integer (a count: whole numbers only), unit ("seconds", "runs", ... for messages;
// "" for none). The profiler backends' own keys (profilers/options_section.hpp) use the same.
using number_rule = profiling::number_bounds;

// The problem only ("must be a number between 0.01 and 86400 seconds, found 'nan'"); the
// caller puts where it is in front.
struct number_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace limits {
inline constexpr number_rule timeout_s{0.01, 86400, false, "seconds"};
inline constexpr number_rule threads{0, 4096, true, "threads"};
inline constexpr number_rule warmup_runs{0, 1e6, true, "runs"};
inline constexpr number_rule warmup_min_time_s{0, 600, false, "seconds"};
inline constexpr number_rule rounds{1, 100, true, "rounds"};
inline constexpr number_rule samples{1, 1e7, true, "repetitions"};
inline constexpr number_rule min_time_s{0, 3600, false, "seconds"};
inline constexpr number_rule max_time_s{0.001, 86400, false, "seconds"};
inline constexpr number_rule target_noise{0, 1, false, ""};
inline constexpr number_rule counters_per_kernel = profiling::counters_limits::per_kernel; // --counters-per-kernel
// The command line's own: compare --threshold, profile's options.
inline constexpr number_rule threshold_percent{0, 1000, false, "percent"};
inline constexpr number_rule flush_interval_ms{profile::min_flush_ms, profile::max_flush_ms, true, "milliseconds"};
inline constexpr number_rule profile_counters_per_kernel{1, 1000, true, "launches"};
inline constexpr number_rule source_launches{1, 1e6, true, "launches"};
} // namespace limits

// Parses `text` and checks it against `rule`; throws number_error.
double checked_number(const std::string& text, const number_rule& rule);
// Checks a value that is already a number (a setting made in code); throws number_error.
double checked_value(double value, const number_rule& rule);

} // namespace speedlab::app
