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

void kernel_launches::add(const trace::kernel_record& k, bool in_compute) {
  const double ns = intervals::span(k.start, k.end);
  durations.push_back(ns);
  total_ns += ns;
  if (in_compute) {
    ++compute_launches;
    compute_ns += ns;
  }
  if (ns > longest_ns || (ns == longest_ns && k.start < longest_start)) {
    longest_ns = ns;
    longest_start = k.start;
    grid = k.grid;
    block = k.block;
    registers = k.registers_per_thread;
    shared = k.static_shared_bytes + k.dynamic_shared_bytes;
  }
}

kernel_stats kernel_launches::finish(std::string name, std::vector<double>& all) {
  kernel_stats ks;
  ks.name = std::move(name);
  ks.launches = durations.size();
  ks.compute_phase_launches = compute_launches;
  ks.total_ns = total_ns;
  ks.compute_phase_ns = compute_ns;
  all.insert(all.end(), durations.begin(), durations.end());
  ks.min_ns = *std::min_element(durations.begin(), durations.end());
  ks.max_ns = *std::max_element(durations.begin(), durations.end());
  ks.median_ns = median_in_place(durations);
  std::vector<double>().swap(durations);
  ks.grid = grid;
  ks.block = block;
  ks.registers_per_thread = registers;
  ks.shared_bytes = shared;
  return ks;
}

void call_counts::add_call(trace::api_kind kind, double ns) {
  if (trace::synchronizes(kind)) {
    ++sync_calls;
    sync_call_ns += ns;
  } else if (kind == trace::api_kind::launch) {
    ++launch_calls;
    launch_call_ns += ns;
  }
}

void call_counts::add_sync_record(double ns) {
  ++sync_records;
  sync_record_ns += ns;
}

void call_counts::fill(trace_summary& s) const {
  s.sync_count = std::max(sync_records, sync_calls);
  s.sync_ns = std::max(sync_record_ns, sync_call_ns);
  s.launch_calls = launch_calls;
  s.launch_call_ns = launch_call_ns;
}

trace_summary start_summary(const std::vector<trace::repetition_window>& windows, std::uint64_t dropped_records) {
  trace_summary s;
  s.dropped_records = dropped_records;
  s.has_windows = !windows.empty();
  s.repetitions = windows.empty() ? 1 : windows.size();
  return s;
}

void add_kernel_stats(trace_summary& s, std::vector<std::pair<const std::string*, kernel_launches*>> kernels) {
  std::size_t launches = 0;
  for (const auto& [n, k] : kernels) launches += k->durations.size();
  s.kernel_durations.reserve(s.kernel_durations.size() + launches);
  for (auto& [n, k] : kernels) {
    kernel_stats ks = k->finish(*n, s.kernel_durations);
    s.kernel_launches += ks.launches;
    s.kernel_ns += ks.total_ns;
    s.kernels.push_back(std::move(ks));
  }
  std::stable_sort(s.kernels.begin(), s.kernels.end(),
                   [](const kernel_stats& a, const kernel_stats& b) { return a.total_ns > b.total_ns; });
}

trace_summary summarize_trace(const trace::device_trace& t) {
  std::vector<trace::repetition_window> windows = t.repetitions;
  std::sort(windows.begin(), windows.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  trace_summary s = start_summary(windows, t.dropped_records);
  auto inside = [&](std::uint64_t start) { return windows.empty() || repetition_of(windows, start) >= 0; };

  std::map<std::string, kernel_launches> by_name;
  std::vector<interval> kernel_iv, copy_iv;
  for (const auto& k : t.kernels) {
    if (!inside(k.start)) continue;
    by_name[k.name].add(k, in_compute_phase(windows, k.start));
    kernel_iv.emplace_back(k.start, k.end);
  }
  std::vector<std::pair<const std::string*, kernel_launches*>> kernels;
  for (auto& [name, k] : by_name) kernels.emplace_back(&name, &k);
  add_kernel_stats(s, std::move(kernels));

  for (const auto& m : t.memcpys) {
    if (!inside(m.start)) continue;
    copy_iv.emplace_back(m.start, m.end);
    if (m.copy_kind == trace::copy_htod) add_copy(s.h2d, m);
    else if (m.copy_kind == trace::copy_dtoh) add_copy(s.d2h, m);
    else add_copy(s.other_copies, m);
  }
  s.copy_kernel_overlap_ns = intervals::intersection(intervals::merged(std::move(kernel_iv)), intervals::merged(std::move(copy_iv)));

  call_counts calls;
  for (const auto& y : t.syncs)
    if (inside(y.start)) calls.add_sync_record(intervals::span(y.start, y.end));
  for (const auto& a : t.api_calls)
    if (inside(a.start)) calls.add_call(trace::classify_api(a.name), intervals::span(a.start, a.end));
  calls.fill(s);
  return s;
}

} // namespace speedlab::analysis
