// report.html's rendering of the report model's sections (reports/report_content.hpp;
// internal to reports/html/): one <section> each, its first table under <h2>, the others
// under <h3>, a table's chart above its rows.
#pragma once

#include <vector>

#include "reports/html/html_writer.hpp"
#include "reports/report_content.hpp"

namespace speedlab::reports::html {

void content_sections(writer& w, const std::vector<report_section>& sections);

} // namespace speedlab::reports::html
