// Sampling of launch calls simulated on a stream recorded with every launch call: what the
// injection library's SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled would have written for the same
// run (issue 29). The launch calls (trace::classify_api == launch) that start outside the
// windows [t0 + k*period, t0 + k*period + window), t0 = the process's start + phase, are
// removed; every other call and every GPU record stays; the process is tagged
// "launch_calls": "sampled" and carries the windows.
//
//   profile::process_profile s = test_sampling::sample_launch_calls(p, 200 * ms, 20 * ms, 50 * ms);
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "model/cuda_api.hpp"
#include "model/profile.hpp"

namespace speedlab::test_sampling {

// The end of what the process recorded: its end, or its last record's end if later.
inline std::uint64_t recorded_end(const profile::process_profile& p) {
  std::uint64_t end = p.process.end_ns;
  auto later = [&end](const auto& records) {
    for (const auto& r : records) end = std::max(end, r.end);
  };
  later(p.trace.kernels), later(p.trace.memcpys), later(p.trace.memsets), later(p.trace.api_calls);
  later(p.trace.syncs), later(p.trace.ranges);
  return end;
}

// The windows over [lo, hi): [lo + phase + k*period, ... + window) for every k (the one of
// k = -1 may still be open at lo), clipped to [lo, hi).
inline std::vector<std::pair<std::uint64_t, std::uint64_t>>
windows_over(std::uint64_t lo, std::uint64_t hi, std::uint64_t period, std::uint64_t window, std::uint64_t phase) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  const auto length = static_cast<std::int64_t>(hi > lo ? hi - lo : 0);
  const auto p = static_cast<std::int64_t>(period), w = static_cast<std::int64_t>(window);
  const auto f = static_cast<std::int64_t>(phase % period);
  for (std::int64_t s = f - p; s < length; s += p) {
    const std::int64_t a = std::max<std::int64_t>(s, 0), b = std::min(s + w, length);
    if (b > a) out.emplace_back(lo + static_cast<std::uint64_t>(a), lo + static_cast<std::uint64_t>(b));
  }
  return out;
}

inline bool inside_windows(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows, std::uint64_t t) {
  auto it =
      std::upper_bound(windows.begin(), windows.end(), t, [](std::uint64_t v, const auto& w) { return v < w.first; });
  return it != windows.begin() && t < std::prev(it)->second;
}

inline profile::process_profile sample_launch_calls(profile::process_profile p, std::uint64_t period,
                                                    std::uint64_t window, std::uint64_t phase = 0) {
  p.launch_windows = windows_over(p.process.start_ns, recorded_end(p), period, window, phase);
  auto& calls = p.trace.api_calls;
  calls.erase(std::remove_if(calls.begin(), calls.end(),
                             [&p](const trace::api_record& a) {
                               return trace::classify_api(a.name) == trace::api_kind::launch &&
                                      !inside_windows(p.launch_windows, a.start);
                             }),
              calls.end());
  p.process.tags["launch_calls"] = "sampled";
  return p;
}

} // namespace speedlab::test_sampling
