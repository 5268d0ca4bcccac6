#include "reports/markdown/markdown_program.hpp"

#include <fmt/format.h>

#include "reports/common/program_tables.hpp"
#include "reports/common/text.hpp"
#include "reports/markdown/markdown_table.hpp"

namespace speedlab::reports {

std::string markdown_program_section(const analysis::program_analysis& a) {
  std::string out;
  bool first = true;
  for (const auto& tb : program_tables(a)) {
    out += (first ? "## " : "### ") + tb.title + "\n\n";
    first = false;
    if (!tb.intro.empty()) out += md_text(tb.intro) + "\n\n";
    if (tb.rows.empty()) {
      out += md_text(tb.empty_note) + "\n\n";
      continue;
    }
    table_rows rows;
    for (const auto& r : tb.rows) {
      std::vector<std::string> cells;
      for (const auto& c : r) cells.push_back(c.text.empty() ? "" : c.code ? md_code(c.text) : md_text(c.text));
      rows.push_back(std::move(cells));
    }
    table(out, tb.header, rows, tb.numeric);
    if (tb.omitted) out += fmt::format("{} more rows in results.json.\n\n", tb.omitted);
  }
  return out;
}

} // namespace speedlab::reports
