// Robust summary statistics of repeated measurements.
#pragma once

#include <vector>

#include "model/results.hpp"

namespace speedlab::stats {

// Quantile by linear interpolation between order statistics (Hyndman-Fan type 7).
double quantile(std::vector<double> values, double q);
// The same for values already in ascending order (no copy).
double quantile_sorted(const std::vector<double>& sorted_values, double q);

// Median, mean, standard deviation, extremes, quartiles and a distribution-free 95%
// confidence interval of the median from order statistics (binomial ranks).
summary_stats summarize(const std::vector<double>& samples);

} // namespace speedlab::stats
