// The "Python lines" section of a run's report.md and report.html: for each point whose
// Python worker was traced (app/python/python_variants.cpp), the lines of the variant's code
// behind its CUDA calls, as the report model's section (report_content.hpp), which each
// format renders and escapes as it renders a profiled program's tables (file names and source
// text come from the program). The profiled program's own table is program_tables.cpp's;
// both describe a line's copies the same way (copied_text).
#pragma once

#include <string>
#include <vector>

#include "model/python_lines.hpp"
#include "model/results.hpp"
#include "reports/report_content.hpp"

namespace speedlab::reports {

// One section when a point has a python_lines section (the `lines_per_point` most costly lines
// of each), none otherwise.
std::vector<report_section> python_point_sections(const std::vector<point_result>& points,
                                                  std::size_t lines_per_point = 5);

// "1.0 MiB H2D, 4.0 KiB D2H (1.0 MiB pageable) in 3", "—" without copies.
std::string copied_text(const pylines::python_line& l);

} // namespace speedlab::reports
