#include "analysis/analysis_stats.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace speedlab::analysis::stats {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double m = v[static_cast<std::size_t>(mid)];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + mid)) / 2;
  return m;
}

namespace {
double resampled_median(const std::vector<double>& v, std::vector<double>& buf, rng& r) {
  buf.resize(v.size());
  for (auto& x : buf) x = v[r.below(v.size())];
  return median(buf);
}
} // namespace

interval bootstrap_ratio_ci_resampled(const std::vector<double>& base, const std::vector<double>& var,
                                      std::size_t resamples, std::uint64_t seed) {
  interval out;
  if (base.empty() || var.empty() || resamples == 0) return out;
  rng r(seed);
  std::vector<double> ratios, buf;
  ratios.reserve(resamples);
  for (std::size_t i = 0; i < resamples; ++i) {
    const double b = resampled_median(base, buf, r);
    const double v = resampled_median(var, buf, r);
    if (v > 0) ratios.push_back(b / v);
  }
  if (ratios.empty()) return out;
  std::sort(ratios.begin(), ratios.end());
  auto pick = [&](double q) {
    const double pos = q * static_cast<double>(ratios.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, ratios.size() - 1);
    return ratios[lo] + (pos - static_cast<double>(lo)) * (ratios[hi] - ratios[lo]);
  };
  out.low = pick(0.025);
  out.high = pick(0.975);
  return out;
}

double discrete_distribution::cdf(double x) const {
  const auto it = std::upper_bound(value.begin(), value.end(), x);
  return it == value.begin() ? 0.0 : cumulative[static_cast<std::size_t>(it - value.begin()) - 1];
}

namespace {

// P(Binomial(n, p) <= k).
double binomial_cdf(int k, int n, double p) {
  if (k < 0) return 0;
  if (k >= n || p <= 0) return 1;
  if (p >= 1) return 0;
  const double lp = std::log(p), lq = std::log1p(-p), lg = std::lgamma(n + 1.0);
  double sum = 0;
  for (int t = 0; t <= k; ++t) sum += std::exp(lg - std::lgamma(t + 1.0) - std::lgamma(n - t + 1.0) + t * lp + (n - t) * lq);
  return std::min(1.0, sum);
}

discrete_distribution from_atoms(std::vector<std::pair<double, double>> atoms) {
  std::sort(atoms.begin(), atoms.end());
  discrete_distribution d;
  double total = 0;
  for (const auto& [v, p] : atoms) total += p;
  double cum = 0;
  for (const auto& [v, p] : atoms) {
    cum += p / total;
    if (!d.value.empty() && d.value.back() == v) d.cumulative.back() = cum;
    else {
      d.value.push_back(v);
      d.cumulative.push_back(cum);
    }
  }
  if (!d.cumulative.empty()) d.cumulative.back() = 1.0;
  return d;
}

} // namespace

discrete_distribution median_bootstrap_distribution(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const int n = static_cast<int>(x.size());
  std::vector<std::pair<double, double>> atoms;
  if (n == 0) return {};
  constexpr double eps = 1e-12;
  const double dn = n;
  // P(X_(m) = x_i) for the m-th order statistic of a resample.
  auto order_stat = [&](int m, int i) { return binomial_cdf(m - 1, n, (i - 1) / dn) - binomial_cdf(m - 1, n, i / dn); };
  if (n % 2 == 1) {
    const int m = (n + 1) / 2;
    for (int i = 1; i <= n; ++i)
      if (const double p = order_stat(m, i); p > eps) atoms.emplace_back(x[i - 1], p);
    return from_atoms(std::move(atoms));
  }
  // Even n: median = (X_(m) + X_(m+1)) / 2 with m = n/2. For i < j,
  // P(X_(m) = x_i, X_(m+1) = x_j) = C(n,m) [(i/n)^m - ((i-1)/n)^m] [((n-j+1)/n)^(n-m) - ((n-j)/n)^(n-m)];
  // for i = j it is P(X_(m) = x_i) minus the sum over j > i, which telescopes.
  const int m = n / 2, r = n - m;
  const double log_c = std::lgamma(dn + 1) - std::lgamma(m + 1.0) - std::lgamma(r + 1.0);
  std::vector<double> A(n + 1, 0), B(n + 1, 0);
  std::vector<int> ai, bj;
  for (int i = 1; i <= n; ++i) {
    A[i] = std::pow(i / dn, m) - std::pow((i - 1) / dn, m);
    B[i] = std::pow((n - i + 1) / dn, r) - std::pow((n - i) / dn, r);
  }
  const double C = std::exp(log_c);
  for (int i = 1; i <= n; ++i) {
    if (C * A[i] > eps) ai.push_back(i);
    if (C * B[i] > eps) bj.push_back(i);
  }
  for (int i = 1; i <= n; ++i) {
    const double same = order_stat(m, i) - C * A[i] * std::pow((n - i) / dn, r);
    if (same > eps) atoms.emplace_back(x[i - 1], same);
  }
  for (int i : ai)
    for (int j : bj)
      if (j > i)
        if (const double p = C * A[i] * B[j]; p > eps) atoms.emplace_back((x[i - 1] + x[j - 1]) / 2, p);
  return from_atoms(std::move(atoms));
}

