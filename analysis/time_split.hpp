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

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/intervals.hpp"
#include "model/cuda_api.hpp"
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

// ---- The split's one engine (internal to analysis/) ----
// compute_time_splits (a point's whole trace) and the streamed program analysis
// (program_accumulate.cpp, a process's compact records) both fill the categories' interval
// sets with add_host_sets and the rest, merge them, and read each window with first_cover
// and split_of: one definition of the split, two ways to collect its records.
namespace split {

using intervals::interval;

// The categories in precedence order: each nanosecond goes to the first that covers it. The
// *_call ones are GPU-idle time inside a synchronous copy call (staging through a bounce
// buffer, driver setup): they count toward the copy's direction, after every GPU-busy one.
enum category : std::uint8_t { kernel, h2d, d2h, copy_other, memset, h2d_call, d2h_call, copy_other_call, sync, api };
constexpr std::size_t categories = 10;
using sets = std::array<std::vector<interval>, categories>;
using sums = std::array<std::uint64_t, categories>;

category copy_category(std::uint8_t copy_kind, bool call);

// The copy kind of each call that made a recorded copy (by correlation id; a call's first copy
// decides). Filled in record order, then finish() before find().
class copy_call_kinds {
public:
  void add(std::uint32_t correlation, std::uint8_t copy_kind) { m_kinds.emplace_back(correlation, copy_kind); }
  void finish();
  std::optional<std::uint8_t> find(std::uint32_t correlation) const;

private:
  std::vector<std::pair<std::uint32_t, std::uint8_t>> m_kinds;
};

// The phase thread among the threads that ran "speedlab"-domain ranges and those that made
// CUDA calls (phase_thread's choice, from its counts).
std::uint32_t choose_thread(const std::map<std::uint32_t, std::size_t>& phase_range_threads,
                            const std::map<std::uint32_t, std::size_t>& api_threads, std::uint32_t process);

// The category of one of the phase thread's calls: waiting (a synchronous copy's direction,
// else sync) or api.
category call_category(trace::api_kind kind, std::optional<std::uint8_t> copy_kind);

// The host side: the phase thread's calls by call_category, and the synchronizations that are
// its own or no thread's (sync records have no thread: they count when their call is the
// phase thread's, or when API records were not collected; a stream wait event, type 2, never
// blocks the host). kind_of(call) gives a call's trace::api_kind.
template <class Calls, class Syncs, class KindOf>
void add_host_sets(const Calls& calls, const Syncs& syncs, std::uint32_t thread, KindOf&& kind_of,
                   const copy_call_kinds& copies, sets& out) {
  std::vector<std::uint32_t> all_corr, phase_corr;
  const bool match_syncs = !syncs.empty();
  for (const auto& a : calls) {
    if (match_syncs) all_corr.push_back(a.correlation);
    if (a.thread != thread) continue;
    if (match_syncs) phase_corr.push_back(a.correlation);
    const trace::api_kind kind = kind_of(a);
    const bool copy_call = kind == trace::api_kind::copy_sync;
    out[call_category(kind, copy_call ? copies.find(a.correlation) : std::nullopt)].emplace_back(a.start, a.end);
  }
  if (!match_syncs) return;
  std::sort(all_corr.begin(), all_corr.end());
  std::sort(phase_corr.begin(), phase_corr.end());
  for (const auto& y : syncs) {
    if (y.type == 2) continue;
    if (std::binary_search(phase_corr.begin(), phase_corr.end(), y.correlation) ||
        !std::binary_search(all_corr.begin(), all_corr.end(), y.correlation))
      out[sync].emplace_back(y.start, y.end);
  }
}

// Each set sorted and joined (intervals::merge_in_place).
void merge_all(sets& s);

// For merged sets: how much of their union inside [lo, hi) each one covers first, apart
// before and after `mid` (lo <= mid <= hi): a window and its steady state in one sweep over
// the boundaries, no union built, no set clipped or copied.
struct cover_sums {
  sums before{}, after{};
};
cover_sums first_cover(const sets& s, std::uint64_t lo, std::uint64_t mid, std::uint64_t hi);

// The time split of [lo, hi) from what the categories cover of it (host: the rest).
time_split split_of(const sums& covered, std::uint64_t lo, std::uint64_t hi);

} // namespace split

} // namespace speedlab::analysis
