// The cupti backend's options block (`cupti:` in a suite): registered in profilers/registry.cpp.
#pragma once

#include <cstddef>

#include "profilers/options_section.hpp"

namespace speedlab::profiling {

// The cupti backend's options block (profiler_options::get<cupti_options>()).
struct cupti_options {
  static constexpr const char* block_key = "cupti";
  std::size_t buffer_bytes = 8u << 20;       // one CUPTI activity buffer
  std::size_t max_buffer_bytes = 256u << 20; // cap on buffered memory; beyond it records drop
  bool driver_api = false;                   // also record CUDA driver API calls (cu*): more records
  bool api_records = true;                   // runtime API calls and synchronizations; without them the
                                             // split cannot tell sync and API time from host time
  // How CUPTI timestamps reach the host steady clock: CUPTI calls speedlab's clock for each
  // timestamp (callback), or keeps its own clock and speedlab maps it with offsets read at
  // start and stop (offset; the first session of a process decides, CUPTI allows no change).
  enum class clock_mode { callback, offset } clock = clock_mode::callback;
  // How kernel launch calls (cudaLaunchKernel & co.) are recorded when api_records is on:
  // as CUPTI runtime-API activity records, through speedlab's own CUPTI callback (the same
  // interval and correlation id; measured no cheaper on the H100 machine, docs/profiling.md),
  // or not at all (their time then counts as host time).
  enum class launch_mode { activity, callback, none } launches = launch_mode::activity;
};

namespace cupti_limits {
inline constexpr number_bounds buffer_mib{0.004, 4096, false, "MiB"};
inline constexpr number_bounds max_buffer_mib{0.004, 65536, false, "MiB"};
} // namespace cupti_limits

const options_section& cupti_options_section();

} // namespace speedlab::profiling