interval ratio_quantiles(const discrete_distribution& b, const discrete_distribution& v, double q_low, double q_high) {
  interval out;
  if (b.value.empty() || v.value.empty() || !(v.value.front() > 0)) return out;
  // P(B / V <= r) = sum_k P(V = v_k) P(B <= r v_k); the smallest r reaching q, by bisection
  // in log space (the CDF is a step function, so the result is a ratio b_i / v_k).
  // v's values ascend, so the points ratio x v_k where b's CDF is read ascend too: one merge
  // pass over both (O(|b| + |v|)) instead of a binary search per atom of v.
  auto cdf = [&](double ratio) {
    double s = 0, prev = 0;
    std::size_t j = 0; // atoms of b at or below the current point
    for (std::size_t k = 0; k < v.value.size(); ++k) {
      const double x = ratio * v.value[k];
      while (j < b.value.size() && b.value[j] <= x) ++j;
      s += (v.cumulative[k] - prev) * (j == 0 ? 0.0 : b.cumulative[j - 1]);
      prev = v.cumulative[k];
    }
    return s;
  };
  const double lo0 = b.value.front() / v.value.back(), hi0 = b.value.back() / v.value.front();
  auto quantile = [&](double q) {
    double lo = std::log(std::max(lo0, 1e-300)) - 1e-9, hi = std::log(std::max(hi0, 1e-300)) + 1e-9;
    for (int it = 0; it < 64 && hi - lo > 1e-12; ++it) {
      const double mid = (lo + hi) / 2;
      if (cdf(std::exp(mid)) >= q) hi = mid;
      else lo = mid;
    }
    return std::exp(hi);
  };
  out.low = quantile(q_low);
  out.high = quantile(q_high);
  return out;
}

interval bootstrap_ratio_ci(const std::vector<double>& base, const std::vector<double>& var) {
  return ratio_quantiles(median_bootstrap_distribution(base), median_bootstrap_distribution(var), 0.025, 0.975);
}

linear_fit weighted_fit(const std::vector<double>& x, const std::vector<double>& y,
                        const std::vector<double>& sigma) {
  linear_fit f;
  f.n = std::min({x.size(), y.size(), sigma.size()});
  if (f.n < 2) return f;
  auto weight = [&](std::size_t i) { return sigma[i] > 0 ? 1 / (sigma[i] * sigma[i]) : 0.0; };
  // Two passes around the weighted means: sizes span many decades, sums of x^2 would cancel.
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < f.n; ++i) {
    sw += weight(i);
    sx += weight(i) * x[i];
    sy += weight(i) * y[i];
  }
  if (!(sw > 0)) return f;
  const double xbar = sx / sw, ybar = sy / sw;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < f.n; ++i) {
    const double dx = x[i] - xbar, dy = y[i] - ybar;
    sxx += weight(i) * dx * dx;
    sxy += weight(i) * dx * dy;
    syy += weight(i) * dy * dy;
  }
  if (!(sxx > 0)) return f; // one distinct size: no slope
  f.b = sxy / sxx;
  f.a = ybar - f.b * xbar;
  double chi2 = 0;
  for (std::size_t i = 0; i < f.n; ++i) {
    const double r = y[i] - f.at(x[i]);
    chi2 += weight(i) * r * r;
  }
  const double scale = f.n > 2 ? std::max(1.0, chi2 / static_cast<double>(f.n - 2)) : 1.0;
  f.var_b = scale / sxx;
  f.var_a = scale * (1 / sw + xbar * xbar / sxx);
  f.cov_ab = -scale * xbar / sxx;
  f.r2 = syy > 0 ? 1 - chi2 / syy : 1;
  f.ok = std::isfinite(f.a) && std::isfinite(f.b);
  return f;
}

} // namespace speedlab::analysis::stats
