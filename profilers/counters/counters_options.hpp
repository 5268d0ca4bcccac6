// The counters backend's options block (`counters:` in a suite: metrics, per_kernel):
// registered in profilers/registry.cpp. The command line's --counters-per-kernel takes the
// same bounds.
#pragma once

#include "profilers/options_section.hpp"

namespace speedlab::profiling {

namespace counters_limits {
inline constexpr number_bounds per_kernel{1, 1e6, true, "launches"};
} // namespace counters_limits

const options_section& counters_options_section();

} // namespace speedlab::profiling
