#include "analysis/round_compare.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/math/distributions/students_t.hpp>

#include "analysis/analysis_stats.hpp"

namespace speedlab::analysis {

namespace {

struct moments {
  double mean = 0, variance = 0; // sample variance (n - 1)
  std::size_t n = 0;
};

moments log_moments(const std::vector<double>& medians) {
  moments m;
  m.n = medians.size();
  for (double x : medians) m.mean += std::log(x);
  m.mean /= static_cast<double>(m.n);
  for (double x : medians) m.variance += (std::log(x) - m.mean) * (std::log(x) - m.mean);
  m.variance /= static_cast<double>(m.n - 1);
  return m;
}

} // namespace

std::vector<double> round_medians(const std::vector<std::vector<double>>& rounds) {
  std::vector<double> out;
  for (const auto& r : rounds)
    if (!r.empty()) out.push_back(stats::median(r));
  return out;
}

double student_t_two_sided(double confidence, double df) {
  const boost::math::students_t dist(df);
  return boost::math::quantile(dist, 0.5 + confidence / 2);
}

round_interval round_ratio_interval(const std::vector<double>& base, const std::vector<double>& next,
                                    double confidence) {
  round_interval out;
  const auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0 && std::isfinite(x); });
  };
  if (base.size() < 2 || next.size() < 2 || !positive(base) || !positive(next)) return out;
  if (!(confidence > 0 && confidence < 1)) return out;
  const moments b = log_moments(base), n = log_moments(next);
  const double vb = b.variance / static_cast<double>(b.n), vn = n.variance / static_cast<double>(n.n);
  const double se = std::sqrt(vb + vn);
  const double diff = n.mean - b.mean;
  out.ratio = std::exp(diff);
  // Welch-Satterthwaite; with no spread at all on either side the pooled count is used.
  out.df = vb + vn > 0 ? (vb + vn) * (vb + vn) /
                             (vb * vb / static_cast<double>(b.n - 1) + vn * vn / static_cast<double>(n.n - 1))
                       : static_cast<double>(b.n + n.n - 2);
  if (se == 0) { // identical rounds: the interval is the point (any difference is exact)
    out.ci_low = out.ci_high = out.ratio;
    out.p_value = diff == 0 ? 1 : 0;
    out.ok = true;
    return out;
  }
  const double t = student_t_two_sided(confidence, out.df);
  out.ci_low = std::exp(diff - t * se);
  out.ci_high = std::exp(diff + t * se);
  const boost::math::students_t dist(out.df);
  out.p_value = 2 * boost::math::cdf(boost::math::complement(dist, std::abs(diff) / se));
  out.ok = true;
  return out;
}

} // namespace speedlab::analysis
