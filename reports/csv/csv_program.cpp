#include "reports/csv/csv_program.hpp"

#include <fstream>
#include <string>

#include "model/atomic_file.hpp"
#include "reports/common/program_tables.hpp"
#include "reports/common/text.hpp"

namespace speedlab::reports {
namespace {

using csv_row = std::vector<std::string>;

std::filesystem::path write_file(const std::filesystem::path& path, const csv_row& header, const std::vector<csv_row>& rows) {
  atomic_file file(path);
  std::ofstream& out = file.stream();
  for (std::size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << header[i];
  out << "\r\n";
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) out << (i ? "," : "") << csv_field(r[i]);
    out << "\r\n";
  }
  file.commit();
  return path;
}

std::string x(double v) { return fmt_exact(v); }
std::string u(std::size_t v) { return std::to_string(v); }

} // namespace

std::vector<std::filesystem::path> write_program_csv(const analysis::program_analysis& a, const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> written;
  std::vector<csv_row> rows;
  for (const auto& p : a.processes) {
    const auto& i = p.info;
    const time_split s = p.split.value_or(time_split{});
    rows.push_back({u(i.pid), u(i.parent_pid), command_text(i.command_line), i.used_cuda ? "true" : "false",
                    x(p.window_end > p.window_start ? double(p.window_end - p.window_start) : 0),
                    i.exit_code ? std::to_string(*i.exit_code) : "", i.signal ? std::to_string(*i.signal) : "",
                    i.truncated ? "true" : "false", i.truncated && i.last_flush_ns > i.start_ns ? x(double(i.last_flush_ns - i.start_ns)) : "",
                    u(p.records), std::to_string(i.dropped_records), x(s.kernel), x(s.h2d), x(s.d2h), x(s.copy_other),
                    x(s.memset), x(s.sync), x(s.api), x(s.host), u(p.gaps.count), x(p.gaps.total_ns), x(p.gaps.largest_ns)});
  }
  written.push_back(write_file(dir / "program_processes.csv",
                               {"pid", "parent_pid", "command_line", "used_cuda", "wall_ns", "exit_code", "signal", "truncated",
                                "truncated_after_ns", "records", "dropped_records", "split_kernel_ns", "split_h2d_ns",
                                "split_d2h_ns", "split_copy_other_ns", "split_memset_ns", "split_sync_ns", "split_api_ns",
                                "split_host_ns", "gaps", "gap_total_ns", "gap_largest_ns"},
                               rows));
  rows.clear();
  for (const auto& k : a.kernels)
    rows.push_back({k.name, u(k.launches), u(k.processes), x(k.total_ns), x(k.mean_ns), x(k.min_ns), x(k.max_ns),
                    std::to_string(k.grid[0]), std::to_string(k.grid[1]), std::to_string(k.grid[2]),
                    std::to_string(k.block[0]), std::to_string(k.block[1]), std::to_string(k.block[2]), x(k.share)});
  written.push_back(write_file(dir / "program_kernels.csv",
                               {"kernel", "launches", "processes", "total_ns", "mean_ns", "min_ns", "max_ns", "grid_x",
                                "grid_y", "grid_z", "block_x", "block_y", "block_z", "share"},
                               rows));
  rows.clear();
  for (const auto& r : a.ranges)
    rows.push_back({r.domain, r.name, u(r.count), x(r.total_ns), x(r.gpu_ns), u(r.kernels), x(r.launched_gpu_ns),
                    u(r.launched_kernels)});
  written.push_back(write_file(dir / "program_ranges.csv",
                               {"domain", "range", "count", "total_ns", "gpu_ns", "kernels", "launched_gpu_ns",
                                "launched_kernels"},
                               rows));
  rows.clear();
  for (const auto& s : a.streams)
    rows.push_back({u(s.pid), u(s.device), u(s.stream), u(s.kernels), x(s.kernel_ns), u(s.copies), x(s.copy_ns),
                    u(s.memsets), x(s.memset_ns)});
  written.push_back(write_file(dir / "program_streams.csv",
                               {"pid", "device", "stream", "kernels", "kernel_ns", "copies", "copy_ns", "memsets", "memset_ns"},
                               rows));
  return written;
}

} // namespace speedlab::reports
