// The processes' summaries merged into the program's analysis: each process that used
// CUDA becomes a point (process_point) and goes through the rules; the program's kernels,
// ranges, copies and split are the sums over its processes; two or more ranks are compared.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/program_analysis.hpp"
#include "analysis/roofline.hpp"
#include "analysis/rules.hpp"
#include "analysis/what_if.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {
namespace {

using intervals::span;

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

// Rows of one name from several processes. A sampled process's launched figures are already
// scaled to its own ranges, and unknown where none was measured: the merged row's are those
// of the processes that know them, scaled to every range of the name.
std::vector<program_range> merge_ranges(const std::vector<process_summary>& processes) {
  struct merged_row {
    program_range row;
    bool sampled = false;
    std::size_t known = 0, measured = 0; // ranges of processes that know their launched figures; ranges measured
  };
  std::map<std::pair<std::string, std::string>, merged_row> by_name;
  for (const auto& p : processes)
    for (const auto& r : p.ranges) {
      auto& m = by_name[{r.domain, r.name}];
      auto& row = m.row;
      row.domain = r.domain;
      row.name = r.name;
      row.count += r.count;
      row.kernels += r.kernels;
      row.total_ns += r.total_ns;
      row.gpu_ns += r.gpu_ns;
      m.sampled |= r.launched_measured.has_value();
      m.measured += r.launched_measured.value_or(r.count);
      if (r.launched_measured == std::size_t{0}) continue; // unknown in that process
      m.known += r.count;
      row.launched_kernels += r.launched_kernels;
      row.launched_gpu_ns += r.launched_gpu_ns;
    }
  std::vector<program_range> out;
  for (auto& [key, m] : by_name) {
    if (m.sampled) {
      m.row.launched_measured = m.measured;
      const double f = m.known > 0 ? static_cast<double>(m.row.count) / static_cast<double>(m.known) : 0.0;
      m.row.launched_gpu_ns *= f;
      m.row.launched_kernels = static_cast<std::size_t>(std::llround(static_cast<double>(m.row.launched_kernels) * f));
    }
    out.push_back(std::move(m.row));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

// What a sampled process's figures are made of (program_analysis.hpp, launch_sampling).
std::string sampling_note(const process_summary& p) {
  const launch_sampling& x = *p.sampling;
  const double wall = span(p.window_start, p.window_end);
  std::string s =
      fmt::format("{}: launch calls recorded in sampled windows ({} windows, {:.1f}% of the process's time)", p.label,
                  x.windows, wall > 0 ? 100 * x.covered_ns / wall : 0.0);
  if (x.range_instances > 0)
    s += fmt::format(": range 'launched' figures from {} of {} instances, scaled to all ('-' where none was inside a "
                     "window)",
                     x.range_instances_measured, x.range_instances);
  if (x.kernels_with_call > 0)
    s += fmt::format("; launch-call counts and API time scaled by the kernels with a recorded call ({} of {})",
                     x.kernels_with_call, x.kernels);
  else if (x.kernels > 0)
    s += fmt::format("; no kernel's launch call was recorded (of {}): launch-call counts and time unknown", x.kernels);
  if (x.kernels_sharing_a_call > 0)
    s += fmt::format("; {} kernels carried the correlation id of a one-kernel launch call that another kernel had "
                     "(an id CUPTI did not renew, as while the capture was switched off): taken as without a "
                     "recorded call",
                     x.kernels_sharing_a_call);
  if (const split_estimate& e = x.api_lifetime; e.unrecorded_calls > 0)
    s += fmt::format("; the time split's CUDA API time includes {:.3f} ms estimated for the {} launch calls outside "
                     "the windows (95% interval {:.3f} .. {:.3f} ms): launch calls took {:.1f}% of the windows' time "
                     "neither GPU busy nor waiting",
                     e.moved_ns / 1e6, e.unrecorded_calls, e.low_ns / 1e6, e.high_ns / 1e6, 100 * e.launch_share);
  if (x.launch_calls_outside > 0)
    s += fmt::format("; {} of the {} recorded launch calls started more than {} ms from every window, which the "
                     "windows should not hold (a switch that took effect late, or a launch path they do not switch): "
                     "the scaled launch figures assume the recorded calls are the windows' own",
                     x.launch_calls_outside, x.launch_calls, launch_sampling::outside_margin_ns / 1'000'000);
  if (p.launch_call_median_ns > 0)
    s += fmt::format("; launch cost: the median of the {} recorded launch calls", x.launch_calls);
  else if (x.launch_calls > 0)
    s += fmt::format("; {} recorded launch calls are too few for a launch cost: the device's launch latency stands in",
                     x.launch_calls);
  return s;
}

// The rules on one process, as on a run's point: its trace summary and its activity
// (start-up, gaps, allocations, ...) are what the rules read.
void evaluate_rules(const process_summary& p, const point_result& point, const device_model& device,
                    const program_options& options, analysis_result& out) {
  const point_result judged = steady_point(point, &p);
  analysis_options rule_options;
  rule_options.disabled_rules = options.disabled_rules;
  rule_options.gap_min_ns = options.gap_min_ns;
  rule_context ctx{.point = &judged,
                   .device = device,
                   .options = rule_options,
                   .subject = p.label,
                   .trace = &p.trace,
                   .activity = &p};
  // A program declares no work: its roofline comes from the counters alone (--metrics).
  std::vector<roofline_point> rows = counter_roofline_for_point(judged, device);
  for (const auto& row : rows) ctx.roofline.push_back(&row);
  run_rules(ctx, out.findings, out.notes);
  for (auto& w : what_ifs_for_point(judged, &p.trace, device)) out.what_ifs.push_back(std::move(w));
  for (auto& row : rows) out.roofline.push_back(std::move(row));
}

void attach_ranks(program_analysis& a, std::vector<rank_summary> ranks, const program_options& options) {
  if (ranks.size() < 2) return;
  a.ranks = analyze_ranks(std::move(ranks), options.disabled_rules);
  a.result.findings.insert(a.result.findings.end(), a.ranks->findings.begin(), a.ranks->findings.end());
  a.result.notes.insert(a.result.notes.end(), a.ranks->notes.begin(), a.ranks->notes.end());
  std::stable_sort(a.result.findings.begin(), a.result.findings.end(),
                   [](const finding& x, const finding& y) { return x.estimated_gain > y.estimated_gain; });
}

} // namespace

std::string process_point_id(std::uint32_t pid) { return fmt::format("pid {}", pid); }

point_result process_point(const process_summary& p) {
  point_result r;
  r.id = process_point_id(p.info.pid);
  r.workload = p.label;
  r.variant = r.id;
  r.kind = variant_kind::cuda;
  r.params["pid"] = std::to_string(p.info.pid);
  if (p.info.truncated) r.reason = "profile truncated (the stream ends without its closing record)";
  const double wall = span(p.window_start, p.window_end);
  r.samples_ns = {wall};
  r.wall = speedlab::stats::summarize(r.samples_ns);
  if (p.split) {
    r.splits = {*p.split};
    r.split_median = r.split_q1 = r.split_q3 = *p.split;
  }
  r.dropped_records = std::max(p.info.dropped_records, p.trace.dropped_records);
  r.profiler = p.backend;
  r.profiler_messages = p.info.notes;
  r.duration_s = wall / 1e9;
  // The point rules read the counters as they read a run's counters pass, and the reports
  // the source view as a run's source pass.
  if (p.counters) r.sections.set(*p.counters);
  if (p.source) r.sections.set(*p.source);
  return r;
}

namespace {

// The critical path: of the ranks when compared (their clocks aligned as the rank merge
// aligned them), else of the one process that used the GPU; its findings go first.
void attach_path(program_analysis& a) {
  std::vector<path_input> inputs;
  auto path_of = [&a](std::uint32_t pid) -> const process_summary* {
    for (const auto& p : a.processes)
      if (p.info.pid == pid && p.path) return &p;
    return nullptr;
  };
  if (a.ranks) {
    for (const auto& r : a.ranks->ranks) {
      const process_summary* p = path_of(r.pid);
      if (!p || !r.id.rank || !compared(r, a.ranks->steps)) continue;
      double offset = 0;
      for (const auto& c : a.ranks->clocks)
        if (c.host == r.host) offset = c.offset_ns;
      inputs.push_back({*r.id.rank, r.pid, offset, p->path.get()});
    }
  } else {
    for (const auto& p : a.processes)
      if (p.path && !p.path->ops.empty()) inputs.push_back({-1, p.info.pid, 0, p.path.get()});
    if (inputs.size() > 1) {
      a.result.notes.push_back("critical path: several processes used the GPU outside a launcher's ranks; the path is "
                               "walked only within one process or across ranks");
      inputs.clear();
    }
  }
  for (const auto& in : inputs)
    if (in.records->over_limit)
      a.result.notes.push_back(fmt::format("critical path: pid {} has more than {} records; no path is walked", in.pid,
                                           path_records::max_records));
  a.path = find_critical_path(inputs);
  for (const auto& n : a.path.notes) a.result.notes.push_back("critical path: " + n);
  critical_path_findings(a.path, a.result.findings, a.result.what_ifs);
}

program_analysis analyze_processes(std::vector<process_summary> processes, program_facts facts,
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
    if (p.sampling) a.result.notes.push_back(sampling_note(p));
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
    a.result.notes.push_back(a.processes.empty()
                                 ? "no process was recorded"
                                 : "no process of the program used CUDA: there is no GPU time to split");
  a.kernels = merge_kernels(a.processes);
  a.ranges = merge_ranges(a.processes);
  std::vector<const python_lines*> lines;
  for (const auto& p : a.processes)
    if (p.python) lines.push_back(&*p.python);
  if (!lines.empty()) a.python = merge_python_lines(lines);
  std::stable_sort(a.result.findings.begin(), a.result.findings.end(),
                   [](const finding& x, const finding& y) { return x.estimated_gain > y.estimated_gain; });
  return a;
}

} // namespace

program_analysis analyze_program(std::vector<process_summary> processes, program_facts facts,
                                 const device_model& device, const program_options& options) {
  program_analysis a = analyze_processes(std::move(processes), std::move(facts), device, options);
  attach_path(a);
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
  program_analysis a = analyze_processes(std::move(processes), std::move(facts), device, options);
  attach_ranks(a, std::move(ranks), options);
  attach_path(a);
  return a;
}

} // namespace speedlab::analysis
