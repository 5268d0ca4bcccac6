// The process summary built chunk by chunk (process_accumulator, program_stream.hpp):
// add() keeps a few numbers per record, finish() turns them into the summary's tables in
// steps (the time split, the trace statistics, the NVTX ranges, the idle gaps, the
// allocations), each its own function below.
#include "analysis/program_analysis.hpp"
#include "analysis/program_stream.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/name_ids.hpp"
#include "analysis/sampled_split.hpp"
#include "analysis/time_split.hpp"
#include "model/cuda_api.hpp"
#include "model/statistics.hpp"
#include "model/trace_fold.hpp"

namespace speedlab::analysis {
namespace {

using intervals::interval;
using intervals::merge_in_place;

using intervals::span;

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "pid 1234 (python3 train.py)": the interpreter alone says little, so its script is named too.
std::string process_label(const profile::process_info& p) {
  std::string what;
  if (!p.command_line.empty()) {
    what = base_name(p.command_line[0]);
    if (what.starts_with("python") && p.command_line.size() > 1) what += " " + base_name(p.command_line[1]);
  }
  return what.empty() ? fmt::format("pid {}", p.pid) : fmt::format("pid {} ({})", p.pid, what);
}

// Host-side memory kind of a copy (the source of H2D, the destination of D2H); unknown for others.
std::uint8_t host_kind(const trace::memcpy_record& m) {
  if (m.copy_kind == trace::copy_htod) return m.src_kind;
  if (m.copy_kind == trace::copy_dtoh) return m.dst_kind;
  return trace::mem_unknown;
}

// ---- process_accumulator ---------------------------------------------------------------
// Per record it keeps a few numbers (times, a thread, a correlation, a name's id): about 32
// bytes for an API call, 16 for a kernel, where the trace model holds 100 to 250 with names.

struct copy_rec {
  std::uint64_t start, end;
  std::uint8_t kind;   // copy kind
  bool inside;         // starts inside a summary window
};
struct api_rec {
  std::uint64_t start, end;
  std::uint32_t thread, correlation, name;
  trace::api_kind kind;
};
struct sync_rec {
  std::uint64_t start, end;
  std::uint32_t correlation;
  std::uint8_t type;
};
struct range_rec {
  std::uint64_t start, end;
  std::uint32_t thread, domain, name;
};

// Gives a container's memory back now (clear() keeps a vector's capacity).
template <class C>
void release(C& c) {
  C().swap(c);
}

// Innermost NVTX range around a time, for times visited in ascending order. Push/pop ranges
// of one thread nest, so a stack of the open ones answers each query in amortized O(1).
class range_cursor {
public:
  explicit range_cursor(std::vector<const range_rec*> ranges) : m_ranges(std::move(ranges)) {
    auto outer_first = [](const auto* a, const auto* b) {
      return a->start < b->start || (a->start == b->start && a->end > b->end);
    };
    if (!std::is_sorted(m_ranges.begin(), m_ranges.end(), outer_first))
      std::stable_sort(m_ranges.begin(), m_ranges.end(), outer_first);
  }
  const range_rec* at(std::uint64_t t) {
    for (; m_next < m_ranges.size() && m_ranges[m_next]->start <= t; ++m_next) {
      while (!m_open.empty() && m_open.back()->end <= m_ranges[m_next]->start) m_open.pop_back();
      m_open.push_back(m_ranges[m_next]);
    }
    while (!m_open.empty() && m_open.back()->end <= t) m_open.pop_back();
    return m_open.empty() ? nullptr : m_open.back();
  }

private:
  std::vector<const range_rec*> m_ranges;
  std::size_t m_next = 0;
  std::vector<const range_rec*> m_open;
};

struct accumulator_state : name_ids {
  std::vector<trace::repetition_window> windows; // of the trace statistics, sorted
  program_options options;
  std::size_t records = 0;
  bool any_gpu = false, any_api = false;

  // Names (kernels, API functions, range domains and names) are the base's, each stored once.
  std::vector<std::int16_t> api_kinds; // by name id: -1 not classified yet
  recent_ids last_kernel, last_api, last_domain, last_range;

  // Kernels.
  std::vector<kernel_launches> kernels_by_name; // by name id (none launched: no durations)
  std::vector<interval> kernels_inside, kernels_outside;
  std::uint64_t first_kernel = UINT64_MAX, last_busy = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, program_stream> streams; // (device, stream)
  // Copies and memsets.
  // The per-record stores grow by blocks (std::deque): a vector doubling its capacity would
  // briefly hold three times the records of the largest table.
  std::deque<copy_rec> copies;
  split::copy_call_kinds copy_kind_of_call;
  std::vector<std::uint32_t> pageable_sync_calls;                        // correlations
  copy_stats h2d, d2h, other_copies;
  pageable_sync_copies pageable_sync;
  std::vector<interval> memsets;
  // Every GPU record's duration by the correlation id of the call that launched it (ranges:
  // what they launched); kernel says whether it counts as a launched kernel.
  struct launched_rec {
    std::uint32_t correlation;
    bool kernel;
    double ns;
  };
  std::deque<launched_rec> launched;
  std::size_t stale_kernels = 0; // kernels whose correlation id was dropped (drop_stale_correlations)
  // A Python process (process_info's "python" tag): each GPU record, for the lines of the
  // program that launched it (python_lines.hpp).
  bool python = false;
  struct python_gpu_rec {
    std::uint32_t correlation;
    python_line_builder::gpu_work work;
  };
  std::deque<python_gpu_rec> python_gpu;
  // Host side.
  std::deque<api_rec> calls;
  std::map<std::uint32_t, std::size_t> api_threads, phase_range_threads;
  call_counts counts; // inside the windows
  std::vector<sync_rec> syncs;
  std::deque<range_rec> ranges;

