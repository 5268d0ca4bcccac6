#include "reports/common/program_tables.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "reports/common/python_table.hpp"
#include "reports/common/text.hpp"

namespace speedlab::reports {
namespace {

report_cell t(std::string s) { return {std::move(s), false}; }
report_cell c(std::string s) { return {std::move(s), true}; }
report_cell count(std::size_t v) { return {std::to_string(v), false}; }
report_cell dur(double ns) { return {ns > 0 ? fmt_duration(ns) : "—", false}; }
report_cell share(double part, double whole) { return {whole > 0 ? fmt_percent(100 * part / whole) : "—", false}; }

std::string dims(const std::array<std::int32_t, 3>& d) { return fmt::format("{}×{}×{}", d[0], d[1], d[2]); }

void limit(report_table& table, std::size_t max_rows) {
  if (table.rows.size() <= max_rows) return;
  table.omitted = table.rows.size() - max_rows;
  table.rows.resize(max_rows);
}

report_table facts_table(const analysis::program_analysis& a) {
  report_table tb{"program-facts", "Program", "", {"", ""}, {false, false}, {}, "", 0};
  const auto& f = a.facts;
  std::size_t cuda = 0, truncated = 0;
  for (const auto& p : a.processes) {
    cuda += p.split ? 1 : 0;
    truncated += p.info.truncated ? 1 : 0;
  }
  tb.rows.push_back({t("command"), c(command_text(f.command_line))});
  if (!f.started_at.empty()) tb.rows.push_back({t("started (UTC)"), t(f.started_at)});
  if (!f.hostname.empty()) tb.rows.push_back({t("host"), c(f.hostname)});
  tb.rows.push_back({t("wall time"), t(fmt_duration(f.wall_s * 1e9))});
  tb.rows.push_back({t("exit code"), t(f.exit_code ? std::to_string(*f.exit_code) +
                                                          (*f.exit_code > 128 ? fmt::format(" (signal {}?)", *f.exit_code - 128) : "")
                                                    : "unknown")});
  tb.rows.push_back({t("processes"), t(fmt::format("{}, {} used CUDA{}", a.processes.size(), cuda,
                                                   truncated ? fmt::format(", {} truncated", truncated) : ""))});
  tb.rows.push_back({t("activity records"), t(std::to_string(a.records))});
  for (const auto& note : f.notes) tb.rows.push_back({t("note"), t(note)});
  return tb;
}

// Launch calls recorded in sampled windows: how much of the API time is estimated from them
// (analysis/sampled_split.hpp), summed over the processes with its interval's ends.
std::string estimated_api(const analysis::program_analysis& a) {
  analysis::split_estimate sum;
  for (const auto& p : a.processes)
    if (p.sampling) {
      sum.moved_ns += p.sampling->api_lifetime.moved_ns;
      sum.low_ns += p.sampling->api_lifetime.low_ns;
      sum.high_ns += p.sampling->api_lifetime.high_ns;
      sum.windows += p.sampling->api_lifetime.windows;
      sum.unrecorded_calls += p.sampling->api_lifetime.unrecorded_calls;
    }
  if (sum.unrecorded_calls == 0) return "";
  return fmt::format("includes {} estimated for the {} launch calls outside the sampled windows (95% interval {} .. "
                     "{}, from {} windows)",
                     fmt_duration(sum.moved_ns), sum.unrecorded_calls, fmt_duration(sum.low_ns),
                     fmt_duration(sum.high_ns), sum.windows);
}

report_table split_table(const analysis::program_analysis& a) {
  const time_split& s = a.split;
  report_table tb{"program-split", "Where the time went",
                   "Each process's wall time split (GPU busy first: kernels, copies, memsets; then what the host did while "
                   "the GPU idled), summed over the processes that used CUDA.",
                   {"part", "time", "share", "detail"}, {false, true, true, false}, {}, "", 0};
  auto copies = [](const analysis::copy_stats& cs) {
    if (cs.count == 0) return std::string();
    return fmt::format("{} copies, {}; pageable {} ({}), pinned {} ({})", cs.count, fmt_bytes(cs.bytes), cs.pageable_count,
                       fmt_duration(cs.pageable_ns), cs.count - cs.pageable_count, fmt_duration(cs.pinned_ns));
  };
  const double w = s.wall_ns;
  tb.rows.push_back({t("kernels"), dur(s.kernel), share(s.kernel, w), t("")});
  tb.rows.push_back({t("copies host → device"), dur(s.h2d), share(s.h2d, w), t(copies(a.h2d))});
  tb.rows.push_back({t("copies device → host"), dur(s.d2h), share(s.d2h, w), t(copies(a.d2h))});
  tb.rows.push_back({t("other copies"), dur(s.copy_other), share(s.copy_other, w), t(copies(a.other_copies))});
  tb.rows.push_back({t("memsets"), dur(s.memset), share(s.memset, w), t("")});
  tb.rows.push_back({t("synchronization (GPU idle)"), dur(s.sync), share(s.sync, w), t("")});
  tb.rows.push_back({t("other CUDA API (GPU idle)"), dur(s.api), share(s.api, w), t(estimated_api(a))});
  tb.rows.push_back({t("host code (GPU idle)"), dur(s.host), share(s.host, w), t("")});
  tb.rows.push_back({t("wall time"), dur(w), share(w, w), t("")});
  if (w <= 0) tb.rows.clear();
  tb.empty_note = "No process used CUDA: there is no GPU time to split.";
  return tb;
}

report_table process_table(const analysis::program_analysis& a) {
  report_table tb{"program-processes", "Processes", "",
                   {"pid", "parent", "command line", "CUDA", "wall", "exit", "profile", "records"},
                   {true, true, false, false, true, false, false, true}, {}, "No process was recorded.", 0};
  for (const auto& p : a.processes) {
    const auto& i = p.info;
    std::string exit = i.signal ? fmt::format("signal {}", *i.signal) : i.exit_code ? std::to_string(*i.exit_code) : "unknown";
    std::string profile = i.truncated ? fmt::format("truncated after {}",
                                                    fmt_duration(i.last_flush_ns > i.start_ns ? double(i.last_flush_ns - i.start_ns) : 0))
                                      : "complete";
    if (i.dropped_records) profile += fmt::format(", {} records dropped", i.dropped_records);
    for (const auto& note : i.notes) profile += "; " + note;
    tb.rows.push_back({count(i.pid), count(i.parent_pid), c(command_text(i.command_line)),
                       t(p.split ? "yes" : "no (costs nothing)"),
                       dur(p.window_end > p.window_start ? double(p.window_end - p.window_start) : 0), t(exit), t(profile),
                       count(p.records)});
  }
  return tb;
}

report_table kernel_table(const analysis::program_analysis& a) {
  report_table tb{"program-kernels", "Top kernels", "By total GPU time over all processes; grid and block of the longest launch.",
                   {"kernel", "launches", "total", "mean", "min", "max", "grid", "block", "share"},
                   {false, true, true, true, true, true, false, false, true}, {}, "No kernels ran.", 0};
  for (const auto& k : a.kernels)
    tb.rows.push_back({c(k.name), count(k.launches), dur(k.total_ns), dur(k.mean_ns), dur(k.min_ns), dur(k.max_ns),
                       t(dims(k.grid)), t(dims(k.block)), t(fmt_percent(100 * k.share))});
  return tb;
}

report_table range_table(const analysis::program_analysis& a) {
  bool sampled = false;
  for (const auto& r : a.ranges) sampled |= r.launched_measured.has_value();
  report_table tb{"program-ranges", "NVTX ranges",
                   "The program's own ranges by name: how often, how long in all, the GPU busy time inside them, "
                   "and the GPU time of the work they launched, wherever it ran (the GPU runs behind the host: "
                   "what a range launches often runs after it ends).",
                   {"domain", "range", "count", "total", "GPU busy inside", "GPU share", "kernels started",
                    "GPU time launched", "kernels launched"},
                   {false, false, true, true, true, true, true, true, true}, {}, "The program marked no NVTX ranges.", 0};
  if (sampled) {
    // Launch calls recorded in sampled windows: the launched figures are estimates.
    tb.intro += " Launch calls were recorded in sampled windows: the launched figures are those of the ranges "
                "that lay wholly inside a window, scaled to all of them (\"launched from\"); - where none did.";
    tb.header.push_back("launched from");
    tb.numeric.push_back(false);
  }
  for (const auto& r : a.ranges) {
    const bool unknown = r.launched_measured == std::size_t{0};
    tb.rows.push_back({c(r.domain.empty() ? "(default)" : r.domain), c(r.name), count(r.count), dur(r.total_ns),
                       dur(r.gpu_ns), share(r.gpu_ns, r.total_ns), count(r.kernels),
                       unknown ? t("-") : dur(r.launched_gpu_ns), unknown ? t("-") : count(r.launched_kernels)});
    if (sampled)
      tb.rows.back().push_back(t(r.launched_measured ? fmt::format("{} of {}", *r.launched_measured, r.count) : "all"));
  }
  return tb;
}

report_table stream_table(const analysis::program_analysis& a) {
  report_table tb{"program-streams", "Streams", "",
                   {"pid", "device", "stream", "kernels", "kernel time", "copies", "copy time", "memsets", "memset time"},
                   {true, true, true, true, true, true, true, true, true}, {}, "No GPU activity on any stream.", 0};
  for (const auto& s : a.streams)
    tb.rows.push_back({count(s.pid), count(s.device), count(s.stream), count(s.kernels), dur(s.kernel_ns),
                       count(s.copies), dur(s.copy_ns), count(s.memsets), dur(s.memset_ns)});
  return tb;
}

report_table gap_table(const analysis::program_analysis& a, std::size_t max_causes) {
  report_table tb{"program-gaps", "GPU idle gaps",
                   "Gaps between GPU work from the first to the last GPU activity of each process, by what the host thread "
                   "was inside meanwhile: a CUDA call covering most of the gap, else the innermost NVTX range.",
                   {"process", "host inside", "gaps", "total", "largest", "share of active time"},
                   {false, false, true, true, true, true}, {}, "No gaps: the GPU was never idle long between work.", 0};
  for (const auto& p : a.processes) {
    if (p.gaps.count == 0) continue;
    tb.rows.push_back({c(p.label), t("all gaps"), count(p.gaps.count), dur(p.gaps.total_ns), dur(p.gaps.largest_ns),
                       share(p.gaps.total_ns, p.gaps.active_span_ns)});
    for (std::size_t i = 0; i < p.gaps.causes.size() && i < max_causes; ++i) {
      const auto& cause = p.gaps.causes[i];
      tb.rows.push_back({t(""), c(cause.what), count(cause.gaps), dur(cause.total_ns), dur(cause.largest_ns),
                         share(cause.total_ns, p.gaps.active_span_ns)});
    }
  }
  return tb;
}

} // namespace

std::string command_text(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& arg : argv) {
    if (!s.empty()) s += ' ';
    const bool quote = arg.empty() || arg.find_first_of(" \t\"'\\") != std::string::npos;
    if (!quote) {
      s += arg;
      continue;
    }
    s += '\'';
    for (char ch : arg) s += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    s += '\'';
  }
  return s;
}

