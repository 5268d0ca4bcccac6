// Cross-checks a variant's own timings (run_context::report_timing, e.g. cudaEvents around
// its kernel) against what the profiler measured in the same repetitions, so a reader can
// trust (or question) the profiler's figures with the method they already use.
//   "kernel" -> the repetition's kernel time (time split), "h2d" / "d2h" -> its copy time.
// The difference is (profiler - own) / own per repetition; its median decides the verdict.
#pragma once

#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

inline constexpr double timing_agreement_tolerance = 0.05; // the 5% a reader can expect

std::vector<timing_check> timing_checks(const std::vector<point_result>& points);

} // namespace speedlab::analysis
