// The rows of the "Source lines" section of report.md and report.html, as plain text
// (each format escapes them: file names and source text come from the program).
#pragma once

#include <string>
#include <vector>

#include "model/results.hpp"

namespace speedlab::reports {

struct source_row {
  std::string point, kernel; // kernel demangled, with its share of the pass's samples
  std::string line;          // "softmax.cu:25" or "+0x1a0"
  std::string share;         // of the kernel's samples
  std::string stalls;        // "waiting on global memory 61%, ..."
  std::string sectors;       // sectors per request, "—" without SASS metrics
  std::string text;          // the line's source, "" when not readable
};

// Kernels that matter (analysis/source_lines: by share of samples), their top lines (at most
// `lines_per_kernel` each), for every point with a source pass.
std::vector<source_row> source_rows(const std::vector<point_result>& points, std::size_t lines_per_kernel = 3);

// One sentence on what the table is and how it was measured, for the section's head.
inline constexpr const char* source_table_intro =
    "Where each kernel's time goes by source line (the source pass: CUPTI PC sampling in a process of its own, one "
    "repetition): share of the kernel's warp samples, the dominant stall reasons, global sectors per request when "
    "SASS metrics were read. Kernels below 5% of the samples are left out; docs/analysis.md says how to read it.";

} // namespace speedlab::reports
