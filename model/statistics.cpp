#include "model/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace speedlab::stats {

double quantile(std::vector<double> v, double q) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  return quantile_sorted(v, q);
}

double quantile_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

summary_stats summarize(const std::vector<double>& samples) {
  summary_stats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  const auto n = static_cast<double>(v.size());
  s.min = v.front();
  s.max = v.back();
  s.median = quantile(v, 0.5);
  s.q1 = quantile(v, 0.25);
  s.q3 = quantile(v, 0.75);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  // Ranks j < k with P(x_(j) <= median <= x_(k)) ~ 95% (normal approximation to the
  // binomial). Too few samples for that: the range is the honest interval.
  const double half_width = 1.96 * std::sqrt(n) / 2;
  const long j = static_cast<long>(std::floor(n / 2 - half_width));     // 1-based rank
  const long k = static_cast<long>(std::ceil(n / 2 + 1 + half_width));  // 1-based rank
  if (j < 1 || k > static_cast<long>(v.size())) {
    s.ci_low = s.min;
    s.ci_high = s.max;
  } else {
    s.ci_low = v[static_cast<std::size_t>(j - 1)];
    s.ci_high = v[static_cast<std::size_t>(k - 1)];
  }
  return s;
}

} // namespace speedlab::stats
