// Names of the ceilings in device_model and how analysis reads them. A measured
// ceiling replaces the estimate under the same key; the estimate then stays under
// "<key>_estimate" so a report can show both.
#pragma once

#include <optional>
#include <string>

#include "model/device_model.hpp"

namespace speedlab::keys {

// device_model::gpu
inline constexpr const char* dram_bw = "dram_bw";                 // GB/s (measured: D2D copy, read + write)
inline constexpr const char* dram_read_bw = "dram_read_bw";       // GB/s (measured: read-only kernel)
inline constexpr const char* dram_write_bw = "dram_write_bw";     // GB/s (measured: write-only kernel)
inline constexpr const char* l2_bw = "l2_bw";                     // GB/s (measured: L2-resident rereads)
inline constexpr const char* l1_bw = "l1_bw";                     // GB/s (estimate: SMs x 128 B/clock x clock)
inline constexpr const char* h2d_pinned_bw = "h2d_pinned_bw";     // GB/s
inline constexpr const char* h2d_pageable_bw = "h2d_pageable_bw"; // GB/s
inline constexpr const char* d2h_pinned_bw = "d2h_pinned_bw";     // GB/s
inline constexpr const char* d2h_pageable_bw = "d2h_pageable_bw"; // GB/s
inline constexpr const char* fp32_peak = "fp32_peak";             // GFLOP/s (gpu and host)
inline constexpr const char* fp64_peak = "fp64_peak";             // GFLOP/s (gpu and host)
inline constexpr const char* launch_latency = "launch_latency";   // us per launch, back to back
inline constexpr const char* launch_sync_latency = "launch_sync_latency"; // us, launch + synchronize
inline constexpr const char* sm_count = "sm_count";               // count

// device_model::host
inline constexpr const char* memory_bw = "memory_bw";                 // GB/s, all cores (triad)
inline constexpr const char* memory_bw_1thread = "memory_bw_1thread"; // GB/s, one thread (triad)
inline constexpr const char* cores = "cores";                         // logical cores
inline constexpr const char* physical_cores = "physical_cores";

// device_model::properties used by the occupancy calculator (defaults: sm_90 limits).
inline constexpr const char* prop_compute_capability = "compute_capability"; // "9.0"
inline constexpr const char* prop_regs_per_sm = "regs_per_sm";
inline constexpr const char* prop_regs_per_block = "regs_per_block";
inline constexpr const char* prop_max_threads_per_sm = "max_threads_per_sm";
inline constexpr const char* prop_max_blocks_per_sm = "max_blocks_per_sm";
inline constexpr const char* prop_smem_per_sm = "smem_per_sm";
inline constexpr const char* prop_smem_per_block_optin = "smem_per_block_optin";
inline constexpr const char* prop_reserved_smem_per_block = "reserved_smem_per_block";
inline constexpr const char* prop_warp_size = "warp_size";
// device_model::properties of the host.
inline constexpr const char* prop_llc_bytes = "llc_bytes"; // last-level cache of one CPU

} // namespace speedlab::keys

namespace speedlab {

// The ceiling under key, if it exists and is positive.
inline const ceiling* find_ceiling(const std::map<std::string, ceiling>& m, const std::string& key) {
  auto it = m.find(key);
  return it != m.end() && it->second.value > 0 ? &it->second : nullptr;
}

// Sets key to a measurement, keeping a previous estimate under "<key>_estimate".
inline void set_measured(std::map<std::string, ceiling>& m, const std::string& key, ceiling c) {
  auto it = m.find(key);
  if (it != m.end() && !it->second.measured) m[key + "_estimate"] = it->second;
  c.measured = true;
  m[key] = std::move(c);
}

inline std::optional<double> property_number(const device_model& d, const std::string& key) {
  auto it = d.properties.find(key);
  if (it == d.properties.end() || it->second.empty()) return std::nullopt;
  try {
    return std::stod(it->second);
  } catch (...) {
    return std::nullopt;
  }
}

} // namespace speedlab
