#include "reports/common/python_table.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "reports/common/text.hpp"

namespace speedlab::reports {

std::string copied_text(const pylines::python_line& l) {
  if (l.copies == 0) return "—";
  std::string s;
  if (l.h2d_bytes > 0) s += fmt_bytes(l.h2d_bytes) + " H2D";
  if (l.d2h_bytes > 0) s += (s.empty() ? "" : ", ") + fmt_bytes(l.d2h_bytes) + " D2H";
  if (l.other_copy_bytes > 0) s += (s.empty() ? "" : ", ") + fmt_bytes(l.other_copy_bytes) + " other";
  if (l.pageable_bytes > 0) s += fmt::format(" ({} pageable)", fmt_bytes(l.pageable_bytes));
  return fmt::format("{} in {}", s.empty() ? "0 B" : s, l.copies);
}

std::vector<report_section> python_point_sections(const std::vector<point_result>& points,
                                                  std::size_t lines_per_point) {
  report_table tb{"python-lines-points",
                  "Python lines",
                  "Which line of each Python variant made its CUDA calls: every call of the measured repetitions "
                  "carried the worker's Python stack, and a call and the GPU work it launched go to the innermost line "
                  "of the variant's own code (not the standard library, site-packages or speedlab's bridge). The "
                  "capture ran during the timed repetitions, like CUPTI's records; docs/python-variants.md says what "
                  "it costs.",
                  {"point", "line", "calls", "kernels", "GPU time", "copied", "blocked in sync", "source"},
                  {false, false, true, true, true, false, true, false},
                  {},
                  "",
                  0};
  const auto text = [](std::string s) { return report_cell{std::move(s), false}; };
  const auto code = [](std::string s) { return report_cell{std::move(s), true}; };
  for (const auto& p : points) {
    const auto* lines = p.sections.get<pylines::python_lines>();
    if (!lines) continue;
    for (std::size_t i = 0; i < lines->lines.size() && i < lines_per_point; ++i) {
      const auto& l = lines->lines[i];
      // The package's files sit under one long folder; the file's name and line say which.
      const std::string file = std::filesystem::path(l.file).filename().string();
      tb.rows.push_back({code(p.id), code(fmt::format("{}:{}", file.empty() ? l.file : file, l.line)),
                         text(std::to_string(l.calls)), text(l.kernels ? std::to_string(l.kernels) : "—"),
                         text(l.gpu_ns() > 0 ? fmt_duration(l.gpu_ns()) : "—"), text(copied_text(l)),
                         text(l.syncs ? fmt::format("{} in {}", fmt_duration(l.sync_ns), l.syncs) : "—"),
                         l.text.empty() ? text("—") : code(l.text)});
    }
  }
  if (tb.rows.empty()) return {};
  return {report_section{"python-lines", "Python lines", {std::move(tb)}}};
}

} // namespace speedlab::reports
