// The machine a run was measured on, as analysis sees it: GPU and host ceilings (measured
// by calibration or estimated from properties) and the device's properties. device/ fills
// it (probe + calibration), analysis reads it, reports show it; keys in device_keys.hpp.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace speedlab {

// One ceiling of the machine, with where it came from.
struct ceiling {
  double value = 0;
  std::string unit;      // "GB/s", "GFLOP/s", "us", "cores"
  bool measured = false; // false: datasheet-style estimate from device properties
  std::string source;    // "calibrate 2026-11-20", "cudaGetDeviceProperties", ...
};

struct device_model {
  std::string gpu_name;                       // empty: no GPU model
  std::map<std::string, ceiling> gpu;         // dram_bw, h2d_pinned_bw, h2d_pageable_bw, d2h_pinned_bw,
                                              // d2h_pageable_bw, fp32_peak, fp64_peak, launch_latency, sm_count, ...
  std::map<std::string, ceiling> host;        // memory_bw, cores, fp32_peak (estimate)
  std::map<std::string, std::string> properties; // compute capability, clocks, memory bus, ...
};

void to_json(nlohmann::json& j, const ceiling& c);
void from_json(const nlohmann::json& j, ceiling& c);
void to_json(nlohmann::json& j, const device_model& d);
void from_json(const nlohmann::json& j, device_model& d);

} // namespace speedlab
