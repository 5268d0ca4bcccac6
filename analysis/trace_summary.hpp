// What the rules need from one point's device trace, computed in one pass and kept small:
// per-kernel statistics, copies by direction and host memory kind, synchronizations,
// launches, and how much copy time overlapped kernel time. Only records inside the
// measured repetition windows count (when the trace has windows); totals are over all
// repetitions and per_rep() divides by their number.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/cuda_api.hpp"
#include "model/trace.hpp"

namespace speedlab::analysis {

struct kernel_stats {
  std::string name;
  std::size_t launches = 0;
  std::size_t compute_phase_launches = 0; // started inside the compute phase of a repetition
  double total_ns = 0, compute_phase_ns = 0;
  double median_ns = 0, min_ns = 0, max_ns = 0;
  std::array<std::int32_t, 3> grid{1, 1, 1}, block{1, 1, 1}; // of the longest launch
  std::int32_t registers_per_thread = 0, shared_bytes = 0;    // static + dynamic
  double blocks() const { return double(grid[0]) * grid[1] * grid[2]; }
  int threads_per_block() const { return block[0] * block[1] * block[2]; }
};

struct copy_stats {
  std::size_t count = 0, async_count = 0, pageable_count = 0;
  double bytes = 0, ns = 0;
  double pageable_bytes = 0, pageable_ns = 0; // host side pageable
  double pinned_bytes = 0, pinned_ns = 0;     // host side pinned
  double gbps() const { return ns > 0 ? bytes / ns : 0; }
};

// Pieces the trace summary shares with the streamed program analysis (program_accumulate.cpp),
// so both decide "inside a repetition", medians, copy, kernel and call figures the same way:
// one summary, two ways to collect its records (a point's whole trace; a process's chunks).
long repetition_of(const std::vector<trace::repetition_window>& windows, std::uint64_t t); // sorted; -1 if none
double median_in_place(std::vector<double>& v); // reorders v
bool in_compute_phase(const std::vector<trace::repetition_window>& windows, std::uint64_t t); // true without windows
void add_copy(copy_stats& c, const trace::memcpy_record& m);

struct trace_summary {
  std::size_t repetitions = 1;     // number of repetition windows (at least 1)
  bool has_windows = false;
  std::uint64_t dropped_records = 0;
  std::vector<kernel_stats> kernels; // by total time, longest first
  std::size_t kernel_launches = 0;
  double kernel_ns = 0;             // sum of kernel durations
  std::vector<double> kernel_durations; // every launch, for launch-bound statistics
  copy_stats h2d, d2h, other_copies;
  double copy_kernel_overlap_ns = 0; // time when a copy and a kernel ran at once
  std::size_t sync_count = 0;        // synchronization records + synchronizing API calls
  double sync_ns = 0;
  std::size_t launch_calls = 0;      // launch calls (model/cuda_api.hpp)
  double launch_call_ns = 0;

  double per_rep(double total) const { return total / static_cast<double>(repetitions ? repetitions : 1); }
};

// One kernel's launches as they come: its durations, time, the compute phase's share and the
// launch configuration of its longest launch (among equally long ones the earliest).
struct kernel_launches {
  std::vector<double> durations;
  std::size_t compute_launches = 0;
  double total_ns = 0, compute_ns = 0;
  double longest_ns = -1;
  std::uint64_t longest_start = 0;
  std::array<std::int32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  std::int32_t registers = 0, shared = 0;

  void add(const trace::kernel_record& k, bool in_compute);
  // The kernel's statistics; its durations are appended to `all` in launch order, then released.
  kernel_stats finish(std::string name, std::vector<double>& all);
};

// The synchronizations and launch calls inside the windows, from API calls and sync records.
struct call_counts {
  std::size_t sync_records = 0, sync_calls = 0, launch_calls = 0;
  double sync_record_ns = 0, sync_call_ns = 0, launch_call_ns = 0;

  void add_call(trace::api_kind kind, double ns); // synchronous copies count as copies
  void add_sync_record(double ns);
  // Into s: CUPTI reports a synchronization both as an activity record and as the API call,
  // so the larger of the two counts.
  void fill(trace_summary& s) const;
};

// The summary's head (windows sorted by start): repetitions, dropped records.
trace_summary start_summary(const std::vector<trace::repetition_window>& windows, std::uint64_t dropped_records);
// The kernels' statistics, in name order (`kernels`: name, launches), then longest first.
void add_kernel_stats(trace_summary& s, std::vector<std::pair<const std::string*, kernel_launches*>> kernels);

trace_summary summarize_trace(const trace::device_trace& t);

} // namespace speedlab::analysis
