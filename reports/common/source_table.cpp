#include "reports/common/source_table.hpp"

#include <fmt/format.h>

#include "analysis/source_lines.hpp"
#include "reports/common/text.hpp"

namespace speedlab::reports {

std::vector<source_row> source_rows(const std::vector<point_result>& points, std::size_t lines_per_kernel) {
  std::vector<source_row> rows;
  for (const auto& p : points) {
    for (const auto& k : analysis::source_kernels(p)) {
      const std::string kernel = fmt::format("{} ({} of samples)", k.kernel, fmt_percent(100 * k.share));
      for (std::size_t i = 0; i < k.data->lines.size() && i < lines_per_kernel; ++i) {
        const auto& l = k.data->lines[i];
        rows.push_back({p.id, kernel, source::line_label(l), fmt_percent(100 * l.share), analysis::describe_stalls(l),
                        l.sectors_per_request ? fmt_sig(*l.sectors_per_request) : "—", l.text});
      }
    }
  }
  return rows;
}

} // namespace speedlab::reports
