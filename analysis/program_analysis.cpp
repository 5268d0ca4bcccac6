#include "analysis/program_analysis.hpp"
#include "analysis/rank_accumulator.hpp"
#include "analysis/program_stream.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <unordered_map>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/intervals.hpp"
#include "analysis/program_rules.hpp"
#include "analysis/roofline.hpp"
#include "analysis/rules.hpp"
#include "analysis/time_split.hpp"
#include "analysis/what_if.hpp"
#include "model/cuda_api.hpp"
#include "model/profile_stream.hpp"
#include "model/trace_fold.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {
namespace {

using intervals::interval;

double span(std::uint64_t start, std::uint64_t end) { return end > start ? static_cast<double>(end - start) : 0; }

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

void add_split(time_split& sum, const time_split& s) {
  for (auto field : {&time_split::kernel, &time_split::h2d, &time_split::d2h, &time_split::copy_other,
                     &time_split::memset, &time_split::sync, &time_split::api, &time_split::host, &time_split::wall_ns})
    sum.*field += s.*field;
}

void add_copies(copy_stats& sum, const copy_stats& c) {
  sum.count += c.count;
  sum.async_count += c.async_count;
  sum.pageable_count += c.pageable_count;
  for (auto field : {&copy_stats::bytes, &copy_stats::ns, &copy_stats::pageable_bytes, &copy_stats::pageable_ns,
                     &copy_stats::pinned_bytes, &copy_stats::pinned_ns})
    sum.*field += c.*field;
}

std::vector<program_kernel> merge_kernels(const std::vector<process_summary>& processes) {
  std::map<std::string, program_kernel> by_name;
  double all = 0;
  for (const auto& p : processes)
    for (const auto& k : p.trace.kernels) {
      auto& row = by_name[k.name];
      if (row.launches == 0 || k.max_ns > row.max_ns) {
        row.grid = k.grid;
        row.block = k.block;
      }
      row.min_ns = row.launches == 0 ? k.min_ns : std::min(row.min_ns, k.min_ns);
      row.max_ns = std::max(row.max_ns, k.max_ns);
      row.launches += k.launches;
      row.total_ns += k.total_ns;
      ++row.processes;
      all += k.total_ns;
    }
  std::vector<program_kernel> out;
  for (auto& [name, row] : by_name) {
    row.name = name;
    row.mean_ns = row.launches ? row.total_ns / static_cast<double>(row.launches) : 0;
    row.share = all > 0 ? row.total_ns / all : 0;
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

std::vector<program_range> merge_ranges(const std::vector<process_summary>& processes) {
  std::map<std::pair<std::string, std::string>, program_range> by_name;
  for (const auto& p : processes)
    for (const auto& r : p.ranges) {
      auto& row = by_name[{r.domain, r.name}];
      row.domain = r.domain;
      row.name = r.name;
      row.count += r.count;
      row.kernels += r.kernels;
      row.launched_kernels += r.launched_kernels;
      row.launched_gpu_ns += r.launched_gpu_ns;
      row.total_ns += r.total_ns;
      row.gpu_ns += r.gpu_ns;
    }
  std::vector<program_range> out;
  for (auto& [key, row] : by_name) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

// The rules on one process: the point rules (as for a run's point) and the program rules.
void evaluate_rules(const process_summary& p, const point_result& point, const device_model& device,
                    const program_options& options, analysis_result& out) {
  analysis_options point_options;
  point_options.disabled_rules = options.disabled_rules;
  for (const auto& r : point_rules_replaced_for_programs()) point_options.disabled_rules.insert(r);
  rule_context ctx{point, device, point_options, &p.trace, nullptr, nullptr, nullptr, nullptr, {}, {}, {}};
  // A program declares no work: its roofline comes from the counters alone (--metrics).
  std::vector<roofline_point> rows = counter_roofline_for_point(point, device);
  for (const auto& row : rows) ctx.roofline.push_back(&row);
  for (const auto& [name, rule] : rule_registry()) {
    if (point_options.disabled_rules.count(name)) continue;
    try {
      for (auto& f : rule->evaluate(ctx)) out.findings.push_back(std::move(f));
    } catch (const std::exception& e) {
      out.notes.push_back("rule " + name + " failed on " + p.label + ": " + e.what());
    }
  }
  const program_rule_context pctx{p, point, device, options};
  for (const auto& [name, rule] : program_rule_registry()) {
    if (options.disabled_rules.count(name)) continue;
    try {
      for (auto& f : rule->evaluate(pctx)) out.findings.push_back(std::move(f));
    } catch (const std::exception& e) {
      out.notes.push_back("rule " + name + " failed on " + p.label + ": " + e.what());
    }
  }
  for (auto& w : what_ifs_for_point(point, &p.trace, device)) out.what_ifs.push_back(std::move(w));
  for (auto& row : rows) out.roofline.push_back(std::move(row));
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
struct kernel_acc {
  bool used = false;
  std::size_t compute_launches = 0;
  double total_ns = 0, compute_ns = 0;
  double longest_ns = -1;
  std::uint64_t longest_start = 0;
  std::array<std::int32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  std::int32_t registers = 0, shared = 0;
  std::vector<double> durations;
};

// intervals::merged without a second vector: sorted, empty ones dropped, overlapping and
// touching ones joined, in place (the sets here hold millions).
void merge_in_place(std::vector<interval>& v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  std::size_t n = 0;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (n > 0 && iv.first <= v[n - 1].second) v[n - 1].second = std::max(v[n - 1].second, iv.second);
    else v[n++] = iv;
  }
  v.resize(n);
  v.shrink_to_fit();
}

// For sorted disjoint sets in precedence order: how much of their union each one covers
// first (time_split.hpp: each nanosecond goes to the first category covering it). One
// sweep over all boundaries, no union built.
template <std::size_t N>
std::array<std::uint64_t, N> first_cover(const std::array<std::vector<interval>, N>& sets) {
  std::array<std::uint64_t, N> sum{};
  std::array<std::size_t, N> at{};
  constexpr std::uint64_t none = UINT64_MAX;
  std::uint64_t t = none;
  for (const auto& v : sets)
    if (!v.empty()) t = std::min(t, v.front().first);
  while (t != none) {
    std::size_t top = N;
    std::uint64_t next = none;
    for (std::size_t c = 0; c < N; ++c) {
      if (at[c] == sets[c].size()) continue;
      const interval& iv = sets[c][at[c]];
      if (iv.first <= t) {
        if (top == N) top = c;
        next = std::min(next, iv.second);
      } else {
        next = std::min(next, iv.first);
      }
    }
    if (next == none) break;
    if (top != N) sum[top] += next - t;
    t = next;
    for (std::size_t c = 0; c < N; ++c)
      while (at[c] < sets[c].size() && sets[c][at[c]].second <= t) ++at[c];
  }
  return sum;
}

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

} // namespace

struct process_accumulator::state {
  std::vector<trace::repetition_window> windows; // of the trace statistics, sorted
  program_options options;
  std::size_t records = 0;
  bool any_gpu = false, any_api = false;

  // Names: kernels, API functions, range domains and names, each stored once.
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<const std::string*> names;
  std::vector<std::int16_t> api_kinds; // by name id: -1 not classified yet
  std::uint32_t intern(const std::string& s, std::uint32_t& last) {
    if (last < names.size() && *names[last] == s) return last;
    auto [it, inserted] = ids.try_emplace(s, static_cast<std::uint32_t>(names.size()));
    if (inserted) names.push_back(&it->first);
    return last = it->second;
  }
  std::uint32_t last_kernel = UINT32_MAX, last_api = UINT32_MAX, last_domain = UINT32_MAX, last_range = UINT32_MAX;

  // Kernels.
  std::vector<kernel_acc> kernels_by_name; // by name id
  std::vector<interval> kernels_inside, kernels_outside;
  std::uint64_t first_kernel = UINT64_MAX, last_busy = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, program_stream> streams; // (device, stream)
  // Copies and memsets.
  // The per-record stores grow by blocks (std::deque): a vector doubling its capacity would
  // briefly hold three times the records of the largest table.
  std::deque<copy_rec> copies;
  std::vector<std::pair<std::uint32_t, std::uint8_t>> copy_kind_of_call; // correlation, copy kind
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
  // Host side.
  std::deque<api_rec> calls;
  std::map<std::uint32_t, std::size_t> api_threads, phase_range_threads;
  std::size_t sync_calls = 0, launch_calls = 0;
  double sync_call_ns = 0, launch_call_ns = 0;
  std::vector<sync_rec> syncs;
  std::size_t sync_records = 0;
  double sync_record_ns = 0;
  std::deque<range_rec> ranges;

  bool inside(std::uint64_t start) const { return windows.empty() || repetition_of(windows, start) >= 0; }
  bool in_compute(std::uint64_t start) const { return in_compute_phase(windows, start); }
  program_stream& stream_row(std::uint32_t device, std::uint32_t stream) {
    auto [it, inserted] = streams.try_emplace({device, stream});
    if (inserted) it->second.device = device, it->second.stream = stream;
    return it->second;
  }
  trace::api_kind kind_of(std::uint32_t name) {
    if (api_kinds.size() <= name) api_kinds.resize(names.size(), -1);
    if (api_kinds[name] < 0) api_kinds[name] = static_cast<std::int16_t>(trace::classify_api(*names[name]));
    return static_cast<trace::api_kind>(api_kinds[name]);
  }
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

void process_accumulator::add(const trace::device_trace& t) {
  state& s = *m;
  s.records += t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.api_calls.size() + t.syncs.size() +
               t.ranges.size() + t.overheads.size();
  s.any_gpu |= t.has_gpu_activity();
  s.any_api |= !t.api_calls.empty();

  for (const auto& k : t.kernels) {
    const double ns = span(k.start, k.end);
    s.launched.push_back({k.correlation, true, ns});
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
    kernel_acc& a = s.kernels_by_name[id];
    a.used = true;
    a.durations.push_back(ns);
    a.total_ns += ns;
    if (s.in_compute(k.start)) {
      ++a.compute_launches;
      a.compute_ns += ns;
    }
    // The longest launch; among equally long ones the earliest (what a start-sorted trace gives).
    if (ns > a.longest_ns || (ns == a.longest_ns && k.start < a.longest_start)) {
      a.longest_ns = ns;
      a.longest_start = k.start;
      a.grid = k.grid;
      a.block = k.block;
      a.registers = k.registers_per_thread;
      a.shared = k.static_shared_bytes + k.dynamic_shared_bytes;
    }
  }
  for (const auto& c : t.memcpys) {
    s.last_busy = std::max(s.last_busy, c.end);
    auto& row = s.stream_row(c.device, c.stream);
    ++row.copies;
    row.copy_ns += span(c.start, c.end);
    const bool inside = s.inside(c.start);
    s.launched.push_back({c.correlation, false, span(c.start, c.end)});
    s.copies.push_back({c.start, c.end, c.copy_kind, inside});
    s.copy_kind_of_call.emplace_back(c.correlation, c.copy_kind);
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
  }
  for (const auto& a : t.api_calls) {
    const std::uint32_t id = s.intern(a.name, s.last_api);
    const trace::api_kind kind = s.kind_of(id);
    s.calls.push_back({a.start, a.end, a.thread, a.correlation, id, kind});
    ++s.api_threads[a.thread];
    if (!s.inside(a.start)) continue;
    if (kind == trace::api_kind::synchronize) {
      ++s.sync_calls;
      s.sync_call_ns += span(a.start, a.end);
    } else if (kind == trace::api_kind::launch) {
      ++s.launch_calls;
      s.launch_call_ns += span(a.start, a.end);
    }
  }
  for (const auto& y : t.syncs) {
    s.syncs.push_back({y.start, y.end, y.correlation, y.type});
    if (!s.inside(y.start)) continue;
    ++s.sync_records;
    s.sync_record_ns += span(y.start, y.end);
  }
  for (const auto& r : t.ranges) {
    if (r.domain == "speedlab") ++s.phase_range_threads[r.thread];
    s.ranges.push_back({r.start, r.end, r.thread, s.intern(r.domain, s.last_domain), s.intern(r.name, s.last_range)});
  }
}

namespace {

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

} // namespace

process_summary process_accumulator::finish(const profile::process_profile& p) {
  state& st = *m;
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
  if (!p.process.used_cuda && !st.any_gpu && !st.any_api) return s;
  auto name = [](const state& x, std::uint32_t id) -> const std::string& { return *x.names[id]; };

  // The thread whose calls classify GPU-idle time (analysis::phase_thread's choice).
  std::uint32_t thread = 0;
  auto most = [](const std::map<std::uint32_t, std::size_t>& counts) {
    return std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  };
  if (!st.phase_range_threads.empty()) thread = most(st.phase_range_threads);
  else if (t.process != 0 && st.api_threads.count(t.process)) thread = t.process;
  else if (!st.api_threads.empty()) thread = most(st.api_threads);

  // API calls in start order (a stable sort: equal starts keep their order in the stream).
  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  if (!std::is_sorted(st.calls.begin(), st.calls.end(), by_start)) std::stable_sort(st.calls.begin(), st.calls.end(), by_start);

  // ---- the time split over the window (time_split.hpp's definition: each nanosecond goes
  // to the first category, in this order, that covers it) ----
  {
    const std::uint64_t lo = s.window_start, hi = s.window_end;
    auto clip = [&](std::vector<interval>& v) {
      for (auto& iv : v) iv = {std::max(iv.first, lo), std::min(iv.second, hi)};
      merge_in_place(v);
    };
    // A correlation's first copy decides its kind (stable sort, first match below).
    std::stable_sort(st.copy_kind_of_call.begin(), st.copy_kind_of_call.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::array<std::vector<interval>, 10> cats;
    enum { c_kernel, c_h2d, c_d2h, c_copy_other, c_memset, c_h2d_call, c_d2h_call, c_other_call, c_sync, c_api };
    auto copy_cat = [](std::uint8_t k, bool call) {
      if (k == trace::copy_htod) return call ? c_h2d_call : c_h2d;
      if (k == trace::copy_dtoh) return call ? c_d2h_call : c_d2h;
      return call ? c_other_call : c_copy_other;
    };
    if (hi > lo) {
      cats[c_kernel] = st.kernels_inside;
      cats[c_kernel].insert(cats[c_kernel].end(), st.kernels_outside.begin(), st.kernels_outside.end());
      for (const auto& c : st.copies) cats[copy_cat(c.kind, false)].emplace_back(c.start, c.end);
      cats[c_memset] = st.memsets;
      std::vector<std::uint32_t> all_corr, phase_corr;
      const bool match_syncs = !st.syncs.empty();
      for (const auto& a : st.calls) {
        if (match_syncs) all_corr.push_back(a.correlation);
        if (a.thread != thread) continue;
        if (match_syncs) phase_corr.push_back(a.correlation);
        int c = c_api;
        if (trace::blocks_host(a.kind)) {
          c = c_sync;
          if (a.kind == trace::api_kind::copy_sync) {
            auto it = std::lower_bound(st.copy_kind_of_call.begin(), st.copy_kind_of_call.end(), a.correlation,
                                       [](const auto& e, std::uint32_t x) { return e.first < x; });
            if (it != st.copy_kind_of_call.end() && it->first == a.correlation) c = copy_cat(it->second, true);
          }
        }
        cats[static_cast<std::size_t>(c)].emplace_back(a.start, a.end);
      }
      if (match_syncs) {
        std::sort(all_corr.begin(), all_corr.end());
        std::sort(phase_corr.begin(), phase_corr.end());
        for (const auto& y : st.syncs) {
          if (y.type == 2) continue; // stream wait event: never blocks the host
          if (std::binary_search(phase_corr.begin(), phase_corr.end(), y.correlation) ||
              !std::binary_search(all_corr.begin(), all_corr.end(), y.correlation))
            cats[c_sync].emplace_back(y.start, y.end);
        }
      }
    }
    for (auto& c : cats) clip(c);
    const std::array<std::uint64_t, 10> sum = first_cover(cats);
    std::uint64_t accounted = 0;
    for (const auto v : sum) accounted += v;
    time_split x;
    const double wall = span(lo, hi);
    auto ns = [&](std::initializer_list<int> parts) {
      std::uint64_t v = 0;
      for (const int c : parts) v += sum[static_cast<std::size_t>(c)];
      return static_cast<double>(v);
    };
    x.kernel = ns({c_kernel});
    x.h2d = ns({c_h2d, c_h2d_call});
    x.d2h = ns({c_d2h, c_d2h_call});
    x.copy_other = ns({c_copy_other, c_other_call});
    x.memset = ns({c_memset});
    x.sync = ns({c_sync});
    x.api = ns({c_api});
    x.host = static_cast<double>((hi > lo ? hi - lo : 0) - accounted); // the sets are clipped to the window
    x.wall_ns = wall;
    s.split = x;
  }

  // ---- the trace statistics the rules read (summarize_trace's) ----
  {
    trace_summary& ts = s.trace;
    ts.dropped_records = t.dropped_records;
    ts.has_windows = !st.windows.empty();
    ts.repetitions = st.windows.empty() ? 1 : st.windows.size();
    std::vector<std::pair<const std::string*, kernel_acc*>> by_name;
    for (std::size_t id = 0; id < st.kernels_by_name.size(); ++id)
      if (st.kernels_by_name[id].used) by_name.emplace_back(st.names[id], &st.kernels_by_name[id]);
    std::sort(by_name.begin(), by_name.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
    std::size_t launches = 0;
    for (const auto& [n, a] : by_name) launches += a->durations.size();
    ts.kernel_durations.reserve(launches);
    for (auto& [n, a] : by_name) {
      kernel_stats ks;
      ks.name = *n;
      ks.launches = a->durations.size();
      ks.compute_phase_launches = a->compute_launches;
      ks.total_ns = a->total_ns;
      ks.compute_phase_ns = a->compute_ns;
      ts.kernel_durations.insert(ts.kernel_durations.end(), a->durations.begin(), a->durations.end());
      ks.min_ns = *std::min_element(a->durations.begin(), a->durations.end());
      ks.max_ns = *std::max_element(a->durations.begin(), a->durations.end());
      ks.median_ns = median_in_place(a->durations);
      release(a->durations);
      ks.grid = a->grid;
      ks.block = a->block;
      ks.registers_per_thread = a->registers;
      ks.shared_bytes = a->shared;
      ts.kernel_launches += ks.launches;
      ts.kernel_ns += ks.total_ns;
      ts.kernels.push_back(std::move(ks));
    }
    std::stable_sort(ts.kernels.begin(), ts.kernels.end(),
                     [](const kernel_stats& a, const kernel_stats& b) { return a.total_ns > b.total_ns; });
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
    // CUPTI reports a synchronization both as an activity record and as the API call.
    ts.sync_count = std::max(st.sync_records, st.sync_calls);
    ts.sync_ns = std::max(st.sync_record_ns, st.sync_call_ns);
    ts.launch_calls = st.launch_calls;
    ts.launch_call_ns = st.launch_call_ns;
  }

  // ---- GPU busy time, the NVTX ranges and the streams ----
  std::vector<std::uint64_t> kernel_starts;
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
  {
    std::map<std::pair<std::string, std::string>, program_range> by_name;
    std::map<std::pair<std::uint32_t, std::uint32_t>, program_range*> by_id;
    for (const auto& r : st.ranges) {
      program_range*& row = by_id[{r.domain, r.name}];
      if (!row) row = &by_name[{name(st, r.domain), name(st, r.name)}];
      ++row->count;
      row->total_ns += span(r.start, r.end);
      if (r.end <= r.start) continue;
      row->gpu_ns += intervals::measure(busy, r.start, r.end);
      row->kernels += static_cast<std::size_t>(std::lower_bound(kernel_starts.begin(), kernel_starts.end(), r.end) -
                                               std::lower_bound(kernel_starts.begin(), kernel_starts.end(), r.start));
    }
    // What each range launched: the calls that started while it was open, on any thread (a
    // PyTorch training step launches its backward pass from autograd's own thread), in start
    // order with running sums of the GPU time and kernels they launched (records matched to
    // calls by correlation id); a range's share is the difference of the sums at its end and
    // at its start.
    if (!st.ranges.empty()) {
      auto& gpu = st.launched; // sorted where it is: a copy would double its memory for a moment
      std::sort(gpu.begin(), gpu.end(), [](const auto& a, const auto& b) { return a.correlation < b.correlation; });
      struct launch_sum {
        std::uint64_t start;
        double ns;            // running sum up to and including this call
        std::size_t kernels;  // likewise
      };
      std::vector<launch_sum> calls;
      auto lo = gpu.begin();
      std::uint32_t previous = 0;
      for (const auto& a : st.calls) {
        if (a.correlation == 0) continue;
        // Calls come nearly in correlation order (ids are handed out at call entry): walk
        // forward from the previous one, search only when one goes back.
        if (a.correlation < previous)
          lo = std::lower_bound(gpu.begin(), gpu.end(), a.correlation,
                                [](const auto& g, std::uint32_t c) { return g.correlation < c; });
        while (lo != gpu.end() && lo->correlation < a.correlation) ++lo;
        previous = a.correlation;
        double ns = 0;
        std::size_t kernels = 0;
        for (auto rec = lo; rec != gpu.end() && rec->correlation == a.correlation; ++rec) {
          ns += rec->ns;
          kernels += rec->kernel ? 1 : 0;
        }
        if (ns > 0 || kernels > 0) calls.push_back({a.start, ns, kernels});
      }
      release(gpu);
      std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
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
        const launch_sum a = before(r.start), b = before(r.end);
        program_range* row = by_id[{r.domain, r.name}];
        row->launched_gpu_ns += b.ns - a.ns;
        row->launched_kernels += b.kernels - a.kernels;
      }
    }
    release(st.launched);
    for (auto& [key, row] : by_name) {
      row.domain = key.first;
      row.name = key.second;
      s.ranges.push_back(std::move(row));
    }
  }
  release(kernel_starts);
  for (auto& [key, row] : st.streams) {
    row.pid = p.process.pid;
    s.streams.push_back(row);
  }

  // ---- GPU idle gaps and what the host thread was inside meanwhile ----
  if (!busy.empty()) {
    gap_summary& g = s.gaps;
    g.active_span_ns = span(busy.front().first, busy.back().second);
    g.before_first_ns = span(s.window_start, busy.front().first);
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
      const std::uint64_t lo = busy[i - 1].second, hi = busy[i].first;
      const double length = span(lo, hi);
      if (length < st.options.gap_min_ns) continue;
      // Calls of one thread do not overlap, so their ends ascend with their starts.
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
      std::string what;
      if (widest && widest_ns >= length / 2) what = std::string(trace::strip_api_version(name(st, widest->name)));
      else if (const auto* r = cursor.at(lo + (hi - lo) / 2)) what = "range " + name(st, r->name);
      else what = "host code";
      auto& c = causes[what];
      ++c.gaps;
      c.total_ns += length;
      c.largest_ns = std::max(c.largest_ns, length);
      ++g.count;
      g.total_ns += length;
      if (length > g.largest_ns) {
        g.largest_ns = length;
        g.largest_at_ns = span(s.window_start, lo);
        g.largest_inside = what;
      }
    }
    for (auto& [what, c] : causes) {
      c.what = what;
      g.causes.push_back(std::move(c));
    }
    std::stable_sort(g.causes.begin(), g.causes.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  }
  release(busy);

  // ---- allocations, synchronous pageable copies, the launch cost ----
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
  if (!launch_ns.empty()) s.launch_call_median_ns = stats::quantile(std::move(launch_ns), 0.5);
  return s;
}

process_summary summarize_process(const profile::process_profile& p, const program_options& options) {
  process_accumulator acc(p.trace.repetitions, options);
  acc.add(p.trace);
  return acc.finish(p);
}

stream_summary summarize_stream(const std::filesystem::path& file, const program_options& options) {
  stream_summary out;
  std::optional<process_accumulator> acc;
  // A rank's stream (CUDA under a launcher's rank variable) also goes into its rank summary,
  // chunk by chunk as well (rank_accumulator keeps 16-24 bytes a record). One read either way.
  std::optional<bool> is_rank;
  std::optional<rank_accumulator> rank;
  profile::stream_read read =
      profile::read_stream(file, [&](const profile::process_info& info, profile::records_batch&& batch) {
        // Every record ends by the process's end (the reader makes it so), so the window
        // of the trace statistics is open-ended here; as summarize_process on the whole.
        if (!acc) acc.emplace(std::vector<trace::repetition_window>{{info.start_ns, UINT64_MAX, 0, 0}}, options);
        acc->add(batch.trace);
        if (!is_rank) is_rank = info.used_cuda && identify_rank(info).rank.has_value();
        if (*is_rank) {
          if (!rank) rank.emplace();
          rank->add(batch.trace);
        }
      });
  out.messages = std::move(read.messages);
  out.valid = read.valid;
  if (!read.valid) return out;
  if (!acc) acc.emplace(read.profile.trace.repetitions, options);
  out.summary = acc->finish(read.profile);
  const auto& p = read.profile;
  if (p.process.used_cuda && identify_rank(p.process).rank) {
    if (!rank) rank.emplace();
    out.rank = rank->finish(p, out.summary.split ? &*out.summary.split : nullptr);
  }
  return out;
}

std::string process_point_id(std::uint32_t pid) { return fmt::format("pid {}", pid); }

point_result process_point(const process_summary& p) {
  point_result r;
  r.id = process_point_id(p.info.pid);
  r.workload = p.label;
  r.variant = r.id;
  r.kind = "cuda";
  r.params["pid"] = std::to_string(p.info.pid);
  if (p.info.truncated) r.reason = "profile truncated (the stream ends without its closing record)";
  const double wall = span(p.window_start, p.window_end);
  r.samples_ns = {wall};
  r.wall = stats::summarize(r.samples_ns);
  if (p.split) {
    r.splits = {*p.split};
    r.split_median = r.split_q1 = r.split_q3 = *p.split;
  }
  r.dropped_records = std::max(p.info.dropped_records, p.trace.dropped_records);
  r.profiler = p.backend;
  r.profiler_messages = p.info.notes;
  r.duration_s = wall / 1e9;
  r.counters = p.counters; // the point rules read them as they read a run's counters pass
  r.source = p.source;     // and the source view as a run's source pass (reports' source tables)
  return r;
}

program_analysis analyze_program(std::vector<process_summary> processes, program_facts facts,
                                 const device_model& device, const program_options& options) {
  program_analysis a;
  a.facts = std::move(facts);
  a.result.device = device;
  std::stable_sort(processes.begin(), processes.end(),
                   [](const auto& x, const auto& y) { return x.window_start < y.window_start; });
  a.processes = std::move(processes);
  std::size_t with_cuda = 0;
  for (auto& p : a.processes) {
    a.records += p.records;
    if (p.info.truncated)
      a.result.notes.push_back(fmt::format("{}: the profile is truncated; it holds what was flushed up to {:.3f} s "
                                           "after the process started",
                                           p.label, span(p.info.start_ns, p.info.last_flush_ns) / 1e9));
    if (!p.split) continue;
    ++with_cuda;
    add_split(a.split, *p.split);
    add_copies(a.h2d, p.trace.h2d);
    add_copies(a.d2h, p.trace.d2h);
    add_copies(a.other_copies, p.trace.other_copies);
    a.points.push_back(process_point(p));
    evaluate_rules(p, a.points.back(), device, options, a.result);
    for (const auto& s : p.streams) a.streams.push_back(s);
    p.trace.kernel_durations = {}; // only the rules need every launch
    p.trace.kernel_durations.shrink_to_fit();
  }
  if (with_cuda == 0)
    a.result.notes.push_back(a.processes.empty() ? "no process was recorded"
                                                 : "no process of the program used CUDA: there is no GPU time to split");
  a.kernels = merge_kernels(a.processes);
  a.ranges = merge_ranges(a.processes);
  std::stable_sort(a.result.findings.begin(), a.result.findings.end(),
                   [](const finding& x, const finding& y) { return x.estimated_gain > y.estimated_gain; });
  return a;
}

namespace {

void attach_ranks(program_analysis& a, std::vector<rank_summary> ranks) {
  if (ranks.size() < 2) return;
  a.ranks = analyze_ranks(std::move(ranks));
  a.result.findings.insert(a.result.findings.end(), a.ranks->findings.begin(), a.ranks->findings.end());
  a.result.notes.insert(a.result.notes.end(), a.ranks->notes.begin(), a.ranks->notes.end());
  std::stable_sort(a.result.findings.begin(), a.result.findings.end(),
                   [](const finding& x, const finding& y) { return x.estimated_gain > y.estimated_gain; });
}

} // namespace

program_analysis analyze_program(const std::vector<profile::process_profile>& processes, program_facts facts,
                                 const device_model& device, const program_options& options) {
  std::vector<process_summary> summaries;
  std::vector<rank_summary> ranks;
  summaries.reserve(processes.size());
  for (const auto& p : processes) {
    summaries.push_back(summarize_process(p, options));
    if (p.process.used_cuda && identify_rank(p.process).rank) ranks.push_back(summarize_rank(p));
  }
  return analyze_program(std::move(summaries), std::move(ranks), std::move(facts), device, options);
}

program_analysis analyze_program(std::vector<process_summary> processes, std::vector<rank_summary> ranks,
                                 program_facts facts, const device_model& device, const program_options& options) {
  program_analysis a = analyze_program(std::move(processes), std::move(facts), device, options);
  attach_ranks(a, std::move(ranks));
  return a;
}

stream_summaries summarize_streams(const std::vector<std::filesystem::path>& files, const program_options& options,
                                   std::size_t threads) {
  std::vector<stream_summary> done(files.size());
#ifdef __GLIBC__
  // The streams are read in turn, each allocating and then freeing its records: glibc keeps
  // the freed memory for the next stream instead of unmapping it and faulting fresh pages in
  // again (seen: 4 streams of 1M records, system time 1.0 s -> 0.4 s, user 2.7 s -> 2.4 s).
  if (files.size() > 1) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_ARENA_MAX, 1);
  }
#endif
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) done[i] = summarize_stream(files[i], options);
  };
  if (threads == 0) {
    // SPEEDLAB_REPORT_THREADS caps the readers (default: the cores, at most 4; each holds one
    // chunk, or one rank's records, in memory while it reads).
    threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
    if (const char* env = std::getenv("SPEEDLAB_REPORT_THREADS"); env && *env) {
      const long v = std::strtol(env, nullptr, 10);
      if (v >= 1 && v <= 64) threads = static_cast<std::size_t>(v);
    }
  }
  threads = std::min(threads, std::max<std::size_t>(files.size(), 1));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  stream_summaries out;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (auto& m : done[i].messages) out.messages.push_back(std::move(m));
    if (!done[i].valid) continue;
    order.push_back(i);
  }
  // As read_stream_folder orders the processes.
  std::stable_sort(order.begin(), order.end(), [&done](std::size_t x, std::size_t y) {
    const auto& a = done[x].summary.info;
    const auto& b = done[y].summary.info;
    return std::tie(a.start_ns, a.pid) < std::tie(b.start_ns, b.pid);
  });
  for (const std::size_t i : order) {
    if (done[i].rank) {
      out.rank_process.push_back(out.processes.size());
      out.ranks.push_back(std::move(*done[i].rank));
    }
    out.processes.push_back(std::move(done[i].summary));
    out.files.push_back(files[i]);
  }
  return out;
}

