#include "reports/markdown/markdown_sections.hpp"

#include <fmt/format.h>

#include "reports/common/text.hpp"
#include "reports/markdown/markdown_table.hpp"

namespace speedlab::reports {
namespace {

void markdown_table(std::string& out, const report_table& tb, bool heading) {
  out += (heading ? "## " : "### ") + tb.title + "\n\n";
  if (!tb.intro.empty()) out += md_text(tb.intro) + "\n\n";
  if (tb.rows.empty()) {
    out += md_text(tb.empty_note) + "\n\n";
    return;
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

} // namespace

void markdown_sections(std::string& out, const std::vector<report_section>& sections) {
  for (const auto& s : sections)
    for (std::size_t i = 0; i < s.tables.size(); ++i) markdown_table(out, s.tables[i], i == 0);
}

} // namespace speedlab::reports
