#include "analysis/trace_summary.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/intervals.hpp"
#include "model/cuda_api.hpp"

namespace speedlab::analysis {

namespace {

using intervals::interval;

} // namespace

// Finds the repetition window holding t (windows sorted by start); -1 if none.
long repetition_of(const std::vector<trace::repetition_window>& w, std::uint64_t t) {
  auto it = std::upper_bound(w.begin(), w.end(), t,
                             [](std::uint64_t v, const trace::repetition_window& r) { return v < r.start; });
  if (it == w.begin()) return -1;
  --it;
  return t <= it->end ? static_cast<long>(it - w.begin()) : -1;
}

bool in_compute_phase(const std::vector<trace::repetition_window>& windows, std::uint64_t t) {
  if (windows.empty()) return true;
  const long w = repetition_of(windows, t);
  if (w < 0) return false;
  const auto& r = windows[static_cast<std::size_t>(w)];
  if (r.transfer_in_end == 0 && r.compute_end == 0) return true; // phases not recorded
  const std::uint64_t lo = r.transfer_in_end ? r.transfer_in_end : r.start;
  const std::uint64_t hi = r.compute_end ? r.compute_end : r.end;
  return t >= lo && t <= hi;
}

double median_in_place(std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<long>(mid))) / 2;
  return m;
}

void add_copy(copy_stats& c, const trace::memcpy_record& m) {
  const double ns = m.end > m.start ? static_cast<double>(m.end - m.start) : 0;
  const auto bytes = static_cast<double>(m.bytes);
  ++c.count;
  c.bytes += bytes;
  c.ns += ns;
  if (m.async) ++c.async_count;
  // The host side of the copy decides pageable vs pinned.
  const std::uint8_t host_kind = m.copy_kind == trace::copy_dtoh ? m.dst_kind : m.src_kind;
  if (host_kind == trace::mem_pageable) {
    ++c.pageable_count;
    c.pageable_bytes += bytes;
    c.pageable_ns += ns;
  } else if (host_kind == trace::mem_pinned) {
    c.pinned_bytes += bytes;
    c.pinned_ns += ns;
  }
}

// One kernel's launches in the windows: counts, durations (also appended to `durations`),
// the share in the compute phase, and the launch configuration of its longest launch.
template <class InCompute>
kernel_stats kernel_stats_of(const std::string& name, const std::vector<const trace::kernel_record*>& list,
                             InCompute&& in_compute, std::vector<double>& durations) {
  kernel_stats ks;
  ks.name = name;
  std::vector<double> d;
  d.reserve(list.size());
  const trace::kernel_record* longest = list.front();
  double longest_ns = -1;
  for (const auto* k : list) {
    const double ns = k->end > k->start ? static_cast<double>(k->end - k->start) : 0;
    d.push_back(ns);
    durations.push_back(ns);
    ks.total_ns += ns;
    if (in_compute(k->start)) {
      ++ks.compute_phase_launches;
      ks.compute_phase_ns += ns;
    }
    if (ns > longest_ns) {
      longest_ns = ns;
      longest = k;
    }
  }
  ks.launches = list.size();
  ks.min_ns = *std::min_element(d.begin(), d.end());
  ks.max_ns = *std::max_element(d.begin(), d.end());
  ks.median_ns = median_in_place(d);
  ks.grid = longest->grid;
  ks.block = longest->block;
  ks.registers_per_thread = longest->registers_per_thread;
  ks.shared_bytes = longest->static_shared_bytes + longest->dynamic_shared_bytes;
  return ks;
}

trace_summary summarize_trace(const trace::device_trace& t) {
  trace_summary s;
  s.dropped_records = t.dropped_records;
  std::vector<trace::repetition_window> windows = t.repetitions;
  std::sort(windows.begin(), windows.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  s.has_windows = !windows.empty();
  s.repetitions = windows.empty() ? 1 : windows.size();
  auto inside = [&](std::uint64_t start) { return windows.empty() || repetition_of(windows, start) >= 0; };
  auto in_compute = [&](std::uint64_t start) { return in_compute_phase(windows, start); };

  std::map<std::string, std::vector<const trace::kernel_record*>> by_name;
  std::vector<interval> kernel_iv, copy_iv;
  for (const auto& k : t.kernels) {
    if (!inside(k.start)) continue;
    by_name[k.name].push_back(&k);
    kernel_iv.emplace_back(k.start, k.end);
  }
  for (auto& [name, list] : by_name) {
    kernel_stats ks = kernel_stats_of(name, list, in_compute, s.kernel_durations);
    s.kernel_launches += ks.launches;
    s.kernel_ns += ks.total_ns;
    s.kernels.push_back(std::move(ks));
  }
  std::stable_sort(s.kernels.begin(), s.kernels.end(),
                   [](const kernel_stats& a, const kernel_stats& b) { return a.total_ns > b.total_ns; });

  for (const auto& m : t.memcpys) {
    if (!inside(m.start)) continue;
    copy_iv.emplace_back(m.start, m.end);
    if (m.copy_kind == trace::copy_htod) add_copy(s.h2d, m);
    else if (m.copy_kind == trace::copy_dtoh) add_copy(s.d2h, m);
    else add_copy(s.other_copies, m);
  }
  s.copy_kernel_overlap_ns = intervals::intersection(intervals::merged(std::move(kernel_iv)), intervals::merged(std::move(copy_iv)));

  std::size_t sync_records = 0, sync_calls = 0;
  double sync_record_ns = 0, sync_call_ns = 0;
  for (const auto& y : t.syncs) {
    if (!inside(y.start)) continue;
    ++sync_records;
    sync_record_ns += y.end > y.start ? static_cast<double>(y.end - y.start) : 0;
  }
  for (const auto& a : t.api_calls) {
    if (!inside(a.start)) continue;
    const double ns = a.end > a.start ? static_cast<double>(a.end - a.start) : 0;
    const trace::api_kind kind = trace::classify_api(a.name);
    if (trace::synchronizes(kind)) { // synchronous copies count as copies above
      ++sync_calls;
      sync_call_ns += ns;
    } else if (kind == trace::api_kind::launch) {
      ++s.launch_calls;
      s.launch_call_ns += ns;
    }
  }
  // CUPTI reports a synchronization both as an activity record and as the API call.
  s.sync_count = std::max(sync_records, sync_calls);
  s.sync_ns = std::max(sync_record_ns, sync_call_ns);
  return s;
}

} // namespace speedlab::analysis
