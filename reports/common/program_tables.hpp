// The tables of a profiled program's section (analysis/program_analysis.hpp) as the report
// model's text cells (reports/report_content.hpp), so report.md and report.html show the same
// rows and each format only escapes and lays them out: the program's facts, its time split,
// ranks, processes, kernels, NVTX ranges, streams and GPU idle gaps. The terminal summary of
// `speedlab profile` prints some of them too.
#pragma once

#include <string>
#include <vector>

#include "analysis/program_analysis.hpp"
#include "reports/report_content.hpp"

namespace speedlab::reports {

// Tables longer than max_rows keep their first max_rows (the longest by time); the ranks'
// table carries the job's rank timeline (report_table::rank_timeline).
std::vector<report_table> program_tables(const analysis::program_analysis& a, std::size_t max_rows = 30);

// "python3 train.py --epochs 3": argv joined with spaces, arguments with spaces quoted.
std::string command_text(const std::vector<std::string>& argv);

} // namespace speedlab::reports
