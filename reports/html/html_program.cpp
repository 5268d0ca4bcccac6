#include "reports/html/html_program.hpp"

#include <fmt/format.h>

#include "reports/common/program_tables.hpp"
#include "reports/html/html_table.hpp"
#include "reports/html/svg_charts.hpp"

namespace speedlab::reports::html {

void program_section(writer& w, const analysis::program_analysis& a) {
  w << "<section id=\"program\">"_html;
  bool first = true;
  for (const auto& tb : program_tables(a)) {
    w.element(first ? "h2" : "h3", tb.title, {{"id", tb.id}});
    first = false;
    if (!tb.intro.empty()) w.element("p", tb.intro);
    // The ranks of a job by time, above their table.
    if (tb.id == "program-ranks" && a.ranks) {
      w << "<figure class=\"rank-timeline\">"_html;
      rank_timeline_chart(w, *a.ranks);
      w << "</figure>"_html;
    }
    if (tb.rows.empty()) {
      w.element("p", tb.empty_note, {{"class", "note"}});
      continue;
    }
    std::vector<row> rows;
    for (const auto& r : tb.rows) {
      std::vector<cell> cells;
      for (std::size_t i = 0; i < r.size(); ++i) {
        const bool numeric = i < tb.numeric.size() && tb.numeric[i];
        cells.push_back(r[i].code ? code_cell(r[i].text) : cell{txt(r[i].text), numeric});
      }
      rows.emplace_back(std::move(cells));
    }
    table(w, tb.header, rows, tb.numeric);
    if (tb.omitted) w.element("p", fmt::format("{} more rows in results.json.", tb.omitted), {{"class", "note"}});
  }
  w << "</section>"_html;
}

} // namespace speedlab::reports::html
