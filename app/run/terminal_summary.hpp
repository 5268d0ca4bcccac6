// The table printed at the end of `speedlab run`: per workload, variant x size with the
// median time, throughput and speedup over serial (with its verdict).
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"

namespace speedlab::app {

std::string terminal_summary(const std::vector<point_result>& points, const analysis::analysis_result& analysis);

} // namespace speedlab::app
