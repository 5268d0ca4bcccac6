// Table building for report.html (internal to reports/html/): cells hold escaped text, code
// spans or numbers; rows may carry a class ("bad", "expected").
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/html/html_writer.hpp"

namespace speedlab::reports::html {

// Table cells: escaped text, code spans, numbers.
inline markup txt(std::string_view s) { return markup{html_escape(s)}; }
inline markup code(std::string_view s) { return markup{"<code>" + html_escape(s) + "</code>"}; }

struct cell {
  markup content;
  bool numeric = false;
};
inline cell num_cell(std::string s) { return {txt(s), true}; }
inline cell text_cell(std::string_view s) { return {txt(s), false}; }
inline cell code_cell(std::string_view s) { return {code(s), false}; }
// Parameters other than the size; "—" when there are none.
inline cell params_cell(std::string_view s) { return s.empty() ? text_cell("—") : code_cell(s); }

struct row {
  row(std::vector<cell> c, std::string k = {}) : cells(std::move(c)), cls(std::move(k)) {}
  std::vector<cell> cells;
  std::string cls; // "bad", "expected"
};

inline void table(writer& w, const std::vector<std::string>& header, const std::vector<row>& rows,
                  const std::vector<bool>& numeric = {}) {
  w << "<div class=\"scroll\"><table><thead><tr>"_html;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i < numeric.size() && numeric[i]) w.element("th", header[i], {{"class", "num"}});
    else w.element("th", header[i]);
  }
  w << "</tr></thead><tbody>"_html;
  for (const auto& r : rows) {
    if (r.cls.empty()) w << "<tr>"_html;
    else w.open("tr", {{"class", r.cls}});
    for (const auto& c : r.cells) w << (c.numeric ? "<td class=\"num\">"_html : "<td>"_html) << c.content << "</td>"_html;
    w << "</tr>"_html;
  }
  w << "</tbody></table></div>"_html;
}

} // namespace speedlab::reports::html
