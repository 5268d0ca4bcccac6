#include "reports/common/program_content.hpp"

#include <map>
#include <string>

#include "analysis/rank_analysis.hpp"
#include "reports/common/process_ranks.hpp"
#include "reports/common/program_tables.hpp"
#include "reports/common/text.hpp"

namespace speedlab::reports {
namespace {

std::string x(double v) { return fmt_exact(v); }
std::string u(std::size_t v) { return std::to_string(v); }

data_table processes_table(const analysis::program_analysis& a) {
  data_table tb{"program_processes",
                {"pid", "parent_pid", "command_line", "used_cuda", "wall_ns", "exit_code", "signal", "truncated",
                 "truncated_after_ns", "records", "dropped_records", "split_kernel_ns", "split_h2d_ns", "split_d2h_ns",
                 "split_copy_other_ns", "split_memset_ns", "split_sync_ns", "split_api_ns", "split_host_ns", "gaps",
                 "gap_total_ns", "gap_largest_ns"},
                {}};
  for (const auto& p : a.processes) {
    const auto& i = p.info;
    const time_split s = p.split.value_or(time_split{});
    tb.rows.push_back({u(i.pid), u(i.parent_pid), command_text(i.command_line), i.used_cuda ? "true" : "false",
                       x(p.window_end > p.window_start ? double(p.window_end - p.window_start) : 0),
                       i.exit_code ? std::to_string(*i.exit_code) : "", i.signal ? std::to_string(*i.signal) : "",
                       i.truncated ? "true" : "false",
                       i.truncated && i.last_flush_ns > i.start_ns ? x(double(i.last_flush_ns - i.start_ns)) : "",
                       u(p.records), std::to_string(i.dropped_records), x(s.kernel), x(s.h2d), x(s.d2h),
                       x(s.copy_other), x(s.memset), x(s.sync), x(s.api), x(s.host), u(p.gaps.count),
                       x(p.gaps.total_ns), x(p.gaps.largest_ns)});
  }
  return tb;
}

data_table kernels_table(const analysis::program_analysis& a) {
  data_table tb{"program_kernels",
                {"kernel", "launches", "processes", "total_ns", "mean_ns", "min_ns", "max_ns", "grid_x", "grid_y",
                 "grid_z", "block_x", "block_y", "block_z", "share"},
                {}};
  for (const auto& k : a.kernels)
    tb.rows.push_back({k.name, u(k.launches), u(k.processes), x(k.total_ns), x(k.mean_ns), x(k.min_ns), x(k.max_ns),
                       std::to_string(k.grid[0]), std::to_string(k.grid[1]), std::to_string(k.grid[2]),
                       std::to_string(k.block[0]), std::to_string(k.block[1]), std::to_string(k.block[2]), x(k.share)});
  return tb;
}

data_table ranges_table(const analysis::program_analysis& a) {
  bool sampled = false;
  for (const auto& r : a.ranges) sampled |= r.launched_measured.has_value();
  data_table tb{"program_ranges",
                {"domain", "range", "count", "total_ns", "gpu_ns", "kernels", "launched_gpu_ns", "launched_kernels"},
                {}};
  // Launch calls sampled: the ranges the launched figures come from; empty figures where
  // none was measured (unknown, not zero).
  if (sampled) tb.header.push_back("launched_measured");
  for (const auto& r : a.ranges) {
    const bool unknown = r.launched_measured == std::size_t{0};
    tb.rows.push_back({r.domain, r.name, u(r.count), x(r.total_ns), x(r.gpu_ns), u(r.kernels),
                       unknown ? "" : x(r.launched_gpu_ns), unknown ? "" : u(r.launched_kernels)});
    if (sampled) tb.rows.back().push_back(u(r.launched_measured.value_or(r.count)));
  }
  return tb;
}

data_table streams_table(const analysis::program_analysis& a) {
  data_table tb{"program_streams",
                {"pid", "device", "stream", "kernels", "kernel_ns", "copies", "copy_ns", "memsets", "memset_ns"},
                {}};
  for (const auto& s : a.streams)
    tb.rows.push_back({u(s.pid), u(s.device), u(s.stream), u(s.kernels), x(s.kernel_ns), u(s.copies), x(s.copy_ns),
                       u(s.memsets), x(s.memset_ns)});
  return tb;
}

data_table python_lines_table(const analysis::program_analysis& a) {
  data_table tb{
      "program_python_lines",
      {"file",     "line",      "function",  "calls",     "inferred_calls", "launches",         "graph_launches",
       "kernels",  "kernel_ns", "copies",    "h2d_bytes", "d2h_bytes",      "other_copy_bytes", "pageable_bytes",
       "copy_ns",  "memsets",   "memset_ns", "syncs",     "sync_ns",        "allocs",           "frees",
       "alloc_ns", "processes"},
      {}};
  for (const auto& l : a.python.lines)
    tb.rows.push_back({l.file,
                       u(l.line),
                       l.function,
                       u(l.calls),
                       u(l.inferred_calls),
                       u(l.launches),
                       u(l.graph_launches),
                       u(l.kernels),
                       x(l.kernel_ns),
                       u(l.copies),
                       x(l.h2d_bytes),
                       x(l.d2h_bytes),
                       x(l.other_copy_bytes),
                       x(l.pageable_bytes),
                       x(l.copy_ns),
                       u(l.memsets),
                       x(l.memset_ns),
                       u(l.syncs),
                       x(l.sync_ns),
                       u(l.allocs),
                       u(l.frees),
                       x(l.alloc_ns),
                       u(l.processes)});
  return tb;
}

} // namespace

std::vector<data_table> program_data_tables(const analysis::program_analysis& a) {
  std::vector<data_table> out{processes_table(a), kernels_table(a), ranges_table(a), streams_table(a)};
  if (!a.python.empty()) out.push_back(python_lines_table(a)); // Python programs only: other goldens unchanged
  return out;
}

std::vector<process_identity> process_identities(const analysis::program_analysis& a) {
  std::vector<process_identity> out;
  std::map<std::string, double> offset_of_host;
  if (a.ranks)
    for (const auto& c : a.ranks->clocks) offset_of_host[c.host] = c.offset_ns;
  for (const auto& p : a.processes) {
    process_identity id;
    id.point_id = analysis::process_point_id(p.info.pid);
    id.pid = p.info.pid;
    id.host = p.info.host;
    const analysis::rank_identity r = analysis::identify_rank(p.info);
    id.rank = r.rank;
    id.local_rank = r.local_rank;
    id.world_size = r.world_size;
    if (auto it = offset_of_host.find(id.host); it != offset_of_host.end()) id.clock_offset_ns = it->second;
    out.push_back(std::move(id));
  }
  return out;
}

nlohmann::json program_json(const analysis::program_analysis& a, const std::vector<process_identity>& ids) {
  nlohmann::json j = a;
  const auto by_point = identities_by_point(ids);
  auto by_pid = [&by_point](const nlohmann::json& pid) -> const process_identity* {
    if (!pid.is_number_unsigned()) return nullptr;
    auto it = by_point.find(analysis::process_point_id(pid.get<std::uint32_t>()));
    return it == by_point.end() ? nullptr : it->second;
  };
  for (const char* set : {"processes", "streams"})
    if (j.contains(set) && j[set].is_array())
      for (auto& record : j[set])
        if (const auto* id = by_pid(record.value("pid", nlohmann::json()))) tag_with_rank(record, *id);
  return j;
}

nlohmann::json program_json(const analysis::program_analysis& a) { return program_json(a, process_identities(a)); }

report_content program_content(const analysis::program_analysis& program) {
  report_content content;
  content.sections.push_back({"program", "Program", program_tables(program)});
  content.data_tables = program_data_tables(program);
  content.processes = process_identities(program);
  content.json_members.emplace_back("program", program_json(program, content.processes));
  return content;
}

} // namespace speedlab::reports
