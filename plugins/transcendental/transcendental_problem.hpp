// Lesson 4 problem definition for the host: the inputs (the lessons' uniform draws, from
// Philox), and the check against a reference computed in higher precision (double for
// float32 results, long double for float64).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "parallel.hpp"
#include "philox.hpp"
#include "transcendental_kernels.hpp"

namespace speedlab::plugins::transcendental {

enum class func_kind { gauss, hypot };

inline func_kind parse_func(const std::string& f) {
  if (f == "gauss") return func_kind::gauss;
  if (f == "hypot") return func_kind::hypot;
  throw std::invalid_argument("transcendental: func must be gauss or hypot, not '" + f + "'");
}

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Element i of input `stream`, uniform in [lo, hi): float32 from one Philox word (24 bits),
// float64 from two (53 bits).
template <class T>
T uniform(std::uint32_t stream, std::size_t i, T lo, T hi) {
  if constexpr (sizeof(T) == 4) {
    const rng::uint4x32 r = rng::draw4(rng::default_seed, stream, i / 4);
    return lo + (hi - lo) * rng::to_unit_float(r.v[i % 4]);
  } else {
    const rng::uint4x32 r = rng::draw4(rng::default_seed, stream, i / 2);
    const std::size_t k = 2 * (i % 2);
    return lo + (hi - lo) * rng::to_unit_double(r.v[k], r.v[k + 1]);
  }
}

// The lessons' inputs: x ~ U(-3, 3) for the PDF; rho ~ U(0.5, 1.5), theta ~ U(-pi, pi).
template <class T>
struct inputs {
  std::vector<T> x;                           // gauss
  std::vector<T> rho1, theta1, rho2, theta2;  // hypot
};

template <class T>
void fill_inputs(func_kind f, std::size_t n, T* x, T* rho1, T* theta1, T* rho2, T* theta2) {
  const T pi = std::numbers::pi_v<T>;
  parallel::for_static(parallel::default_threads(), n, [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      if (f == func_kind::gauss) {
        x[i] = uniform<T>(10, i, T(-3), T(3));
      } else {
        rho1[i] = uniform<T>(11, i, T(0.5), T(1.5));
        theta1[i] = uniform<T>(12, i, -pi, pi);
        rho2[i] = uniform<T>(13, i, T(0.5), T(1.5));
        theta2[i] = uniform<T>(14, i, -pi, pi);
      }
    }
  });
}

template <class T>
void fill_inputs(func_kind f, std::size_t n, inputs<T>& in) {
  const auto v = f == func_kind::gauss ? std::vector<std::vector<T>*>{&in.x}
                                  : std::vector<std::vector<T>*>{&in.rho1, &in.theta1, &in.rho2, &in.theta2};
  for (std::vector<T>* a : v) a->resize(n);
  fill_inputs<T>(f, n, in.x.data(), in.rho1.data(), in.theta1.data(), in.rho2.data(), in.theta2.data());
}

// float32: 1e-6 relative to a double reference; float64: 1e-12 relative to long double.
template <class T>
constexpr double tolerance = sizeof(T) == 4 ? 1e-6 : 1e-12;

// Errors are relative to |reference| for the PDF (never below 0.0044 on [-3, 3]) and to
// rho1 + rho2 for the distance, whose relative error is unbounded as it approaches zero:
// cancellation in x1 - x2 is the inputs' conditioning, not the function's error.
// Up to 2^24 elements are checked, all of them when n is at most that, else evenly spaced.
template <class T>
validation check(func_kind f, std::size_t n, const T* out, const T* x, const T* rho1, const T* theta1,
                 const T* rho2, const T* theta2) {
  using R = std::conditional_t<sizeof(T) == 4, double, long double>;
  constexpr std::size_t max_checked = std::size_t{1} << 24;
  const std::size_t step = n <= max_checked ? 1 : (n + max_checked - 1) / max_checked;
  const std::size_t checked = n == 0 ? 0 : (n - 1) / step + 1;
  const int threads = parallel::default_threads();
  struct alignas(64) partial {
    double max_error = 0;
    std::size_t worst = 0;
  };
  std::vector<partial> parts(static_cast<std::size_t>(threads));
  parallel::for_static(threads, checked, [&](std::size_t t, std::size_t lo, std::size_t hi) {
    partial p;
    for (std::size_t k = lo; k < hi; ++k) {
      const std::size_t i = k * step;
      R ref, scale;
      if (f == func_kind::gauss) {
        const R xi = x[i];
        ref = std::exp(-xi * xi / 2) / std::sqrt(2 * std::numbers::pi_v<R>);
        scale = std::fabs(ref);
      } else {
        const R r1 = rho1[i], t1 = theta1[i], r2 = rho2[i], t2 = theta2[i];
        ref = std::hypot(r1 * std::cos(t1) - r2 * std::cos(t2), r1 * std::sin(t1) - r2 * std::sin(t2));
        scale = r1 + r2;
      }
      const double err = std::isnan(out[i]) ? INFINITY : static_cast<double>(std::fabs(out[i] - ref) / scale);
      if (err > p.max_error) p = {err, i};
    }
    parts[t] = p;
  });
  partial worst;
  for (const partial& p : parts)
    if (p.max_error > worst.max_error) worst = p;
  const char* what = f == func_kind::gauss ? "gaussian pdf" : "polar distance";
  const std::string msg = std::string(what) + (sizeof(T) == 4 ? " float32" : " float64") + ": max relative error " +
                          num(worst.max_error) + " (tolerance " + num(tolerance<T>) + ", at element " +
                          std::to_string(worst.worst) + ") over " + std::to_string(checked) + " of " +
                          std::to_string(n) + " elements";
  return worst.max_error <= tolerance<T> ? validation::pass(msg, worst.max_error)
                                         : validation::fail(msg, worst.max_error);
}

template <class T>
validation check(func_kind f, std::size_t n, const T* out, const inputs<T>& in) {
  return check<T>(f, n, out, in.x.data(), in.rho1.data(), in.theta1.data(), in.rho2.data(), in.theta2.data());
}

} // namespace speedlab::plugins::transcendental
