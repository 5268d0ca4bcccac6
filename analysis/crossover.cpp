#include "analysis/crossover.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "analysis/comparisons.hpp"
#include "analysis/text.hpp"

namespace speedlab::analysis {

namespace {

constexpr double relative_floor = 0.01; // sigma never below 1% of the cost (model error)

bool same_size(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

std::string size_text(double s) { return text::number(s); } // never "6.554e+04"

struct series {
  std::string workload, variant, size_param, params_key, base_key;
  std::optional<variant_kind> kind;
  int threads = 1;
  bool python = false; // a Python variant's: its baselines are Python series (comparisons.hpp)
  std::vector<std::pair<double, const point_result*>> points; // (size along the axis, point), sorted by size
};

// The axes a point is analysed along: each size axis with the other parameters fixed and,
// with several, their product ("rows*cols") with only the non-size parameters fixed.
struct axis_view {
  std::string name;               // the size_param of fits and crossovers
  std::vector<std::string> fixed; // parameters left out of the series key
  double size = 0;
};

std::vector<axis_view> axes_of(const point_result& p) {
  const auto axes = p.size_params();
  std::vector<axis_view> out;
  for (const auto& a : axes) out.push_back({a, {a}, std::strtod(p.params.at(a).c_str(), nullptr)});
  if (axes.size() > 1) {
    std::string product;
    for (const auto& a : axes) product += (product.empty() ? "" : "*") + a;
    out.push_back({product, axes, p.size_product()});
  }
  return out;
}

// What a baseline series must share with the series it is compared to: the workload, the
// axis and every parameter off the axis but the thread count.
std::string base_key_of(const point_result& p, const axis_view& axis) {
  std::vector<std::string> skip = axis.fixed;
  skip.push_back("threads");
  return p.workload + '|' + axis.name + '|' + p.params_key_without(skip);
}

double sigma_of(const point_result& p, double y, double total) {
  const double half = (p.wall.ci_high - p.wall.ci_low) / 2;
  double s = half > 0 ? half / 1.96 : 0;
  if (total > 0) s *= y / total; // parts of the total: the same relative error
  return std::max({s, relative_floor * y, 1.0});
}

enum class basis { total, kernel, transfers, without_transfers };

bool has_basis(const point_result& p, basis b) {
  return b == basis::total || (p.split_median && p.split_median->wall_ns > 0);
}

double value_of(const point_result& p, basis b) {
  if (b == basis::total) return p.wall.median;
  const time_split& s = *p.split_median;
  // The split's parts add up to its wall time; scale them to the wall median so that
  // "without transfers" stays comparable to the baselines' totals.
  const double scale = s.wall_ns > 0 ? p.wall.median / s.wall_ns : 1;
  switch (b) {
  case basis::kernel: return s.kernel * scale;
  case basis::transfers: return (s.h2d + s.d2h) * scale;
  case basis::without_transfers: return (s.wall_ns - s.h2d - s.d2h) * scale;
  default: return p.wall.median;
  }
}

const char* basis_name(basis b) {
  switch (b) {
  case basis::kernel: return "kernel";
  case basis::transfers: return "transfers";
  case basis::without_transfers: return "without_transfers";
  default: return "total";
  }
}

std::optional<cost_curve> curve_of(const series& s, basis b) {
  cost_curve c;
  for (const auto& [size, p] : s.points) {
    if (!has_basis(*p, b)) return std::nullopt; // a basis needs every point
    const double y = value_of(*p, b);
    c.size.push_back(size);
    c.cost.push_back(y);
    c.sigma.push_back(sigma_of(*p, y, b == basis::total ? 0 : p->wall.median));
  }
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < c.size.size(); ++i) distinct += i == 0 || !same_size(c.size[i], c.size[i - 1]);
  // A cost line through two close sizes says nothing about a third: fit only sweeps of at
  // least three sizes spanning a factor of four.
  const auto [smallest, largest] = std::minmax_element(c.size.begin(), c.size.end());
  if (distinct < 3 || *largest < 4 * *smallest) return std::nullopt;
  c.refit();
  return c;
}

cost_fit to_fit(const series& s, const cost_curve& c, basis b) {
  cost_fit f;
  f.workload = s.workload;
  f.variant = s.variant;
  f.size_param = s.size_param;
  f.basis = basis_name(b);
  f.params_key = s.params_key;
  f.fixed_ns = text::finite(c.fit.a);
  f.per_unit_ns = text::finite(c.fit.b);
  f.r2 = text::finite(c.fit.r2);
  f.points = c.size.size();
  f.fixed_se = text::finite(std::sqrt(std::max(0.0, c.fit.var_a)));
  f.per_unit_se = text::finite(std::sqrt(std::max(0.0, c.fit.var_b)));
  f.covariance = text::finite(c.fit.cov_ab);
  f.size_min = c.size.front();
  f.size_max = c.size.back();
  return f;
}

} // namespace

std::optional<stats::interval> fieller_interval(const stats::linear_fit& v, const stats::linear_fit& b, double z) {
  if (!v.ok || !b.ok) return std::nullopt;
  const double da = v.a - b.a, db = v.b - b.b;
  const double va = v.var_a + b.var_a, vb = v.var_b + b.var_b, cab = v.cov_ab + b.cov_ab;
  const double z2 = z * z;
  const double A = db * db - z2 * vb, B = 2 * (da * db - z2 * cab), C = da * da - z2 * va;
  if (!(A > 0)) return std::nullopt; // the slopes are not distinguishable: unbounded
  const double disc = B * B - 4 * A * C;
  if (disc < 0) return std::nullopt;
  const double r = std::sqrt(disc);
  stats::interval out{(-B - r) / (2 * A), (-B + r) / (2 * A)};
  out.low = std::max(out.low, 0.0);
  if (out.high < out.low) return std::nullopt;
  return out;
}

namespace {

// variant - baseline at the sizes both curves have, in size order.
struct differences {
  std::vector<double> size, diff;
};

differences measured_differences(const cost_curve& v, const cost_curve& b) {
  differences m;
  for (std::size_t i = 0; i < v.size.size(); ++i)
    for (std::size_t j = 0; j < b.size.size(); ++j)
      if (same_size(v.size[i], b.size[j]) && (m.size.empty() || !same_size(m.size.back(), v.size[i]))) {
        if (v.cost[i] != b.cost[j]) { // an exact tie carries no sign: bracket across it
          m.size.push_back(v.size[i]);
          m.diff.push_back(v.cost[i] - b.cost[j]);
        }
        break;
      }
  return m;
}

// Where the fitted costs cross, and the Fieller interval of that size.
struct fitted_root {
  bool ok = false;
  double size = 0;
  std::optional<stats::interval> interval;
};

// The measured difference changes sign between two swept sizes (the last such change, at
// index `changes.back()`): the crossover is in that bracket.
void crossover_in_bracket(const differences& m, const std::vector<std::size_t>& changes, const fitted_root& fit,
                          crossover& c) {
  const auto& d = m.diff;
  const std::size_t k = changes.back();
  const double s0 = m.size[k], s1 = m.size[k + 1];
  c.faster_above = d[k] > 0;
  if (fit.ok && fit.size >= s0 && fit.size <= s1) {
    c.size = fit.size;
    c.method = "bracket+fit";
  } else {
    c.size = s0 + (s1 - s0) * d[k] / (d[k] - d[k + 1]); // the cost model is linear in size
    c.method = "bracket-interpolation";
  }
  c.size_low = s0;
  c.size_high = s1;
  if (fit.interval && fit.interval->high >= s0 && fit.interval->low <= s1) {
    c.size_low = std::max(s0, fit.interval->low);
    c.size_high = std::min(s1, fit.interval->high);
    if (*c.size < c.size_low || *c.size > c.size_high) { // keep the estimate inside its interval
      c.size_low = std::min(c.size_low, *c.size);
      c.size_high = std::max(c.size_high, *c.size);
    }
  }
  c.in_range = true;
  c.note = fmt::format("between the measured sizes {} and {}", size_text(s0), size_text(s1));
  if (!c.faster_above) c.note += "; the variant is faster below this size and slower above";
  if (changes.size() > 1)
    c.note += fmt::format("; the measured difference changes sign {} times (noise or a cost that is not "
                          "linear in size): the change at the largest size is reported",
                          changes.size());
}

// No sign change among common sizes [lo, hi]: what the data say, and what the fits predict.
void crossover_from_fits(const differences& m, double lo, double hi, const fitted_root& fit, bool faster_above,
                         crossover& c) {
  const auto& d = m.diff;
  std::string measured;
  if (d.size() >= 2) measured = d.front() < 0 ? "faster at every swept size" : "slower at every swept size";
  else measured = "no common sizes to compare";
  const std::string range = fmt::format("[{}, {}]", size_text(lo), size_text(hi));
  if (!fit.ok || fit.size <= 0) {
    c.note = fmt::format("no crossover in the swept range {}: {}; the fitted costs do not cross at a positive size",
                         range, measured);
    return;
  }
  c.faster_above = faster_above;
  if (fit.size >= lo && fit.size <= hi) {
    if (d.size() >= 2) {
      c.note = fmt::format("no crossover in the swept range {}: {} (the fits cross near {}, but the measurements "
                           "do not change sign)",
                           range, measured, size_text(fit.size));
      return;
    }
    c.size = fit.size; // only the fits to go by
    c.in_range = true;
    c.method = "fit";
  } else {
    c.size = fit.size;
    c.extrapolated = true;
    c.method = "fit-extrapolation";
  }
  if (fit.interval) {
    c.size_low = fit.interval->low;
    c.size_high = fit.interval->high;
  }
  if (c.extrapolated)
    c.note = fmt::format("no crossover in the swept range {}: {}; the fits predict the variant {} about {} "
                         "(extrapolated, not measured){}",
                         range, measured, c.faster_above ? "wins above" : "wins below", size_text(fit.size),
                         fit.interval ? "" : "; interval unbounded (size_low = size_high = 0)");
  else
    c.note = fmt::format("{}; crossover from the fits only{}", measured,
                         fit.interval ? "" : "; interval unbounded (size_low = size_high = 0)");
}

} // namespace

void locate_crossover(const cost_curve& v, const cost_curve& b, crossover& c) {
  c.size.reset();
  c.size_low = c.size_high = 0;
  c.in_range = c.extrapolated = false;
  c.method = "none";
  c.note.clear();

  const differences m = measured_differences(v, b);
  const double lo = m.size.empty() ? std::max(v.size.front(), b.size.front()) : m.size.front();
  const double hi = m.size.empty() ? std::min(v.size.back(), b.size.back()) : m.size.back();
  fitted_root fit;
  fit.ok = v.fit.ok && b.fit.ok && (v.fit.b - b.fit.b) != 0;
  fit.size = fit.ok ? -(v.fit.a - b.fit.a) / (v.fit.b - b.fit.b) : 0;
  fit.interval = fieller_interval(v.fit, b.fit);

  std::vector<std::size_t> changes;
  for (std::size_t i = 0; i + 1 < m.diff.size(); ++i)
    if ((m.diff[i] > 0 && m.diff[i + 1] < 0) || (m.diff[i] < 0 && m.diff[i + 1] > 0)) changes.push_back(i);
  if (!changes.empty()) crossover_in_bracket(m, changes, fit, c);
  else crossover_from_fits(m, lo, hi, fit, v.fit.b < b.fit.b, c);
}

namespace {

// Series: workload + variant + axis + every parameter off the axis.
std::map<std::string, series> series_of(const std::vector<point_result>& points) {
  std::map<std::string, series> by_key;
  for (const auto& p : points) {
    if (!p.valid() || !(p.wall.median > 0)) continue;
    for (const auto& axis : axes_of(p)) {
      if (!(axis.size > 0)) continue;
      const std::string params_key = p.params_key_without(axis.fixed);
      series& s = by_key[p.workload + '\x1f' + p.variant + '\x1f' + axis.name + '\x1f' + params_key];
      if (s.points.empty()) {
        s.workload = p.workload;
        s.variant = p.variant;
        s.kind = p.kind;
        s.size_param = axis.name;
        s.params_key = params_key;
        s.base_key = base_key_of(p, axis);
        s.threads = p.threads;
        s.python = is_python(p);
      }
      s.points.emplace_back(axis.size, &p);
    }
  }
  return by_key;
}

} // namespace

sweep_analysis analyze_sweeps(const std::vector<point_result>& points) {
  sweep_analysis out;
  std::map<std::string, series> by_key = series_of(points);
  struct fitted {
    series* s;
    std::optional<cost_curve> total, kernel, transfers, without;
  };
  std::vector<fitted> all;
  for (auto& [key, s] : by_key) {
    std::stable_sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    fitted f{&s, curve_of(s, basis::total), std::nullopt, std::nullopt, std::nullopt};
    if (!f.total) continue;
    out.fits.push_back(to_fit(s, *f.total, basis::total));
    bool transfers = false;
    for (const auto& [size, p] : s.points)
      transfers = transfers || (p->split_median && p->split_median->h2d + p->split_median->d2h > 0);
    if (transfers) {
      f.kernel = curve_of(s, basis::kernel);
      f.transfers = curve_of(s, basis::transfers);
      f.without = curve_of(s, basis::without_transfers);
      if (f.kernel) out.fits.push_back(to_fit(s, *f.kernel, basis::kernel));
      if (f.transfers) out.fits.push_back(to_fit(s, *f.transfers, basis::transfers));
      if (f.without) out.fits.push_back(to_fit(s, *f.without, basis::without_transfers));
    }
    all.push_back(std::move(f));
  }

  // Per base key and language: serial candidates (comparisons.hpp), the threads with the most.
  struct base_series {
    std::vector<const fitted*> serial;
    const fitted* threads = nullptr;
  };
  std::map<std::pair<std::string, bool>, base_series> bases;
  for (const auto& f : all) {
    const series& s = *f.s;
    auto& b = bases[{s.base_key, s.python}];
    if (s.kind == variant_kind::serial)
      b.serial.push_back(&f);
    else if (s.kind == variant_kind::threads && (!b.threads || s.threads > b.threads->s->threads))
      b.threads = &f;
  }
  auto best_serial = [&](const series& judged, bool python) -> const fitted* {
    auto it = bases.find({judged.base_key, python});
    if (it == bases.end() || it->second.serial.empty()) return nullptr;
    auto rank = [&](const fitted* f) {
      return std::make_pair(serial_baseline_rank(judged.variant, python, f->s->variant), f->s->variant);
    };
    const auto& c = it->second.serial;
    return *std::min_element(c.begin(), c.end(), [&](const fitted* x, const fitted* y) { return rank(x) < rank(y); });
  };
  for (const auto& f : all) {
    const series& s = *f.s;
    auto emit = [&](const fitted* base) {
      if (!base || base == &f) return;
      for (const bool with_transfers : {true, false}) {
        const std::optional<cost_curve>& curve = with_transfers ? f.total : f.without;
        if (!curve) continue;
        crossover c;
        c.workload = s.workload;
        c.variant = s.variant;
        c.baseline = base->s->variant;
        c.size_param = s.size_param;
        c.params_key = s.params_key;
        c.with_transfers = with_transfers;
        locate_crossover(*curve, *base->total, c);
        if (c.size) c.size = text::finite(*c.size);
        out.crossovers.push_back(std::move(c));
      }
    };
    // A Python series also against C++ serial: its baseline names the C++ variant.
    if (s.python) emit(best_serial(s, false));
    emit(best_serial(s, s.python));
    // Serial vs threads is threads vs serial inverted; thread counts are no crossover.
    if (s.kind != variant_kind::serial && s.kind != variant_kind::threads) {
      auto it = bases.find({s.base_key, s.python});
      if (it != bases.end()) emit(it->second.threads);
    }
  }
  return out;
}

} // namespace speedlab::analysis
