// The analysis entry point: from the measured points (and, lazily, their device traces)
// and the device model to roofline placements, rule findings, speedups with verdicts,
// cost-model fits, crossover sizes and what-if bounds. Deterministic: the same inputs give
// the same output on every machine (exact bootstrap, ordered containers).
//
//   auto result = speedlab::analysis::analyze(points, device_model,
//       [&](const speedlab::point_result& p) { return load_trace_file(dir / p.trace_file); });
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"
#include "model/trace.hpp"

namespace speedlab::analysis {

// Loads the device trace of a point; nullopt when it has none. Called at most once per
// point, and the trace is dropped before the next one is loaded.
using trace_loader = std::function<std::optional<trace::device_trace>(const point_result&)>;

struct analysis_options {
  // Speedup intervals: the exact bootstrap of the ratio of medians (no resampling, so no
  // seed and no Monte Carlo noise) when both points have at least this many samples...
  std::size_t bootstrap_min_samples = 5;
  // ...and at most this many (beyond it the medians' order-statistic intervals are as good).
  std::size_t bootstrap_max_samples = 2000;
  double same_band = 0.03;               // ratio CI inside [1/1.03, 1.03]: "same"
  std::set<std::string> disabled_rules;  // by name
  double gap_min_ns = 100e3;             // GPU idle shorter than this is no gap (activity.hpp)
  // Also summarize each point's trace as a recorded run (its activity: start-up, gaps,
  // allocations, ...; activity.hpp) for the rules that need it. For traces recorded over a
  // program's run; a suite's traces leave it off, their gaps between repetitions are the
  // harness's own.
  bool activity_from_traces = false;
  bool fits = true, crossovers = true, what_ifs = true, roofline = true;
};

analysis_result analyze(const std::vector<point_result>& points, const device_model& device,
                        const trace_loader& load_trace);
analysis_result analyze(const std::vector<point_result>& points, const device_model& device,
                        const trace_loader& load_trace, const analysis_options& options);

} // namespace speedlab::analysis