// The ranks of a multi-process job side by side (analysis/rank_analysis.hpp).
report_table rank_table(const analysis::rank_analysis& r) {
  std::string intro = fmt::format("Steps: {} ({}). Load imbalance (max / mean compute per step): {:.2f}.", r.steps,
                                  r.step_method.empty() ? "none found" : r.step_method, r.imbalance);
  if (r.straggler)
    intro += fmt::format(" Straggler: rank {}, {} more compute per step than the others.", *r.straggler,
                         fmt_duration(r.straggler_excess_ns));
  if (!r.wait_method.empty())
    intro += r.wait_method == "gpu idle"
                 ? " Waits are GPU idle time per step above the least of any rank (no collective kernels: the "
                   "collectives run on the host)."
                 : " Waits are time per step in collective kernels above the least of any rank.";
  for (const auto& c : r.clocks)
    if (c.method == "collective ends")
      intro += fmt::format(" Host {}'s clock shifted by {:+.3f} ms to align it ({} collectives).", c.host, c.offset_ns / 1e6,
                           c.matched);
    else if (c.method == "wall clock")
      intro += fmt::format(" Host {}'s clock shifted by {:+.3f} ms by the streams' wall clocks.", c.host, c.offset_ns / 1e6);
  report_table tb{"program-ranks", "Ranks", intro,
                   {"rank", "host", "pid", "GPU", "compute", "communication", "overlapped", "GPU idle", "first kernel",
                    "steps", "wait per step"},
                   {true, false, true, false, true, true, true, true, true, true, true}, {}, "", 0, &r};
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const auto& x = r.ranks[i];
    tb.rows.push_back({t(x.id.rank ? std::to_string(*x.id.rank) : "-"), t(x.host), count(x.pid), c(x.gpu),
                       dur(x.compute_ns), dur(x.comm_ns), dur(x.overlap_ns), dur(x.idle_ns),
                       t(x.first_kernel_ns ? fmt_duration(*x.first_kernel_ns) : "-"), count(x.steps.size()),
                       dur(i < r.wait_per_step_ns.size() ? r.wait_per_step_ns[i] : 0)});
  }
  return tb;
}

