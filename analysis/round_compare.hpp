// The ratio NEW / BASE of one point from its rounds (model/results.hpp: separate processes
// spread over each run), so that what changes from one process to the next is inside the
// interval, not only the noise within one process. Each round contributes one number, the
// log of its median; the two sides' round means are compared with Welch's t (unequal
// variances, degrees of freedom from the number of rounds, as Kalibera and Jones do for the
// top level of a repeated experiment). The confidence level is the caller's: `speedlab
// compare` passes 1 - 2 alpha / m for m points (Bonferroni, each end of the interval at
// alpha / m), so a family of points is held to alpha as a whole for "slower".
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "model/results.hpp"

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

// Paired rounds (`speedlab compare --base-plugins A --new-plugins B`: round k of a point
// measured on both sides back to back, in alternating order): the medians of the rounds that
// have samples on both sides, as (base, new), in round order. Rounds are matched by their
// index (point_result::sample_rounds), never by position, so a side that lost a round to a
// failure or a stop pairs the rest correctly.
std::vector<std::pair<double, double>> paired_round_medians(const point_result& base, const point_result& next);

// The paired interval: one number per round, d_k = log(new_k / base_k), judged by Yuen's
// trimmed t (Yuen 1974; Wilcox, "Introduction to Robust Estimation and Hypothesis Testing"):
// the g = floor(0.1 n) smallest and largest d's are left out of the mean (the ratio is
// exp(trimmed mean)) and winsorized for its standard error, sqrt((n - 1) s_w^2 / (h (h - 1)))
// with h = n - 2g kept, on h - 1 degrees of freedom; with fewer than 10 rounds g = 0, the plain
// paired t. Drift that moves both sides of a round alike (load, frequency) cancels in d_k;
// the trimming keeps one round in which one side stalled (measured on this machine: a round at
// x3 among ten within 5%) from widening the interval of all the others, which a plain t cannot.
// 10% rather than the usual 20%: replayed on measured rounds it found more and alarmed no more
// (docs/reports.md, "The gate, interleaved"). ok is false with fewer than 2 pairs or a median
// <= 0. A rank test (Wilcoxon signed-rank) cannot reach a Bonferroni level over 8 points with
// fewer than 9 pairs (its smallest two-sided p is 2 / 2^n).
inline constexpr double paired_trim_fraction = 0.1;
// The rounds left out at each end of n: floor(paired_trim_fraction * n).
std::size_t paired_trim_count(std::size_t rounds);
round_interval paired_ratio_interval(const std::vector<std::pair<double, double>>& pairs, double confidence);

// The two-sided quantile t such that P(|T| <= t) = confidence for Student's t with df
// degrees of freedom.
double student_t_two_sided(double confidence, double df);

} // namespace speedlab::analysis
