#include "analysis/program_analysis.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/intervals.hpp"
#include "analysis/program_rules.hpp"
#include "analysis/rules.hpp"
#include "analysis/time_split.hpp"
#include "analysis/what_if.hpp"
#include "model/cuda_api.hpp"
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

std::vector<interval> gpu_busy(const trace::device_trace& t) {
  std::vector<interval> v;
  v.reserve(t.kernels.size() + t.memcpys.size() + t.memsets.size());
  for (const auto& k : t.kernels) v.emplace_back(k.start, k.end);
  for (const auto& m : t.memcpys) v.emplace_back(m.start, m.end);
  for (const auto& m : t.memsets) v.emplace_back(m.start, m.end);
  return intervals::merged(std::move(v));
}

std::vector<program_range> range_table(const trace::device_trace& t, const std::vector<interval>& busy) {
  std::vector<std::uint64_t> kernel_starts;
  kernel_starts.reserve(t.kernels.size());
  for (const auto& k : t.kernels) kernel_starts.push_back(k.start);
  std::sort(kernel_starts.begin(), kernel_starts.end());
  std::map<std::pair<std::string, std::string>, program_range> by_name;
  for (const auto& r : t.ranges) {
    auto& row = by_name[{r.domain, r.name}];
    ++row.count;
    row.total_ns += span(r.start, r.end);
    if (r.end <= r.start) continue;
    row.gpu_ns += intervals::measure(busy, r.start, r.end);
    row.kernels += static_cast<std::size_t>(std::lower_bound(kernel_starts.begin(), kernel_starts.end(), r.end) -
                                            std::lower_bound(kernel_starts.begin(), kernel_starts.end(), r.start));
  }
  std::vector<program_range> out;
  for (auto& [key, row] : by_name) {
    row.domain = key.first;
    row.name = key.second;
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<program_stream> stream_table(const trace::device_trace& t, std::uint32_t pid) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, program_stream> by_stream;
  auto row = [&](std::uint32_t device, std::uint32_t stream) -> program_stream& {
    auto& r = by_stream[{device, stream}];
    r.pid = pid;
    r.device = device;
    r.stream = stream;
    return r;
  };
  for (const auto& k : t.kernels) {
    auto& r = row(k.device, k.stream);
    ++r.kernels;
    r.kernel_ns += span(k.start, k.end);
  }
  for (const auto& m : t.memcpys) {
    auto& r = row(m.device, m.stream);
    ++r.copies;
    r.copy_ns += span(m.start, m.end);
  }
  for (const auto& m : t.memsets) {
    auto& r = row(m.device, m.stream);
    ++r.memsets;
    r.memset_ns += span(m.start, m.end);
  }
  std::vector<program_stream> out;
  for (auto& [key, r] : by_stream) out.push_back(r);
  return out;
}

// Innermost NVTX range around a time, for times visited in ascending order. Push/pop ranges
// of one thread nest, so a stack of the open ones answers each query in amortized O(1).
class range_cursor {
public:
  explicit range_cursor(std::vector<const trace::range_record*> ranges) : m_ranges(std::move(ranges)) {
    auto outer_first = [](const auto* a, const auto* b) {
      return a->start < b->start || (a->start == b->start && a->end > b->end);
    };
    if (!std::is_sorted(m_ranges.begin(), m_ranges.end(), outer_first))
      std::sort(m_ranges.begin(), m_ranges.end(), outer_first);
  }
  const trace::range_record* at(std::uint64_t t) {
    for (; m_next < m_ranges.size() && m_ranges[m_next]->start <= t; ++m_next) {
      while (!m_open.empty() && m_open.back()->end <= m_ranges[m_next]->start) m_open.pop_back();
      m_open.push_back(m_ranges[m_next]);
    }
    while (!m_open.empty() && m_open.back()->end <= t) m_open.pop_back();
    return m_open.empty() ? nullptr : m_open.back();
  }

private:
  std::vector<const trace::range_record*> m_ranges;
  std::size_t m_next = 0;
  std::vector<const trace::range_record*> m_open;
};

gap_summary find_gaps(const trace::device_trace& t, const std::vector<interval>& busy, std::uint64_t process_start,
                      std::uint32_t host_thread, double gap_min_ns) {
  gap_summary g;
  if (busy.empty()) return g;
  g.active_span_ns = span(busy.front().first, busy.back().second);
  g.before_first_ns = span(process_start, busy.front().first);
  std::vector<const trace::api_record*> calls;
  for (const auto& a : t.api_calls)
    if (a.thread == host_thread) calls.push_back(&a);
  auto by_start = [](const auto* a, const auto* b) { return a->start < b->start; };
  if (!std::is_sorted(calls.begin(), calls.end(), by_start)) std::sort(calls.begin(), calls.end(), by_start);
  std::vector<const trace::range_record*> ranges;
  for (const auto& r : t.ranges)
    if (r.thread == host_thread) ranges.push_back(&r);
  if (ranges.empty())
    for (const auto& r : t.ranges) ranges.push_back(&r);
  range_cursor cursor(std::move(ranges));

  std::map<std::string, idle_cause> causes;
  std::size_t first_call = 0;
  for (std::size_t i = 1; i < busy.size(); ++i) {
    const std::uint64_t lo = busy[i - 1].second, hi = busy[i].first;
    const double length = span(lo, hi);
    if (length < gap_min_ns) continue;
    // Calls of one thread do not overlap, so their ends ascend with their starts.
    while (first_call < calls.size() && calls[first_call]->end <= lo) ++first_call;
    const trace::api_record* widest = nullptr;
    double widest_ns = 0;
    for (std::size_t c = first_call; c < calls.size() && calls[c]->start < hi; ++c) {
      const double inside = span(std::max(calls[c]->start, lo), std::min(calls[c]->end, hi));
      if (inside > widest_ns) {
        widest_ns = inside;
        widest = calls[c];
      }
    }
    std::string what;
    if (widest && widest_ns >= length / 2) what = std::string(trace::strip_api_version(widest->name));
    else if (const auto* r = cursor.at(lo + (hi - lo) / 2)) what = "range " + r->name;
    else what = "host code";
    auto& c = causes[what];
    ++c.gaps;
    c.total_ns += length;
    c.largest_ns = std::max(c.largest_ns, length);
    ++g.count;
    g.total_ns += length;
    if (length > g.largest_ns) {
      g.largest_ns = length;
      g.largest_at_ns = span(process_start, lo);
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

// Host-side memory kind of a copy (the source of H2D, the destination of D2H); unknown for others.
std::uint8_t host_kind(const trace::memcpy_record& m) {
  if (m.copy_kind == trace::copy_htod) return m.src_kind;
  if (m.copy_kind == trace::copy_dtoh) return m.dst_kind;
  return trace::mem_unknown;
}

void host_calls(const trace::device_trace& t, process_summary& s) {
  std::uint64_t first_kernel = UINT64_MAX, last_busy = 0;
  for (const auto& k : t.kernels) {
    first_kernel = std::min(first_kernel, k.start);
    last_busy = std::max(last_busy, k.end);
  }
  std::unordered_set<std::uint32_t> pageable_sync;
  for (const auto& m : t.memcpys) {
    last_busy = std::max(last_busy, m.end);
    if (m.async || host_kind(m) != trace::mem_pageable) continue;
    ++s.pageable_sync.count;
    s.pageable_sync.bytes += static_cast<double>(m.bytes);
    s.pageable_sync.ns += span(m.start, m.end);
    pageable_sync.insert(m.correlation);
  }
  if (first_kernel != UINT64_MAX) s.allocs.steady_span_ns = span(first_kernel, last_busy);
  std::vector<double> launch_ns;
  for (const auto& a : t.api_calls) {
    const double ns = span(a.start, a.end);
    switch (trace::classify_api(a.name)) {
    case trace::api_kind::launch: launch_ns.push_back(ns); break;
    case trace::api_kind::alloc:
    case trace::api_kind::free: {
      (trace::classify_api(a.name) == trace::api_kind::alloc ? s.allocs.allocs : s.allocs.frees)++;
      s.allocs.ns += ns;
      if (a.start > first_kernel) {
        ++s.allocs.repeated;
        s.allocs.repeated_ns += ns;
      }
      break;
    }
    case trace::api_kind::copy_sync:
      if (pageable_sync.count(a.correlation)) s.pageable_sync.call_ns += ns;
      break;
    default: break;
    }
  }
  if (!launch_ns.empty()) s.launch_call_median_ns = stats::quantile(std::move(launch_ns), 0.5);
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
  const rule_context ctx{point, device, point_options, &p.trace, nullptr, nullptr, nullptr, nullptr, {}};
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
}

} // namespace

process_summary summarize_process(const profile::process_profile& p, const program_options& options) {
  const trace::device_trace& t = p.trace;
  process_summary s;
  s.info = p.process;
  s.label = process_label(p.process);
  s.backend = t.backend;
  s.note = t.note;
  s.records = t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.api_calls.size() + t.syncs.size() +
              t.ranges.size() + t.overheads.size();
  // The lifetime window: the stream's own, else the process's start to end (a truncated
  // stream ends at its last flush).
  if (!t.repetitions.empty()) {
    s.window_start = t.repetitions.front().start;
    s.window_end = t.repetitions.front().end;
  } else {
    s.window_start = p.process.start_ns;
    s.window_end = p.process.truncated && p.process.last_flush_ns ? p.process.last_flush_ns : p.process.end_ns;
  }
  if (!p.process.used_cuda && !t.has_gpu_activity() && t.api_calls.empty()) return s;

  const std::vector<trace::repetition_window> window{{s.window_start, s.window_end, 0, 0}};
  s.split = compute_time_splits(t, window).front();
  s.trace = summarize_trace(t);
  const std::vector<interval> busy = gpu_busy(t);
  s.ranges = range_table(t, busy);
  s.streams = stream_table(t, p.process.pid);
  s.gaps = find_gaps(t, busy, s.window_start, phase_thread(t), options.gap_min_ns);
  host_calls(t, s);
  return s;
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
  if (ranks.size() >= 2) {
    a.ranks = analyze_ranks(std::move(ranks));
    a.result.findings.insert(a.result.findings.end(), a.ranks->findings.begin(), a.ranks->findings.end());
    a.result.notes.insert(a.result.notes.end(), a.ranks->notes.begin(), a.ranks->notes.end());
    std::stable_sort(a.result.findings.begin(), a.result.findings.end(),
                     [](const finding& x, const finding& y) { return x.estimated_gain > y.estimated_gain; });
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
    if (x.steps.size() <= 2000)
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
                      {"gpu_ns", r.gpu_ns}, {"kernels", r.kernels}});
  auto& streams = j["streams"] = nlohmann::json::array();
  for (const auto& s : a.streams)
    streams.push_back({{"pid", s.pid}, {"device", s.device}, {"stream", s.stream}, {"kernels", s.kernels},
                       {"copies", s.copies}, {"memsets", s.memsets}, {"kernel_ns", s.kernel_ns},
                       {"copy_ns", s.copy_ns}, {"memset_ns", s.memset_ns}});
}

} // namespace speedlab::analysis