program_analysis analyze_stream_folder(const std::filesystem::path& dir, program_facts facts, const device_model& device,
                                       const program_options& options, std::vector<std::string>* messages) {
  std::vector<std::string> said;
  const std::vector<std::filesystem::path> files = profile::stream_files(dir, said);
  stream_summaries s = summarize_streams(files, options);
  program_analysis a =
      analyze_program(std::move(s.processes), std::move(s.ranks), std::move(facts), device, options);
  if (messages) {
    messages->insert(messages->end(), said.begin(), said.end());
    messages->insert(messages->end(), s.messages.begin(), s.messages.end());
  }
  return a;
}

void to_json(nlohmann::json& j, const program_facts& f) {
  j = {{"command_line", f.command_line}, {"started_at", f.started_at}, {"hostname", f.hostname},
       {"speedlab_version", f.speedlab_version}, {"wall_s", f.wall_s}, {"notes", f.notes}};
  j["exit_code"] = f.exit_code ? nlohmann::json(*f.exit_code) : nlohmann::json(nullptr);
}

void from_json(const nlohmann::json& j, program_facts& f) {
  f = {};
  f.command_line = j.value("command_line", std::vector<std::string>{});
  f.started_at = j.value("started_at", "");
  f.hostname = j.value("hostname", "");
  f.speedlab_version = j.value("speedlab_version", "");
  f.wall_s = j.value("wall_s", 0.0);
  if (j.contains("exit_code") && j["exit_code"].is_number_integer()) f.exit_code = j["exit_code"].get<int>();
  f.notes = j.value("notes", std::vector<std::string>{});
}