  bool inside(std::uint64_t start) const { return windows.empty() || repetition_of(windows, start) >= 0; }
  bool in_compute(std::uint64_t start) const { return in_compute_phase(windows, start); }
  // The last row asked for is asked again for most records (map nodes never move).
  program_stream* last_row = nullptr;
  program_stream& stream_row(std::uint32_t device, std::uint32_t stream) {
    if (last_row && last_row->device == device && last_row->stream == stream) return *last_row;
    auto [it, inserted] = streams.try_emplace({device, stream});
    if (inserted) it->second.device = device, it->second.stream = stream;
    return *(last_row = &it->second);
  }
  trace::api_kind kind_of(std::uint32_t name) {
    if (api_kinds.size() <= name) api_kinds.resize(names.size(), -1);
    if (api_kinds[name] < 0) api_kinds[name] = static_cast<std::int16_t>(trace::classify_api(*names[name]));
    return static_cast<trace::api_kind>(api_kinds[name]);
  }
};

void add_kernels(accumulator_state& s, const std::vector<trace::kernel_record>& kernels) {
  for (const auto& k : kernels) {
    const double ns = span(k.start, k.end);
    s.launched.push_back({k.correlation, true, ns});
    if (s.python) s.python_gpu.push_back({k.correlation, {python_line_builder::gpu_kind::kernel, ns, 0, 0, false}});
    s.first_kernel = std::min(s.first_kernel, k.start);
    s.last_busy = std::max(s.last_busy, k.end);
    auto& row = s.stream_row(k.device, k.stream);
    ++row.kernels;
    row.kernel_ns += ns;
    if (!s.inside(k.start)) {
      s.kernels_outside.emplace_back(k.start, k.end);
      continue;
    }
    s.kernels_inside.emplace_back(k.start, k.end);
    const std::uint32_t id = s.intern(k.name, s.last_kernel);
    if (s.kernels_by_name.size() <= id) s.kernels_by_name.resize(id + 1);
    s.kernels_by_name[id].add(k, s.in_compute(k.start));
  }
}

void add_copies_and_memsets(accumulator_state& s, const trace::device_trace& t) {
  for (const auto& c : t.memcpys) {
    s.last_busy = std::max(s.last_busy, c.end);
    auto& row = s.stream_row(c.device, c.stream);
    ++row.copies;
    row.copy_ns += span(c.start, c.end);
    const bool inside = s.inside(c.start);
    s.launched.push_back({c.correlation, false, span(c.start, c.end)});
    s.copies.push_back({c.start, c.end, c.copy_kind, inside});
    s.copy_kind_of_call.add(c.correlation, c.copy_kind);
    if (s.python)
      s.python_gpu.push_back({c.correlation,
                              {python_line_builder::gpu_kind::copy, span(c.start, c.end), static_cast<double>(c.bytes),
                               c.copy_kind, host_kind(c) == trace::mem_pageable}});
    if (inside) add_copy(c.copy_kind == trace::copy_htod ? s.h2d : c.copy_kind == trace::copy_dtoh ? s.d2h : s.other_copies, c);
    if (!c.async && host_kind(c) == trace::mem_pageable) {
      ++s.pageable_sync.count;
      s.pageable_sync.bytes += static_cast<double>(c.bytes);
      s.pageable_sync.ns += span(c.start, c.end);
      s.pageable_sync_calls.push_back(c.correlation);
    }
  }
  for (const auto& c : t.memsets) {
    auto& row = s.stream_row(c.device, c.stream);
    ++row.memsets;
    row.memset_ns += span(c.start, c.end);
    s.memsets.emplace_back(c.start, c.end);
    s.launched.push_back({c.correlation, false, span(c.start, c.end)});
    if (s.python)
      s.python_gpu.push_back({c.correlation, {python_line_builder::gpu_kind::memset, span(c.start, c.end), 0, 0, false}});
  }
}

void add_host_side(accumulator_state& s, const trace::device_trace& t) {
  for (const auto& a : t.api_calls) {
    const std::uint32_t id = s.intern(a.name, s.last_api);
    const trace::api_kind kind = s.kind_of(id);
    s.calls.push_back({a.start, a.end, a.thread, a.correlation, id, kind});
    ++s.api_threads[a.thread];
    if (!s.inside(a.start)) continue;
    s.counts.add_call(kind, span(a.start, a.end));
  }
  for (const auto& y : t.syncs) {
    s.syncs.push_back({y.start, y.end, y.correlation, y.type});
    if (s.inside(y.start)) s.counts.add_sync_record(span(y.start, y.end));
  }
  for (const auto& r : t.ranges) {
    if (r.domain == "speedlab") ++s.phase_range_threads[r.thread];
    s.ranges.push_back({r.start, r.end, r.thread, s.intern(r.domain, s.last_domain), s.intern(r.name, s.last_range)});
  }
}

// ---- finish(), step by step ----

// A process's source passes (one per CUDA context) as one: every kernel, most samples first.
std::optional<source::source_pass> merge_source_passes(const std::vector<source::source_pass>& passes) {
  if (passes.empty()) return std::nullopt;
  source::source_pass s = passes.front();
  for (std::size_t i = 1; i < passes.size(); ++i) {
    const auto& x = passes[i];
    s.kernels.insert(s.kernels.end(), x.kernels.begin(), x.kernels.end());
    s.total_samples += x.total_samples;
    s.dropped_samples += x.dropped_samples;
    s.pass_wall_ns += x.pass_wall_ns;
    s.setup_wall_ns += x.setup_wall_ns;
  }
  std::stable_sort(s.kernels.begin(), s.kernels.end(), [](const auto& a, const auto& b) { return a.samples > b.samples; });
  return s;
}

// The summary's facts, counters and lifetime window: what every process has, CUDA or not.
process_summary summary_head(const accumulator_state& st, const profile::process_profile& p) {
  const trace::device_trace& t = p.trace;
  process_summary s;
  s.info = p.process;
  s.label = process_label(p.process);
  s.backend = t.backend;
  s.note = t.note;
  s.records = st.records;
  for (const auto& pass : p.counters) { // one per context: the first one's settings, every kernel
    if (!s.counters) {
      s.counters = pass;
      continue;
    }
    s.counters->kernels.insert(s.counters->kernels.end(), pass.kernels.begin(), pass.kernels.end());
    s.counters->launches += pass.launches;
    s.counters->skipped += pass.skipped;
    s.counters->dropped_ranges += pass.dropped_ranges;
    s.counters->pass_wall_ns += pass.pass_wall_ns;
  }
  s.source = merge_source_passes(p.source);
  // The lifetime window: the stream's own, else the process's start to end (a truncated
  // stream ends at its last flush).
  if (!t.repetitions.empty()) {
    s.window_start = t.repetitions.front().start;
    s.window_end = t.repetitions.front().end;
  } else {
    s.window_start = p.process.start_ns;
    s.window_end = p.process.truncated && p.process.last_flush_ns ? p.process.last_flush_ns : p.process.end_ns;
  }
  return s;
}

// The thread whose calls classify GPU-idle time (analysis::phase_thread's choice).
std::uint32_t classifying_thread(const accumulator_state& st, const trace::device_trace& t) {
  return split::choose_thread(st.phase_range_threads, st.api_threads, t.process);
}

struct window_splits {
  time_split whole, steady;
  split_estimate api_whole, api_steady; // launch calls in windows only (`windows`)
};

// Launch calls recorded in windows only: the launches whose call is not in the trace (the
// kernels' distinct correlation ids no recorded call has; a graph's kernels share one), in the
// whole window and after `mid` (ids are handed out in call order: after the last call that
// started before mid), and the API time they took, estimated from the windows.
void estimate_sampled(const accumulator_state& st, std::uint32_t thread, const split::sets& sets,
                      const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows, std::uint64_t lo,
                      std::uint64_t mid, std::uint64_t hi, window_splits& out) {
  sampled_launches launches;
  std::vector<std::uint32_t> recorded, unrecorded;
  std::uint32_t before_mid = 0;
  for (const auto& a : st.calls) {
    if (a.start < mid && a.correlation) before_mid = std::max(before_mid, a.correlation);
    if (a.kind != trace::api_kind::launch) continue;
    launches.call_starts.push_back(a.start);
    if (a.correlation) recorded.push_back(a.correlation);
    if (a.thread == thread) launches.phase_calls.emplace_back(a.start, a.end);
  }
  std::sort(launches.call_starts.begin(), launches.call_starts.end());
  intervals::merge_in_place(launches.phase_calls);
  std::sort(recorded.begin(), recorded.end());
  for (const auto& g : st.launched)
    if (g.kernel && g.correlation && !std::binary_search(recorded.begin(), recorded.end(), g.correlation))
      unrecorded.push_back(g.correlation);
  std::sort(unrecorded.begin(), unrecorded.end());
  unrecorded.erase(std::unique(unrecorded.begin(), unrecorded.end()), unrecorded.end());
  const auto after_mid =
      static_cast<std::size_t>(unrecorded.end() - std::upper_bound(unrecorded.begin(), unrecorded.end(), before_mid));
  out.api_whole = estimate_unrecorded_api(sets, launches, windows, lo, hi, unrecorded.size(), out.whole);
  out.api_steady =
      estimate_unrecorded_api(sets, launches, windows, mid, hi, mid > lo ? after_mid : unrecorded.size(), out.steady);
}

// The time split of the window [lo, hi) and of its steady state [mid, hi), in one sweep over
// the split's sets (time_split.hpp), built from the accumulated records. With launch calls
// recorded in `windows` only (sorted), the API time of those outside is estimated from them.
window_splits split_window(accumulator_state& st, std::uint32_t thread, std::uint64_t lo, std::uint64_t mid,
                           std::uint64_t hi, const std::vector<std::pair<std::uint64_t, std::uint64_t>>* windows) {
  if (hi <= lo) return {split::split_of({}, lo, hi), split::split_of({}, mid, hi), {}, {}};
  mid = std::clamp(mid, lo, hi);
  st.copy_kind_of_call.finish();
  split::sets sets;
  sets[split::kernel].reserve(st.kernels_inside.size() + st.kernels_outside.size());
  sets[split::kernel] = st.kernels_inside;
  sets[split::kernel].insert(sets[split::kernel].end(), st.kernels_outside.begin(), st.kernels_outside.end());
  for (const auto& c : st.copies) sets[split::copy_category(c.kind, false)].emplace_back(c.start, c.end);
  sets[split::memset] = st.memsets;
  split::add_host_sets(
      st.calls, st.syncs, thread, [](const api_rec& a) { return a.kind; }, st.copy_kind_of_call, sets);
  split::merge_all(sets);
  const auto sum = split::first_cover(sets, lo, mid, hi);
  split::sums whole{};
  for (std::size_t c = 0; c < split::categories; ++c) whole[c] = sum.before[c] + sum.after[c];
  window_splits out{split::split_of(whole, lo, hi), split::split_of(sum.after, mid, hi), {}, {}};
  if (windows) estimate_sampled(st, thread, sets, *windows, lo, mid, hi, out);
  return out;
}

// The trace statistics the rules read: summarize_trace's, from the accumulated records.
trace_summary trace_statistics(accumulator_state& st, const trace::device_trace& t) {
  trace_summary ts = start_summary(st.windows, t.dropped_records);
  std::vector<std::pair<const std::string*, kernel_launches*>> by_name;
  for (std::size_t id = 0; id < st.kernels_by_name.size(); ++id)
    if (!st.kernels_by_name[id].durations.empty()) by_name.emplace_back(st.names[id], &st.kernels_by_name[id]);
  std::sort(by_name.begin(), by_name.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  add_kernel_stats(ts, std::move(by_name));
  ts.h2d = st.h2d;
  ts.d2h = st.d2h;
  ts.other_copies = st.other_copies;
  std::vector<interval> copies_inside;
  for (const auto& c : st.copies)
    if (c.inside) copies_inside.emplace_back(c.start, c.end);
  std::vector<interval> kernel_set = st.kernels_inside;
  merge_in_place(kernel_set);
  merge_in_place(copies_inside);
  ts.copy_kernel_overlap_ns = intervals::intersection(kernel_set, copies_inside);
  st.counts.fill(ts);
  return ts;
}

// GPU busy time (kernels, copies, memsets merged) and the kernels' starts, sorted; the
// kernel, copy and memset stores are released.
std::vector<interval> gpu_busy(accumulator_state& st, std::vector<std::uint64_t>& kernel_starts) {
  kernel_starts.reserve(st.kernels_inside.size() + st.kernels_outside.size());
  std::vector<interval> busy;
  busy.reserve(st.kernels_inside.size() + st.kernels_outside.size() + st.copies.size() + st.memsets.size());
  // Each kind comes in (nearly) start order: sort the runs, then merge them, rather than
  // sorting millions of intervals at once.
  std::vector<std::size_t> runs{0};
  for (auto* v : {&st.kernels_inside, &st.kernels_outside}) {
    for (const auto& k : *v) kernel_starts.push_back(k.first), busy.push_back(k);
    release(*v);
    runs.push_back(busy.size());
  }
  for (const auto& c : st.copies) busy.emplace_back(c.start, c.end);
  runs.push_back(busy.size());
  busy.insert(busy.end(), st.memsets.begin(), st.memsets.end());
  runs.push_back(busy.size());
  release(st.copies), release(st.memsets);
  const auto at = [&](std::size_t i) { return busy.begin() + static_cast<long>(runs[i]); };
  for (std::size_t i = 0; i + 1 < runs.size(); ++i)
    if (!std::is_sorted(at(i), at(i + 1))) std::sort(at(i), at(i + 1));
  for (std::size_t i = 2; i < runs.size(); ++i) std::inplace_merge(at(0), at(i - 1), at(i));
  merge_in_place(busy);
  if (!std::is_sorted(kernel_starts.begin(), kernel_starts.end())) std::sort(kernel_starts.begin(), kernel_starts.end());
  return busy;
}

using range_rows_by_id = std::map<std::pair<std::uint32_t, std::uint32_t>, program_range*>;

// A call and what it launched (GPU time, kernels); in add_launched, running sums over the calls.
struct launch_sum {
  std::uint64_t start;
  double ns;
  std::size_t kernels;
};

// Every API call in start order that launched GPU work, with that work's time and kernels
// (records matched to calls by correlation id, walking forward from the previous call);
// consumes `st.launched`, sorting it in place.
std::vector<launch_sum> launched_by_call_sorted(accumulator_state& st) {
  std::vector<launch_sum> out;
  auto& gpu = st.launched; // sorted where it is: a copy would double its memory for a moment
  std::sort(gpu.begin(), gpu.end(), [](const auto& a, const auto& b) { return a.correlation < b.correlation; });
  auto at = gpu.begin();
  std::uint32_t previous = 0;
  for (const auto& a : st.calls) {
    if (a.correlation == 0) continue;
    // Calls come nearly in correlation order (ids are handed out at call entry): walk
    // forward from the previous one, search only when one goes back.
    if (a.correlation < previous)
      at = std::lower_bound(gpu.begin(), gpu.end(), a.correlation,
                            [](const auto& g, std::uint32_t c) { return g.correlation < c; });
    while (at != gpu.end() && at->correlation < a.correlation) ++at;
    previous = a.correlation;
    double ns = 0;
    std::size_t kernels = 0;
    for (auto rec = at; rec != gpu.end() && rec->correlation == a.correlation; ++rec) {
      ns += rec->ns;
      kernels += rec->kernel ? 1 : 0;
    }
    if (ns > 0 || kernels > 0) out.push_back({a.start, ns, kernels});
  }
  release(gpu);
  return out;
}

// As launched_by_call_sorted; CUPTI numbers a process's calls densely, so a table indexed by
// correlation id answers without sorting the records; sparse ids (a merged trace) sort them.
std::vector<launch_sum> launched_by_call(accumulator_state& st) {
  std::uint32_t lo = UINT32_MAX, hi = 0;
  for (const auto& g : st.launched) lo = std::min(lo, g.correlation), hi = std::max(hi, g.correlation);
  if (st.launched.empty() || std::size_t{hi - lo} >= 4 * st.launched.size() + 1024) return launched_by_call_sorted(st);
  std::vector<std::pair<double, std::uint32_t>> by_id(std::size_t{hi - lo} + 1, {0.0, 0u});
  for (const auto& g : st.launched) {
    auto& e = by_id[g.correlation - lo];
    e.first += g.ns;
    e.second += g.kernel ? 1 : 0;
  }
  release(st.launched);
  std::vector<launch_sum> out;
  out.reserve(st.calls.size()); // at most one a call: no copy while it grows
  for (const auto& a : st.calls) {
    if (a.correlation == 0 || a.correlation < lo || a.correlation > hi) continue;
    const auto& e = by_id[a.correlation - lo];
    if (e.first > 0 || e.second > 0) out.push_back({a.start, e.first, e.second});
  }
  return out;
}

using launch_windows = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// True when [start, end) lies wholly inside one of the sorted windows.
bool inside_a_window(const launch_windows& windows, std::uint64_t start, std::uint64_t end) {
  auto after = std::upper_bound(windows.begin(), windows.end(), start,
                                [](std::uint64_t v, const auto& w) { return v < w.first; });
  return after != windows.begin() && end <= std::prev(after)->second;
}

// What each range launched: the calls that started while it was open, on any thread (a
// PyTorch training step launches its backward pass from autograd's own thread), in start
// order with running sums of the GPU time and kernels they launched (records matched to
// calls by correlation id); a range's share is the difference of the sums at its end and
// at its start. With launch calls sampled (`windows`), only a range wholly inside a window
// saw every call it made: the others' calls are partly missing, so they are left out and
// counted apart (range_rows scales the measured ones up).
void add_launched(accumulator_state& st, range_rows_by_id& by_id, const launch_windows* windows,
                  std::map<program_range*, std::size_t>& measured) {
  std::vector<launch_sum> calls = launched_by_call(st);
  // st.calls is in start order already, and so is what was built from it.
  const auto call_by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  if (!std::is_sorted(calls.begin(), calls.end(), call_by_start))
    std::stable_sort(calls.begin(), calls.end(), call_by_start);
  for (std::size_t i = 1; i < calls.size(); ++i) {
    calls[i].ns += calls[i - 1].ns;
    calls[i].kernels += calls[i - 1].kernels;
  }
  auto before = [&calls](std::uint64_t when) { // the sums over the calls that start before `when`
    auto next = std::lower_bound(calls.begin(), calls.end(), when,
                                 [](const launch_sum& c, std::uint64_t v) { return c.start < v; });
    return next == calls.begin() ? launch_sum{when, 0, 0} : *(next - 1);
  };
  for (const auto& r : st.ranges) {
    if (r.end <= r.start) continue;
    program_range* row = by_id[{r.domain, r.name}];
    if (windows) {
      if (!inside_a_window(*windows, r.start, r.end)) continue;
      ++measured[row];
    }
    const launch_sum a = before(r.start), b = before(r.end);
    row->launched_gpu_ns += b.ns - a.ns;
    row->launched_kernels += b.kernels - a.kernels;
  }
}

// A sampled process's range row: its launched figures, measured on `measured` of its ranges
// (those of positive length inside a window), scaled to all of them; unknown (0, measured 0)
// when none was measured.
void scale_launched(program_range& row, std::size_t measured, std::size_t timed) {
  row.launched_measured = measured;
  if (measured == 0) {
    row.launched_gpu_ns = 0;
    row.launched_kernels = 0;
    return;
  }
  const double factor = static_cast<double>(timed) / static_cast<double>(measured);
  row.launched_gpu_ns *= factor;
  row.launched_kernels = static_cast<std::size_t>(std::llround(static_cast<double>(row.launched_kernels) * factor));
}

// The NVTX ranges by domain and name: their time, the GPU busy inside them, the kernels
// that started inside, and what they launched (`windows`: launch calls sampled in them).
std::vector<program_range> range_rows(accumulator_state& st, const std::vector<interval>& busy,
                                      const std::vector<std::uint64_t>& kernel_starts, const launch_windows* windows) {
  std::map<std::pair<std::string, std::string>, program_range> by_name;
  range_rows_by_id by_id;
  std::map<program_range*, std::size_t> timed, measured; // ranges of positive length; those inside a window
  for (const auto& r : st.ranges) {
    program_range*& row = by_id[{r.domain, r.name}];
    if (!row) row = &by_name[{*st.names[r.domain], *st.names[r.name]}];
    ++row->count;
    row->total_ns += span(r.start, r.end);
    if (r.end <= r.start) continue;
    ++timed[row];
    row->gpu_ns += intervals::measure(busy, r.start, r.end);
    row->kernels += static_cast<std::size_t>(std::lower_bound(kernel_starts.begin(), kernel_starts.end(), r.end) -
                                             std::lower_bound(kernel_starts.begin(), kernel_starts.end(), r.start));
  }
  if (!st.ranges.empty()) add_launched(st, by_id, windows, measured);
  release(st.launched);
  std::vector<program_range> out;
  for (auto& [key, row] : by_name) {
    row.domain = key.first;
    row.name = key.second;
    if (windows) scale_launched(row, measured[&row], timed[&row]);
    out.push_back(std::move(row));
  }
  return out;
}

// What the host thread was inside during a GPU idle gap [lo, hi): a CUDA call covering most
// of it (by name), else the innermost NVTX range around it, else "host code". `first_call`
// moves forward with the gaps (calls of one thread do not overlap: their ends ascend).
std::string inside_gap(const accumulator_state& st, const std::vector<const api_rec*>& calls, std::size_t& first_call,
                       range_cursor& cursor, std::uint64_t lo, std::uint64_t hi) {
  while (first_call < calls.size() && calls[first_call]->end <= lo) ++first_call;
  const api_rec* widest = nullptr;
  double widest_ns = 0;
  for (std::size_t c = first_call; c < calls.size() && calls[c]->start < hi; ++c) {
    const double inside = span(std::max(calls[c]->start, lo), std::min(calls[c]->end, hi));
    if (inside > widest_ns) {
      widest_ns = inside;
      widest = calls[c];
    }
  }
  if (widest && widest_ns >= span(lo, hi) / 2) return std::string(trace::strip_api_version(*st.names[widest->name]));
  if (const auto* r = cursor.at(lo + (hi - lo) / 2)) return "range " + *st.names[r->name];
  return "host code";
}

// GPU idle gaps between GPU activities, by what the host was inside.
// Only the steady state's gaps count (a gap across its start, from there): start-up is the
// start-up rule's.
gap_summary idle_gaps(const accumulator_state& st, const std::vector<interval>& busy, std::uint32_t thread,
                      std::uint64_t window_start, std::uint64_t steady_start) {
  gap_summary g;
  if (steady_start == UINT64_MAX) steady_start = 0;
  g.active_span_ns = span(std::max(busy.front().first, steady_start), busy.back().second);
  g.before_first_ns = span(window_start, busy.front().first);
  std::vector<const api_rec*> calls;
  for (const auto& a : st.calls)
    if (a.thread == thread) calls.push_back(&a);
  std::vector<const range_rec*> ranges;
  for (const auto& r : st.ranges)
    if (r.thread == thread) ranges.push_back(&r);
  if (ranges.empty())
    for (const auto& r : st.ranges) ranges.push_back(&r);
  range_cursor cursor(std::move(ranges));
  std::map<std::string, idle_cause> causes;
  std::size_t first_call = 0;
  for (std::size_t i = 1; i < busy.size(); ++i) {
    const std::uint64_t lo = std::max(busy[i - 1].second, steady_start), hi = busy[i].first;
    const double length = span(lo, hi);
    if (length < st.options.gap_min_ns) continue;
    const std::string what = inside_gap(st, calls, first_call, cursor, lo, hi);
    auto& c = causes[what];
    ++c.gaps;
    c.total_ns += length;
    c.largest_ns = std::max(c.largest_ns, length);
    ++g.count;
    g.total_ns += length;
    if (length > g.largest_ns) {
      g.largest_ns = length;
      g.largest_at_ns = span(window_start, lo);
      g.largest_inside = what;
    }
  }
  for (auto& [what, c] : causes) {
    c.what = what;
    g.causes.push_back(std::move(c));
  }
  std::stable_sort(g.causes.begin(), g.causes.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return g;
}

// Where the steady state starts: the first start of the program's step range (its own
// repeating NVTX range with the most time in it, as rank_analysis finds steps), else the
// first kernel; UINT64_MAX without kernels. Clipped to the window.
std::pair<std::uint64_t, std::string> steady_state_start(const accumulator_state& st, std::uint64_t lo,
                                                         std::uint64_t hi) {
  if (st.first_kernel == UINT64_MAX) return {UINT64_MAX, ""};
  struct use {
    std::size_t count = 0;
    double total_ns = 0;
    std::uint64_t first = UINT64_MAX;
  };
  std::map<std::string, use> by_name; // by name: ties go to the first in name order
  std::map<std::pair<std::uint32_t, std::uint32_t>, use*> by_id;
  for (const auto& r : st.ranges) {
    use*& u = by_id[{r.domain, r.name}];
    if (!u) {
      if (*st.names[r.domain] == "speedlab") continue; // speedlab's own phases are no steps
      u = &by_name[*st.names[r.name]];
    }
    ++u->count;
    u->total_ns += span(r.start, r.end);
    u->first = std::min(u->first, r.start);
  }
  const std::pair<const std::string, use>* best = nullptr;
  for (const auto& entry : by_name)
    if (entry.second.count >= 2 && (!best || entry.second.total_ns > best->second.total_ns)) best = &entry;
  std::pair<std::uint64_t, std::string> out{st.first_kernel, "first kernel"};
  if (best) out = {best->second.first, "nvtx:" + best->first};
  out.first = std::clamp(out.first, lo, std::max(lo, hi));
  return out;
}

// The start-up: time to the first kernel, the GPU's idle before the steady state, and the
// classifying thread's CUDA calls before the first kernel by name.
startup_summary startup_figures(const accumulator_state& st, const std::vector<interval>& busy, std::uint32_t thread,
                                std::uint64_t window_start, const std::pair<std::uint64_t, std::string>& steady) {
  startup_summary u;
  if (steady.first == UINT64_MAX) return u;
  u.known = true;
  u.to_first_kernel_ns = span(window_start, st.first_kernel);
  u.steady_start_ns = span(window_start, steady.first);
  u.steady_method = steady.second;
  u.idle_ns = std::max(0.0, u.steady_start_ns - intervals::measure(busy, window_start, steady.first));
  std::map<std::string, call_time> by_name;
  for (const auto& a : st.calls) { // in start order
    if (a.start >= st.first_kernel) break;
    if (a.thread != thread) continue;
    auto& c = by_name[std::string(trace::strip_api_version(*st.names[a.name]))];
    ++c.calls;
    c.total_ns += span(std::max(a.start, window_start), std::min(a.end, st.first_kernel));
  }
  for (auto& [name, c] : by_name) {
    c.name = name;
    u.calls.push_back(std::move(c));
  }
  std::stable_sort(u.calls.begin(), u.calls.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  if (u.calls.size() > 10) u.calls.resize(10); // the few that matter; the summary stays small
  return u;
}

// The lines of a Python program (python_lines.hpp): its calls and GPU records joined with the
// stacks its capture recorded, by correlation id. Before host_call_figures releases the calls.
python_lines python_line_figures(accumulator_state& st, const python_input& in, bool launches_windowed) {
  python_line_builder b(in);
  if (launches_windowed) b.launches_windowed();
  for (const auto& a : st.calls) b.add_call(a.correlation, a.kind, a.thread, a.start, a.end, *st.names[a.name]);
  for (const auto& g : st.python_gpu) b.add_gpu(g.correlation, g.work);
  release(st.python_gpu);
  return b.finish();
}

// The fewest launch calls of a sampled process whose median is taken as its launch cost.
constexpr std::size_t min_sampled_launches = 20;

// Allocations, synchronous pageable copies and the launch cost, from the host's calls
// (released after).
void host_call_figures(accumulator_state& st, process_summary& s) {
  s.pageable_sync = st.pageable_sync;
  if (st.first_kernel != UINT64_MAX) s.allocs.steady_span_ns = span(st.first_kernel, st.last_busy);
  std::sort(st.pageable_sync_calls.begin(), st.pageable_sync_calls.end());
  std::vector<double> launch_ns;
  for (const auto& a : st.calls) {
    const double ns = span(a.start, a.end);
    switch (a.kind) {
    case trace::api_kind::launch: launch_ns.push_back(ns); break;
    case trace::api_kind::alloc:
    case trace::api_kind::free: {
      (a.kind == trace::api_kind::alloc ? s.allocs.allocs : s.allocs.frees)++;
      s.allocs.ns += ns;
      if (a.start > st.first_kernel) {
        ++s.allocs.repeated;
        s.allocs.repeated_ns += ns;
      }
      break;
    }
    case trace::api_kind::copy_sync:
      if (std::binary_search(st.pageable_sync_calls.begin(), st.pageable_sync_calls.end(), a.correlation))
        s.pageable_sync.call_ns += ns;
      break;
    default: break;
    }
  }
  release(st.calls);
  // Launch calls sampled: a median of a few calls is no launch cost (in a short loop the
  // windows may catch only the first launches, which load modules and take milliseconds):
  // below min_sampled_launches it is left unknown, and the rules take the device's latency.
  if (s.sampling && launch_ns.size() < min_sampled_launches) return;
  if (!launch_ns.empty()) s.launch_call_median_ns = speedlab::stats::quantile(std::move(launch_ns), 0.5);
}

// Whether t lies inside one of the sorted windows, or within margin of one.
bool near_a_window(const launch_windows& windows, std::uint64_t t, std::uint64_t margin) {
  // The first window that ends at or after t - margin; t is near it if it starts by t + margin.
  const auto it = std::lower_bound(windows.begin(), windows.end(), t > margin ? t - margin : 0,
                                   [](const auto& w, std::uint64_t v) { return w.second < v; });
  return it != windows.end() && it->first <= t + margin;
}

// A one-kernel launch call launches one kernel: a later kernel with its correlation id carries
// a stale id (the kernels launched while the capture switch had every callback off appear to
// carry an earlier call's: docs/results/light-capture.md). Those ids are dropped (0: no call)
// wherever the process's kernels are matched to calls: the launched records (ranges, sampling),
// the Python lines' GPU records and the critical path's ops, each holding the kernels in the
// order they came. Graph launches keep theirs: all their kernels carry the call's id (as did
// the multi-device cooperative launch's, gone from CUDA 13's headers).
std::vector<bool> stale_kernels_of(accumulator_state& st) {
  std::vector<std::uint32_t> one_kernel; // correlation ids of the recorded non-graph launch calls
  for (const auto& a : st.calls)
    if (a.kind == trace::api_kind::launch && a.correlation != 0 && !trace::is_graph_launch(*st.names[a.name]) &&
        st.names[a.name]->find("MultiDevice") == std::string::npos)
      one_kernel.push_back(a.correlation);
  std::sort(one_kernel.begin(), one_kernel.end());
  std::vector<bool> taken(one_kernel.size()), stale;
  for (auto& g : st.launched) {
    if (!g.kernel) continue;
    const auto it = std::lower_bound(one_kernel.begin(), one_kernel.end(), g.correlation);
    const bool ours = it != one_kernel.end() && *it == g.correlation;
    const bool repeat = ours && taken[static_cast<std::size_t>(it - one_kernel.begin())];
    if (ours) taken[static_cast<std::size_t>(it - one_kernel.begin())] = true;
    stale.push_back(repeat);
    if (repeat) g.correlation = 0, ++st.stale_kernels;
  }
  if (st.stale_kernels == 0) return {};
  std::size_t i = 0;
  for (auto& g : st.python_gpu)
    if (g.work.kind == python_line_builder::gpu_kind::kernel && stale[i++]) g.correlation = 0;
  return stale;
}

// The critical path's kernel ops, in the order they came, with the stale ids dropped.
void drop_stale_path_ids(path_records& r, const std::vector<bool>& stale) {
  if (stale.empty() || r.over_limit) return;
  std::size_t i = 0;
  for (auto& o : r.ops)
    if (o.kind == path_records::kernel_op && i < stale.size() && stale[i++]) o.correlation = 0;
}

// A process whose launch calls were sampled: its windows (sorted), what they cover of
// [lo, hi), and how many kernels have their launch call in the trace (read before range_rows
// consumes st.launched).
launch_sampling sampling_of(const accumulator_state& st, launch_windows& windows, std::uint64_t lo, std::uint64_t hi) {
  launch_sampling x;
  std::sort(windows.begin(), windows.end());
  x.windows = windows.size();
  for (const auto& [a, b] : windows)
    if (std::min(b, hi) > std::max(a, lo)) x.covered_ns += span(std::max(a, lo), std::min(b, hi));
  std::vector<std::uint32_t> launches;
  for (const auto& a : st.calls) {
    if (a.kind != trace::api_kind::launch) continue;
    if (a.correlation != 0) launches.push_back(a.correlation);
    x.launch_calls_outside += near_a_window(windows, a.start, launch_sampling::outside_margin_ns) ? 0 : 1;
  }
  std::sort(launches.begin(), launches.end());
  x.launch_calls = launches.size();
  for (const auto& g : st.launched) {
    if (!g.kernel) continue;
    ++x.kernels;
    x.kernels_with_call += std::binary_search(launches.begin(), launches.end(), g.correlation) ? 1 : 0;
  }
  x.kernels_sharing_a_call = st.stale_kernels;
  return x;
}

// The launch-call count and time of a sampled process are of the recorded calls: scaled by
// all kernels over those with a recorded call, so they still read as "all launches".
void scale_sampled_launches(process_summary& s) {
  launch_sampling& x = *s.sampling;
  const double f = x.scale();
  s.trace.launch_calls = static_cast<std::size_t>(std::llround(static_cast<double>(s.trace.launch_calls) * f));
  s.trace.launch_call_ns *= f;
  for (const auto& r : s.ranges) {
    x.range_instances += r.count;
    x.range_instances_measured += r.launched_measured.value_or(0);
  }
}

} // namespace

struct process_accumulator::state : accumulator_state {
  path_accumulator path; // what the critical path walks (analysis/critical_path.hpp)
};

process_accumulator::process_accumulator(std::vector<trace::repetition_window> trace_windows, program_options options)
    : m(std::make_unique<state>()) {
  std::sort(trace_windows.begin(), trace_windows.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  m->windows = std::move(trace_windows);
  m->options = std::move(options);
}

process_accumulator::~process_accumulator() = default;
process_accumulator::process_accumulator(process_accumulator&&) noexcept = default;
process_accumulator& process_accumulator::operator=(process_accumulator&&) noexcept = default;

void process_accumulator::track_python() { m->python = true; }

void process_accumulator::add(const trace::device_trace& t) {
  state& s = *m;
  s.records += t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.api_calls.size() + t.syncs.size() +
               t.ranges.size() + t.overheads.size();
  s.any_gpu |= t.has_gpu_activity();
  s.any_api |= !t.api_calls.empty();
  add_kernels(s, t.kernels);
  add_copies_and_memsets(s, t);
  add_host_side(s, t);
  s.path.add(t);
}

process_summary process_accumulator::finish(const profile::process_profile& p) {
  state& st = *m;
  process_summary s = summary_head(st, p);
  if (!p.process.used_cuda && !st.any_gpu && !st.any_api) return s;
  const std::uint32_t thread = classifying_thread(st, p.trace);
  // API calls in start order (a stable sort: equal starts keep their order in the stream).
  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  if (!std::is_sorted(st.calls.begin(), st.calls.end(), by_start)) std::stable_sort(st.calls.begin(), st.calls.end(), by_start);
  const std::vector<bool> stale = stale_kernels_of(st);
  const auto steady = steady_state_start(st, s.window_start, s.window_end);
  const bool steady_later = steady.first != UINT64_MAX && steady.first > s.window_start;
  const bool sampled = profile::launch_calls_sampled(p);
  launch_windows windows = p.launch_windows;
  std::sort(windows.begin(), windows.end());
  const window_splits splits = split_window(st, thread, s.window_start, steady_later ? steady.first : s.window_start,
                                            s.window_end, sampled ? &windows : nullptr);
  s.split = splits.whole;
  s.steady_split = steady_later ? splits.steady : splits.whole;
  s.trace = trace_statistics(st, p.trace);
  if (st.python)
    if (const auto in = python_input_of(p)) s.python = python_line_figures(st, *in, sampled);
  std::vector<std::uint64_t> kernel_starts;
  std::vector<interval> busy = gpu_busy(st, kernel_starts);
  s.startup = startup_figures(st, busy, thread, s.window_start, steady);
  if (sampled) {
    s.sampling = sampling_of(st, windows, s.window_start, s.window_end);
    s.sampling->api_lifetime = splits.api_whole;
    s.sampling->api_steady = steady_later ? splits.api_steady : splits.api_whole;
  }
  s.ranges = range_rows(st, busy, kernel_starts, s.sampling ? &windows : nullptr);
  if (s.sampling) scale_sampled_launches(s);
  release(kernel_starts);
  for (auto& [key, row] : st.streams) {
    row.pid = p.process.pid;
    s.streams.push_back(row);
  }
  if (!busy.empty()) s.gaps = idle_gaps(st, busy, thread, s.window_start, steady.first);
  release(busy);
  host_call_figures(st, s);
  if (st.any_gpu) {
    path_records r = st.path.finish();
    drop_stale_path_ids(r, stale);
    s.path = std::make_shared<const path_records>(std::move(r));
  }
  return s;
}

process_summary summarize_process(const profile::process_profile& p, const program_options& options) {
  process_accumulator acc(p.trace.repetitions, options);
  if (is_python_process(p.process)) acc.track_python();
  acc.add(p.trace);
  return acc.finish(p);
}

activity_summary summarize_activity(trace::device_trace trace, const program_options& options) {
  profile::process_profile p;
  p.process.pid = trace.process;
  p.process.used_cuda = true;
  if (!trace.repetitions.empty()) {
    const trace::repetition_window all{trace.repetitions.front().start, trace.repetitions.back().end, 0, 0};
    trace.repetitions = {all};
  }
  p.trace = std::move(trace);
  return summarize_process(p, options);
}

} // namespace speedlab::analysis

namespace speedlab::analysis {

bool is_python_process(const profile::process_info& info) { return info.tags.count("python") > 0; }

// The stream's ids (profile::python_calls, any numbers a stream holds) as dense indices: 0 is
// "none" (an empty stack, a frame of no program), so an id no chunk described reads as none.
std::optional<python_input> python_input_of(const profile::process_profile& p) {
  const profile::python_calls& py = p.python;
  if (py.calls.empty() && py.stacks.empty()) return std::nullopt;
  python_input in;
  in.interpreter = py.interpreter;
  std::unordered_map<std::uint32_t, std::uint32_t> frame_index, stack_index;
  in.frames.emplace_back();
  for (const auto& [id, f] : py.frames) {
    frame_index[id] = static_cast<std::uint32_t>(in.frames.size());
    in.frames.push_back({f.file, f.function, f.text, static_cast<std::uint32_t>(std::max(f.line, 0)), f.user});
  }
  in.stacks.emplace_back();
  for (const auto& [id, frames] : py.stacks) {
    stack_index[id] = static_cast<std::uint32_t>(in.stacks.size());
    auto& out = in.stacks.emplace_back();
    for (const std::uint32_t f : frames) {
      const auto it = frame_index.find(f);
      out.push_back(it == frame_index.end() ? 0 : it->second);
    }
  }
  in.calls.reserve(py.calls.size());
  for (const auto& [correlation, c] : py.calls) {
    const auto it = stack_index.find(c.stack);
    in.calls.push_back({correlation, it == stack_index.end() ? 0 : it->second,
                        static_cast<python_input::how>(static_cast<std::uint8_t>(c.how))});
  }
  return in;
}

} // namespace speedlab::analysis
