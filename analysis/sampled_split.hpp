// The time split of a process whose launch calls were recorded in windows only (the stream's
// launch_windows: SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled, issue 41's light capture). Outside
// the windows a launch call is not in the trace, so its time, GPU idle and not waiting, would
// read as host code. Inside them every call was recorded: the classifying thread's launch
// calls' share of that time (over CUDA API plus host code) is taken as their share outside
// them too, and that much of the time outside is moved from host code to CUDA API (at most the
// host code there). Only the launch calls' share: the other calls are recorded everywhere.
// Where no launch call went unrecorded (every kernel has its call), nothing is moved. The
// interval resamples the windows (a bootstrap, fixed seed: the same stream gives the same
// report). A count-based estimate (the windows' time per call times the unrecorded calls) was
// tried and left: a window that caught a kernel's first launch (a module load) made it 60
// times too high on the torch_mlp fixture.
//
//   time_split s = split::split_of(sums, lo, hi);
//   split_estimate e = estimate_unrecorded_api(sets, launches, windows, lo, hi, unrecorded, s);
//
// Internal to analysis/ (program_accumulate.cpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/program_analysis.hpp"
#include "analysis/time_split.hpp"

namespace speedlab::analysis {

// The recorded launch calls: the classifying thread's as intervals (merged), and every
// thread's start times (sorted).
struct sampled_launches {
  std::vector<split::interval> phase_calls;
  std::vector<std::uint64_t> call_starts;
};

// `windows` sorted by start; `unrecorded`: the launches in [lo, hi) whose call is not in the
// trace. The split of [lo, hi) is changed in place (api up, host down by the estimate's
// moved_ns). No launch call in a window inside [lo, hi): nothing moved.
split_estimate estimate_unrecorded_api(const split::sets& sets, const sampled_launches& launches,
                                       const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows,
                                       std::uint64_t lo, std::uint64_t hi, std::size_t unrecorded, time_split& split);

} // namespace speedlab::analysis
