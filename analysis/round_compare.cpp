#include "analysis/round_compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
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

// The interval and two-sided p of a log-ratio estimate with standard error `se` on `df`
// degrees of freedom (out.df set); se 0: every round moved by exactly the same factor, so
// the interval is the point and any difference is exact.
void finish_t_interval(round_interval& out, double estimate, double se, double confidence) {
  out.ratio = std::exp(estimate);
  out.ok = true;
  if (se == 0) {
    out.ci_low = out.ci_high = out.ratio;
    out.p_value = estimate == 0 ? 1 : 0;
    return;
  }
  const double t = student_t_two_sided(confidence, out.df);
  out.ci_low = std::exp(estimate - t * se);
  out.ci_high = std::exp(estimate + t * se);
  const boost::math::students_t dist(out.df);
  out.p_value = 2 * boost::math::cdf(boost::math::complement(dist, std::abs(estimate) / se));
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
  // Welch-Satterthwaite; with no spread at all on either side the pooled count is used.
  out.df = vb + vn > 0 ? (vb + vn) * (vb + vn) /
                             (vb * vb / static_cast<double>(b.n - 1) + vn * vn / static_cast<double>(n.n - 1))
                       : static_cast<double>(b.n + n.n - 2);
  finish_t_interval(out, n.mean - b.mean, se, confidence);
  return out;
}

std::vector<std::pair<double, double>> paired_round_medians(const point_result& base, const point_result& next) {
  const auto by_index = [](const point_result& p) {
    std::map<int, std::vector<double>> by;
    if (p.sample_rounds.size() != p.samples_ns.size()) return by; // not measured in rounds
    for (std::size_t i = 0; i < p.samples_ns.size(); ++i) by[p.sample_rounds[i]].push_back(p.samples_ns[i]);
    return by;
  };
  const auto b = by_index(base), n = by_index(next);
  std::vector<std::pair<double, double>> out;
  for (const auto& [round, samples] : b)
    if (auto it = n.find(round); it != n.end()) out.emplace_back(stats::median(samples), stats::median(it->second));
  return out;
}

std::size_t paired_trim_count(std::size_t rounds) {
  return static_cast<std::size_t>(paired_trim_fraction * static_cast<double>(rounds));
}

round_interval paired_ratio_interval(const std::vector<std::pair<double, double>>& pairs, double confidence) {
  round_interval out;
  const auto usable = [](double x) { return x > 0 && std::isfinite(x); };
  if (pairs.size() < 2 || !(confidence > 0 && confidence < 1)) return out;
  std::vector<double> d;
  for (const auto& [b, n] : pairs) {
    if (!usable(b) || !usable(n)) return out;
    d.push_back(std::log(n) - std::log(b));
  }
  // Yuen's trimmed t: the g smallest and g largest d's are left out of the mean and winsorized
  // (set to the nearest kept one) for the spread.
  std::sort(d.begin(), d.end());
  const std::size_t n = d.size(), g = paired_trim_count(n), kept = n - 2 * g;
  const double mean =
      std::accumulate(d.begin() + static_cast<std::ptrdiff_t>(g), d.end() - static_cast<std::ptrdiff_t>(g), 0.0) /
      static_cast<double>(kept);
  double wmean = 0;
  for (std::size_t i = 0; i < n; ++i) wmean += d[std::clamp(i, g, n - 1 - g)];
  wmean /= static_cast<double>(n);
  double wvariance = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = d[std::clamp(i, g, n - 1 - g)] - wmean;
    wvariance += x * x;
  }
  wvariance /= static_cast<double>(n - 1);
  const double se =
      std::sqrt(static_cast<double>(n - 1) * wvariance / (static_cast<double>(kept) * static_cast<double>(kept - 1)));
  out.df = static_cast<double>(kept - 1);
  finish_t_interval(out, mean, se, confidence);
  return out;
}

} // namespace speedlab::analysis
