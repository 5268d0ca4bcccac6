// Small statistics used by analysis: a seeded generator (same answers on every machine),
// the bootstrap interval of a ratio of medians, and weighted least squares for
// cost = fixed + per_unit x size with the parameters' covariance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace speedlab::analysis::stats {

// splitmix64: tiny, fast, and identical everywhere (std:: distributions are not).
class rng {
public:
  explicit rng(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

private:
  std::uint64_t m_state;
};

double median(std::vector<double> v);

struct interval {
  double low = 0, high = 0;
};

// A discrete distribution: sorted distinct values and their cumulative probabilities.
struct discrete_distribution {
  std::vector<double> value, cumulative;
  double cdf(double x) const; // P(X <= x)
};

// The exact bootstrap distribution of the sample median: what infinitely many resamples
// (with replacement, same size) would give, from order-statistic probabilities. Odd n:
// P(median = x_(i)) = B(m-1; n, (i-1)/n) - B(m-1; n, i/n) with m = (n+1)/2 and B the binomial
// CDF; even n: the two middle order statistics' joint law (see docs/analysis.md).
// Atoms below 1e-12 are dropped.
discrete_distribution median_bootstrap_distribution(std::vector<double> samples);

// Quantiles q_low, q_high of B / V for independent B ~ b, V ~ v (values > 0).
interval ratio_quantiles(const discrete_distribution& b, const discrete_distribution& v, double q_low, double q_high);

// 95% percentile interval of median(baseline) / median(variant) under the two-sample
// bootstrap, computed exactly (no resampling noise, the same answer everywhere).
interval bootstrap_ratio_ci(const std::vector<double>& baseline, const std::vector<double>& variant);

// The same by Monte Carlo resampling with a seed (kept to check the exact one in tests).
interval bootstrap_ratio_ci_resampled(const std::vector<double>& baseline, const std::vector<double>& variant,
                                      std::size_t resamples, std::uint64_t seed);

struct linear_fit {
  double a = 0, b = 0;            // y = a + b x
  double var_a = 0, var_b = 0, cov_ab = 0;
  double r2 = 0;
  std::size_t n = 0;
  bool ok = false;
  double at(double x) const { return a + b * x; }
};

// Weighted least squares with weights 1/sigma^2. The covariance is (X'WX)^-1, scaled by
// the reduced chi-square when that exceeds 1 (the model fits worse than the noise says).
linear_fit weighted_fit(const std::vector<double>& x, const std::vector<double>& y,
                        const std::vector<double>& sigma);

} // namespace speedlab::analysis::stats
