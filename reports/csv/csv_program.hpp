// The CSV files of a profiled program (internal to reports/csv/): program_processes.csv,
// program_kernels.csv, program_ranges.csv, program_streams.csv (RFC 4180, exact numbers).
#pragma once

#include <filesystem>
#include <vector>

#include "analysis/program_analysis.hpp"

namespace speedlab::reports {

std::vector<std::filesystem::path> write_program_csv(const analysis::program_analysis& a, const std::filesystem::path& dir);

} // namespace speedlab::reports