namespace {

nlohmann::json ranks_json(const rank_analysis& r) {
  auto opt = [](const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j{{"step_method", r.step_method}, {"steps", r.steps}, {"imbalance", r.imbalance},
                   {"straggler", opt(r.straggler)}, {"straggler_excess_ns", r.straggler_excess_ns}, {"notes", r.notes}};
  j["ranks"] = nlohmann::json::array();
  // Steps are listed up to 2000 a rank and 250,000 in all: a thousand ranks' every step would
  // be a document of hundreds of megabytes; their figures are summarized per rank above.
  std::size_t rows = 0;
  for (const auto& x : r.ranks) rows += x.steps.size();
  const bool list_steps = rows <= 250'000;
  j["step_figures_listed"] = list_steps;
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const auto& x = r.ranks[i];
    j["ranks"].push_back({{"rank", opt(x.id.rank)}, {"local_rank", opt(x.id.local_rank)},
                          {"world_size", opt(x.id.world_size)}, {"rank_source", x.id.source}, {"host", x.host},
                          {"pid", x.pid}, {"gpu", x.gpu}, {"split", x.split}, {"compute_ns", x.compute_ns},
                          {"comm_ns", x.comm_ns}, {"overlap_ns", x.overlap_ns}, {"idle_ns", x.idle_ns},
                          {"first_kernel_ns", x.first_kernel_ns ? nlohmann::json(*x.first_kernel_ns) : nlohmann::json(nullptr)},
                          {"kernels", x.kernels}, {"comm_kernels", x.comm_kernels}, {"steps", x.steps.size()},
                          {"step_method", x.step_method}, {"truncated", x.truncated},
                          {"wait_per_step_ns", i < r.wait_per_step_ns.size() ? r.wait_per_step_ns[i] : 0.0},
                          {"wait_total_ns", i < r.wait_total_ns.size() ? r.wait_total_ns[i] : 0.0}});
    // Each step on the common clock: [start, end, compute_ns, comm_ns, kernel_ns, kernels].
    // (At most 2000 steps a rank: a long job's are summarized above, not listed.)
    auto& steps = j["ranks"].back()["step_figures"] = nlohmann::json::array();
    if (list_steps && x.steps.size() <= 2000)
      for (const auto& s : x.steps) steps.push_back({s.start, s.end, s.compute_ns, s.comm_ns, s.kernel_ns, s.kernels});
  }
  j["wait_method"] = r.wait_method;
  j["step_columns"] = {"start_ns", "end_ns", "compute_ns", "comm_ns", "kernel_ns", "kernels"};
  for (const auto& c : r.clocks)
    j["clocks"].push_back({{"host", c.host}, {"offset_ns", c.offset_ns}, {"matched", c.matched}, {"method", c.method}});
  return j;
}

} // namespace