// The critical path step by step (analysis/critical_path.hpp): each step's length and its
// path time by kind, and the longest thing on it.
std::string path_intro(const analysis::critical_path& p) {
  std::string s = fmt::format("Steps by {}; the median step's path is {} (over {} steps; the first, with no "
                              "previous end, apart). Each step's path runs backward from its last work to the "
                              "previous step's end, so its segments add up to the step.",
                              p.step_method, fmt_duration(p.median_step_ns), p.judged);
  if (p.culprit && p.culprit->rank >= 0)
    s += fmt::format(" Culprit: rank {}, {} per step of {} {} that the other ranks wait for ({} per step).",
                     p.culprit->rank, fmt_duration(p.culprit->cost_ns), analysis::to_string(p.culprit->kind),
                     p.culprit->name, fmt_duration(p.culprit->others_wait_ns));
  else if (p.culprit)
    s += fmt::format(" Culprit: the per-step synchronization ({}, {} per step) and {} of host work after it.",
                     p.culprit->sync_call, fmt_duration(p.culprit->sync_wait_ns), fmt_duration(p.culprit->cost_ns));
  else
    s += " No culprit named.";
  return s;
}

report_table path_table(const analysis::critical_path& p) {
  using analysis::segment_kind;
  report_table tb{"program-critical-path",
                  "Critical path",
                  path_intro(p),
                  {"step", "length", "host work", "API calls", "GPU work", "sync wait", "collective", "gaps",
                   "longest on the path"},
                  {true, true, true, true, true, true, true, true, false},
                  {},
                  "",
                  0,
                  nullptr,
                  &p};
  for (const auto& s : p.steps) {
    std::map<segment_kind, double> by_kind;
    std::map<std::string, double> by_thing;
    for (const auto& g : s.segments) {
      by_kind[g.kind] += g.ns();
      by_thing[(g.rank >= 0 ? fmt::format("rank {} ", g.rank) : std::string()) +
               std::string(analysis::to_string(g.kind)) + " " + g.name] += g.ns();
    }
    auto longest =
        std::max_element(by_thing.begin(), by_thing.end(), [](auto& x, auto& y) { return x.second < y.second; });
    const double gpu = by_kind[segment_kind::kernel] + by_kind[segment_kind::copy] + by_kind[segment_kind::memset];
    tb.rows.push_back(
        {count(s.step), dur(s.length_ns()), dur(by_kind[segment_kind::host]), dur(by_kind[segment_kind::api]), dur(gpu),
         dur(by_kind[segment_kind::sync]), dur(by_kind[segment_kind::collective]), dur(by_kind[segment_kind::gap]),
         longest == by_thing.end() ? t("—")
                                   : c(fmt::format("{} ({})", longest->first, fmt_duration(longest->second)))});
  }
  return tb;
}

