// The counters backend's options block (`counters:` in a suite: metrics, per_kernel):
// registered in profilers/registry.cpp. The command line's --counters-per-kernel takes the
// same bounds.
#pragma once

#include <cstddef>
#include <string>

#include "profilers/options_section.hpp"

namespace speedlab::profiling {

// The counters backend's options block (profiler_options::get<counters_options>()): the metric
// set ("default", "full" or a list of metric names) and K, the launches profiled per distinct
// (kernel, grid, block) in its pass.
struct counters_options {
  static constexpr const char* block_key = "counters";
  std::string metric_set = "default";
  std::size_t counters_per_kernel = 2;
};

namespace counters_limits {
inline constexpr number_bounds per_kernel{1, 1e6, true, "launches"};
} // namespace counters_limits

const options_section& counters_options_section();

} // namespace speedlab::profiling