void to_json(nlohmann::json& j, const program_analysis& a) {
  j = nlohmann::json::object();
  if (a.ranks) j["ranks"] = ranks_json(*a.ranks);
  j["facts"] = a.facts;
  j["records"] = a.records;
  j["split"] = a.split;
  auto& procs = j["processes"] = nlohmann::json::array();
  for (const auto& p : a.processes) {
    nlohmann::json o{{"pid", p.info.pid},
                     {"parent_pid", p.info.parent_pid},
                     {"label", p.label},
                     {"command_line", p.info.command_line},
                     {"host", p.info.host},
                     {"used_cuda", p.info.used_cuda},
                     {"truncated", p.info.truncated},
                     {"wall_ns", span(p.window_start, p.window_end)},
                     {"records", p.records},
                     {"dropped_records", p.info.dropped_records},
                     {"notes", p.info.notes}};
    o["exit_code"] = p.info.exit_code ? nlohmann::json(*p.info.exit_code) : nlohmann::json(nullptr);
    o["signal"] = p.info.signal ? nlohmann::json(*p.info.signal) : nlohmann::json(nullptr);
    if (p.info.truncated) o["truncated_after_ns"] = span(p.info.start_ns, p.info.last_flush_ns);
    if (p.split) o["split"] = *p.split;
    o["gaps"] = {{"count", p.gaps.count},           {"total_ns", p.gaps.total_ns},
                 {"largest_ns", p.gaps.largest_ns}, {"largest_at_ns", p.gaps.largest_at_ns},
                 {"largest_inside", p.gaps.largest_inside}, {"active_span_ns", p.gaps.active_span_ns},
                 {"before_first_ns", p.gaps.before_first_ns}};
    for (const auto& c : p.gaps.causes)
      o["gaps"]["causes"].push_back({{"what", c.what}, {"gaps", c.gaps}, {"total_ns", c.total_ns}, {"largest_ns", c.largest_ns}});
    o["allocations"] = {{"allocs", p.allocs.allocs}, {"frees", p.allocs.frees}, {"repeated", p.allocs.repeated},
                        {"ns", p.allocs.ns}, {"repeated_ns", p.allocs.repeated_ns}};
    o["pageable_sync_copies"] = {{"count", p.pageable_sync.count}, {"bytes", p.pageable_sync.bytes},
                                 {"ns", p.pageable_sync.ns}, {"call_ns", p.pageable_sync.call_ns}};
    o["launch_call_median_ns"] = p.launch_call_median_ns;
    procs.push_back(std::move(o));
  }
  auto& kernels = j["kernels"] = nlohmann::json::array();
  for (const auto& k : a.kernels)
    kernels.push_back({{"name", k.name}, {"launches", k.launches}, {"processes", k.processes}, {"total_ns", k.total_ns},
                       {"mean_ns", k.mean_ns}, {"min_ns", k.min_ns}, {"max_ns", k.max_ns}, {"grid", k.grid},
                       {"block", k.block}, {"share", k.share}});
  auto& ranges = j["nvtx_ranges"] = nlohmann::json::array();
  for (const auto& r : a.ranges)
    ranges.push_back({{"domain", r.domain}, {"name", r.name}, {"count", r.count}, {"total_ns", r.total_ns},
                      {"gpu_ns", r.gpu_ns}, {"kernels", r.kernels}, {"launched_gpu_ns", r.launched_gpu_ns},
                      {"launched_kernels", r.launched_kernels}});
  auto& streams = j["streams"] = nlohmann::json::array();
  for (const auto& s : a.streams)
    streams.push_back({{"pid", s.pid}, {"device", s.device}, {"stream", s.stream}, {"kernels", s.kernels},
                       {"copies", s.copies}, {"memsets", s.memsets}, {"kernel_ns", s.kernel_ns},
                       {"copy_ns", s.copy_ns}, {"memset_ns", s.memset_ns}});
}

} // namespace speedlab::analysis
