// The ratio NEW / BASE of one point from its rounds (model/results.hpp: separate processes
// spread over each run), so that what changes from one process to the next is inside the
// interval, not only the noise within one process. Each round contributes one number, the
// log of its median; the two sides' round means are compared with Welch's t (unequal
// variances, degrees of freedom from the number of rounds, as Kalibera and Jones do for the
// top level of a repeated experiment). The confidence level is the caller's: `speedlab
// compare` passes 1 - 2 alpha / m for m points (Bonferroni, each end of the interval at
// alpha / m), so a family of points is held to alpha as a whole for "slower".
#pragma once

#include <vector>

namespace speedlab::analysis {

struct round_interval {
  bool ok = false;              // false: fewer than 2 rounds on a side, or a median <= 0
  double ratio = 0;             // exp(mean log new round median - mean log base round median)
  double ci_low = 0, ci_high = 0;
  double p_value = 1;           // two-sided, H0: no change
  double df = 0;                // Welch-Satterthwaite degrees of freedom
};

// The median of each group (each round's samples); groups without samples are left out.
std::vector<double> round_medians(const std::vector<std::vector<double>>& rounds);

// `confidence` in (0, 1), e.g. 0.95, or 1 - 0.05 / m for a family of m points.
round_interval round_ratio_interval(const std::vector<double>& base_round_medians,
                                    const std::vector<double>& new_round_medians, double confidence);

// The two-sided quantile t such that P(|T| <= t) = confidence for Student's t with df
// degrees of freedom.
double student_t_two_sided(double confidence, double df);

} // namespace speedlab::analysis
