// Where each measured repetition's wall time went, from a device trace.
//
//   auto splits = speedlab::analysis::compute_time_splits(trace);   // one per trace.repetitions
//   auto summary = speedlab::analysis::summarize_time_splits(splits); // median/q1/q3 per part
//
// Inside each repetition window every nanosecond gets exactly one category. While the GPU
// is busy the first matching of kernel > h2d > d2h > other copy > memset wins (overlapping
// activity is never counted twice). While the GPU is idle, the time goes by what the phase
// thread was doing: inside a synchronous copy call whose copy was recorded (that copy's
// direction: the host side of a pageable copy is transfer time) > inside another CUDA call
// that blocks the host (model/cuda_api.hpp: synchronizations and synchronous copies; sync) > inside another CUDA API call (api) > its own code
// (host). The parts add up to the window's wall time exactly.
// docs/profiling.md has the full definition.
#pragma once

#include <cstdint>
#include <vector>

#include "model/results.hpp"
#include "model/trace.hpp"

namespace speedlab::analysis {

std::vector<time_split> compute_time_splits(const trace::device_trace& trace);
// The same over other windows (a whole process's lifetime, say) without copying the trace.
std::vector<time_split> compute_time_splits(const trace::device_trace& trace,
                                            const std::vector<trace::repetition_window>& windows);

// Component-wise quantiles (linear interpolation, Hyndman-Fan type 7). Note that the parts
// of a median split need not add up to the median wall time.
struct time_split_summary {
  std::size_t count = 0;
  time_split median, q1, q3;
};
time_split_summary summarize_time_splits(const std::vector<time_split>& splits);

// The thread whose CUDA calls classify GPU-idle time: the thread that ran the most
// "speedlab"-domain NVTX ranges; else the process's main thread if it made CUDA calls;
// else the thread with the most CUDA calls; 0 if the trace has none of these.
std::uint32_t phase_thread(const trace::device_trace& trace);

} // namespace speedlab::analysis
