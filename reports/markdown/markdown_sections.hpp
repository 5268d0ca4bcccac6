// report.md's rendering of the report model's sections (reports/report_content.hpp; internal
// to reports/markdown/): each section's first table under "##", the others under "###".
#pragma once

#include <string>
#include <vector>

#include "reports/report_content.hpp"

namespace speedlab::reports {

void markdown_sections(std::string& out, const std::vector<report_section>& sections);

} // namespace speedlab::reports
