// report.html's section for a profiled program (internal to reports/html/).
#pragma once

#include "analysis/program_analysis.hpp"
#include "reports/html/html_writer.hpp"

namespace speedlab::reports::html {

void program_section(writer& w, const analysis::program_analysis& a);

} // namespace speedlab::reports::html
