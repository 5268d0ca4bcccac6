// The cupti backend's options block (`cupti:` in a suite): registered in profilers/registry.cpp.
#pragma once

#include "profilers/options_section.hpp"

namespace speedlab::profiling {

namespace cupti_limits {
inline constexpr number_bounds buffer_mib{0.004, 4096, false, "MiB"};
inline constexpr number_bounds max_buffer_mib{0.004, 65536, false, "MiB"};
} // namespace cupti_limits

const options_section& cupti_options_section();

} // namespace speedlab::profiling