// The lines of the program's Python code (analysis/python_lines.hpp), most costly first: what
// each launched on the GPU and how long it kept the host waiting.
std::string python_intro(const analysis::python_lines& p) {
  const auto& v = p.coverage;
  std::string s = fmt::format("Each CUDA call carried the Python stack of its moment{}; a call and the GPU work it "
                              "launched go to the innermost line of the program's own code (not the standard "
                              "library, site-packages or generated code). Sorted by GPU time launched plus time "
                              "blocked.",
                              p.interpreter.empty() ? "" : " (CPython " + p.interpreter + ")");
  if (v.kernel_ns > 0)
    s += fmt::format(" Of {} of kernel time, {} came from lines of the program", fmt_duration(v.kernel_ns),
                     fmt_percent(100 * v.kernel_ns_own / v.kernel_ns));
  if (v.kernel_ns > 0 && v.kernel_ns_inferred > 0)
    s += fmt::format(" and {} from threads without Python frames (PyTorch's autograd engine), given to the last "
                     "line another thread ran (marked \"inferred\")",
                     fmt_percent(100 * v.kernel_ns_inferred / v.kernel_ns));
  if (v.kernel_ns > 0) s += ".";
  if (v.windowed_processes > 0)
    s += fmt::format(" Launch calls were captured in windows (the light default; `--full` takes every one): the "
                     "kernels launched in them, {} of the {}, stand for all, so each line's kernels, launches and "
                     "kernel time are estimates, scaled by the same factor.",
                     fmt_duration(v.kernel_ns_captured), fmt_duration(v.kernel_ns));
  if (v.calls_library + v.calls_unknown > 0)
    s += fmt::format(" {} of {} calls had no frame of the program (library code alone, or no Python stack).",
                     v.calls_library + v.calls_unknown, v.calls);
  return s;
}

