// The Markdown table every section of report.md is made of (internal to reports/markdown/).
#pragma once

#include <string>
#include <vector>

namespace speedlab::reports {

using table_rows = std::vector<std::vector<std::string>>;

// Cells are already escaped; `right` marks numeric columns.
inline void table(std::string& out, const std::vector<std::string>& header, const table_rows& rows,
                  const std::vector<bool>& right = {}) {
  out += "|";
  for (const auto& h : header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out += i < right.size() && right[i] ? "---:|" : "---|";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (std::size_t i = 0; i < header.size(); ++i) out += " " + (i < r.size() && !r[i].empty() ? r[i] : " ") + " |";
    out += "\n";
  }
  out += "\n";
}

} // namespace speedlab::reports
