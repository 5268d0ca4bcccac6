// report.md's section for a profiled program (internal to reports/markdown/).
#pragma once

#include <string>

#include "analysis/program_analysis.hpp"

namespace speedlab::reports {

std::string markdown_program_section(const analysis::program_analysis& a);

} // namespace speedlab::reports
