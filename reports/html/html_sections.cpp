#include "reports/html/html_sections.hpp"

#include <fmt/format.h>

#include "analysis/rank_analysis.hpp"
#include "reports/html/html_table.hpp"
#include "reports/html/svg_charts.hpp"

namespace speedlab::reports::html {
namespace {

void content_table(writer& w, const report_table& tb, bool heading) {
  w.element(heading ? "h2" : "h3", tb.title, {{"id", tb.id}});
  if (!tb.intro.empty()) w.element("p", tb.intro);
  if (tb.rank_timeline) {
    w << "<figure class=\"rank-timeline\">"_html;
    rank_timeline_chart(w, *tb.rank_timeline);
    w << "</figure>"_html;
  }
  if (tb.critical_path) {
    w << "<figure class=\"critical-path\">"_html;
    critical_path_chart(w, *tb.critical_path);
    w << "</figure>"_html;
  }
  if (tb.python_flame) {
    w << "<figure class=\"python-flame\">"_html;
    python_flame_chart(w, *tb.python_flame);
    w << "</figure>"_html;
  }
  if (tb.rows.empty()) {
    w.element("p", tb.empty_note, {{"class", "note"}});
    return;
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

} // namespace

void content_sections(writer& w, const std::vector<report_section>& sections) {
  for (const auto& s : sections) {
    w.open("section", {{"id", s.id}});
    for (std::size_t i = 0; i < s.tables.size(); ++i) content_table(w, s.tables[i], i == 0);
    w.close("section");
  }
}

} // namespace speedlab::reports::html