report_table python_table(const analysis::python_lines& p) {
  report_table tb{"program-python-lines",
                  "Python lines",
                  python_intro(p),
                  {"line", "source", "calls", "kernels", "GPU time", "copied", "blocked in sync", "allocations"},
                  {false, false, true, true, true, false, true, true},
                  {},
                  "no CUDA call came from a line of the program",
                  0};
  tb.python_flame = &p;
  for (const auto& l : p.lines) {
    std::string where = fmt::format("{}:{}", l.file, l.line);
    if (l.inferred_calls > 0) where += fmt::format(" (inferred: {} calls)", l.inferred_calls);
    tb.rows.push_back(
        {c(where), c(l.text), count(l.calls),
         t(l.kernels ? fmt::format("{}{}", l.kernels,
                                   l.graph_launches ? fmt::format(" in {} graph launches", l.graph_launches) : "")
                     : "—"),
         dur(l.gpu_ns()), t(copied_text(l)),
         t(l.syncs ? fmt::format("{} in {}", fmt_duration(l.sync_ns), l.syncs) : "—"),
         t(l.allocs + l.frees ? fmt::format("{} ({})", l.allocs + l.frees, fmt_duration(l.alloc_ns)) : "—")});
  }
  return tb;
}

std::vector<report_table> program_tables(const analysis::program_analysis& a, std::size_t max_rows) {
  std::vector<report_table> out{facts_table(a),  split_table(a),  process_table(a), kernel_table(a),
                                 range_table(a), stream_table(a), gap_table(a, 5)};
  if (a.ranks) out.insert(out.begin() + 3, rank_table(*a.ranks));
  if (!a.path.steps.empty()) out.insert(out.begin() + (a.ranks ? 4 : 3), path_table(a.path));
  // Right after the time split: the lines are where a Python user changes something.
  if (!a.python.empty()) out.insert(out.begin() + 2, python_table(a.python));
  for (std::size_t i = 2; i < out.size(); ++i) limit(out[i], max_rows);
  return out;
}

} // namespace speedlab::reports
