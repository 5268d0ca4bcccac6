// Facts about the host machine that the probe, calibration and the run's header all need,
// read in one place: /proc/cpuinfo, the cache sizes in sysfs, the host name, the UTC time.
#pragma once

#include <cstddef>
#include <string>

namespace speedlab::device {

struct cpu_facts {
  std::string model;  // "model name" of the first CPU; "unknown" if not listed
  int physical_cores = 0;
  double mhz = 0;     // rated maximum where sysfs has it, else the highest current clock
  int fp32_lanes = 4; // per SIMD register
  std::string simd = "sse/neon";
};

cpu_facts read_cpuinfo();

// The largest cache level sysfs lists for cpu0 (bytes), 0 if unknown.
std::size_t llc_bytes();

std::string host_name();

// Now, as ISO-8601 UTC ("2026-11-23T10:11:58Z").
std::string iso_utc_now();

} // namespace speedlab::device
