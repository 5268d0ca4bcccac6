// The tables of a profiled program's section (analysis/program_analysis.hpp) as plain text
// cells, so report.md and report.html show the same rows and each format only escapes and
// lays them out: the program's facts, its time split, processes, kernels, NVTX ranges,
// streams and GPU idle gaps.
#pragma once

#include <string>
#include <vector>

#include "analysis/program_analysis.hpp"

namespace speedlab::reports {

struct program_cell {
  std::string text;  // untrusted: each format escapes it
  bool code = false; // an identifier (kernel name, command line): shown as code
};

struct program_table {
  std::string id, title, intro;   // id: an anchor ("program-kernels")
  std::vector<std::string> header;
  std::vector<bool> numeric;      // per column
  std::vector<std::vector<program_cell>> rows;
  std::string empty_note;         // shown instead of an empty table
  std::size_t omitted = 0;        // rows left out beyond the table's limit
};

// Tables longer than max_rows keep their first max_rows (the longest by time).
std::vector<program_table> program_tables(const analysis::program_analysis& a, std::size_t max_rows = 30);

// "python3 train.py --epochs 3": argv joined with spaces, arguments with spaces quoted.
std::string command_text(const std::vector<std::string>& argv);

} // namespace speedlab::reports
