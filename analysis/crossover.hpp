// Across sizes: for every workload/variant swept over a size parameter, fit
//   cost(size) = fixed + per_unit x size
// (weighted least squares, weights 1/sigma^2 from each median's interval with a 1% floor)
// on the total time and, where time splits exist, on kernels, transfers and the time
// without transfers; then locate the size where each variant starts to beat the serial
// and the threads baselines, with and without transfers.
//
// Crossover method: among the sizes both series measured, find where the sign of the
// measured difference changes (largest such change); place the crossover inside that
// bracket where the fits cross, else by linear interpolation of the measured difference.
// The interval is where the fitted difference is within 1.96 standard errors of zero
// (Fieller), clipped to the bracket. Without a sign change the fits are extrapolated and
// the result is flagged, with a note saying no crossover exists in the swept range.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/analysis_stats.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

struct sweep_analysis {
  std::vector<cost_fit> fits;
  std::vector<crossover> crossovers;
};

sweep_analysis analyze_sweeps(const std::vector<point_result>& points);

// One cost curve: sizes, costs (ns) and their standard errors, with its fit.
struct cost_curve {
  std::vector<double> size, cost, sigma;
  stats::linear_fit fit;
  void refit() { fit = stats::weighted_fit(size, cost, sigma); }
};

// Locates where `variant` starts to beat `baseline`; fills size, interval, flags, method
// and note of `out` (its names are left as given).
void locate_crossover(const cost_curve& variant, const cost_curve& baseline, crossover& out);

// The sizes s where (fit_v - fit_b)(s) is within z standard errors of 0: [low, high], or
// nullopt when that set is unbounded or empty.
std::optional<stats::interval> fieller_interval(const stats::linear_fit& v, const stats::linear_fit& b, double z = 1.96);

} // namespace speedlab::analysis
