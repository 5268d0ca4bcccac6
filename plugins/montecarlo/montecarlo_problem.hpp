// Lesson 3 problem definition for the host: sampling loops used by the serial and threads
// variants, the host-generated point sets of the copy-in variants, and the checks against
// closed forms (E||x||^2 = N/3, Var ||x||^2 = 4N/45, pi/4 for the hit fraction).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <speedlab/plugin.hpp>

#include "montecarlo_kernels.hpp"
#include "parallel.hpp"

namespace speedlab::plugins::montecarlo {

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct moment_sums {
  double sum = 0, sum_sq = 0;
};

// f = ||x||^2 for points [lo, hi), summed in double (the plain loop of the lesson).
inline moment_sums moment_range(int dims, std::size_t lo, std::size_t hi) {
  moment_sums s;
  for (std::size_t m = lo; m < hi; ++m) {
    float f = 0.0f;
    for (int g = 0; 4 * g < dims; ++g) {
      const rng::uint4x32 r = coordinates(static_cast<std::uint32_t>(g), m);
      for (int k = 0; k < 4 && 4 * g + k < dims; ++k) {
        const float u = rng::to_unit_float(r.v[k]);
        f += u * u;
      }
    }
    s.sum += f;
    s.sum_sq += static_cast<double>(f) * static_cast<double>(f);
  }
  return s;
}

// Hits among samples [2 lo, 2 hi) ∩ [0, samples).
inline std::uint64_t pi_range(std::size_t samples, std::size_t lo, std::size_t hi) {
  std::uint64_t hits = 0;
  for (std::size_t j = lo; j < hi; ++j) {
    const rng::uint4x32 r = pi_pair(j);
    hits += inside(rng::to_unit_float(r.v[0]), rng::to_unit_float(r.v[1]));
    if (2 * j + 1 < samples) hits += inside(rng::to_unit_float(r.v[2]), rng::to_unit_float(r.v[3]));
  }
  return hits;
}
inline std::size_t pi_pairs(std::size_t samples) { return (samples + 1) / 2; }

// Host-generated points for the copy-in variants (numpy's rand(M, N) layout), refused
// beyond a size the host and device can reasonably hold twice.
inline constexpr double max_point_bytes = 16.0 * (1ull << 30);
inline void check_point_bytes(const char* variant, double bytes) {
  if (bytes > max_point_bytes)
    throw std::runtime_error(std::string(variant) + ": host-generated points would take " + num(bytes / (1ull << 30)) +
                             " GiB (limit 16 GiB); use the on-device generator (variant cuda)");
}
inline void fill_moment_points(float* pts, int dims, std::size_t points) {
  const auto n = static_cast<std::size_t>(dims);
  parallel::for_static(parallel::default_threads(), points, [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t m = lo; m < hi; ++m)
      for (int g = 0; 4 * g < dims; ++g) {
        const rng::uint4x32 r = coordinates(static_cast<std::uint32_t>(g), m);
        for (int k = 0; k < 4 && 4 * g + k < dims; ++k) pts[m * n + static_cast<std::size_t>(4 * g + k)] = rng::to_unit_float(r.v[k]);
      }
  });
}
inline void fill_pi_points(float* xy, std::size_t samples) {
  parallel::for_static(parallel::default_threads(), pi_pairs(samples), [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t j = lo; j < hi; ++j) {
      const rng::uint4x32 r = pi_pair(j);
      xy[4 * j] = rng::to_unit_float(r.v[0]);
      xy[4 * j + 1] = rng::to_unit_float(r.v[1]);
      if (2 * j + 1 < samples) {
        xy[4 * j + 2] = rng::to_unit_float(r.v[2]);
        xy[4 * j + 3] = rng::to_unit_float(r.v[3]);
      }
    }
  });
}

// Closed forms for f = ||x||^2, x uniform on [0,1]^N: f is a sum of N independent
// Y = u^2 with E Y = 1/3, Var Y = 4/45, fourth central moment 16/945.
struct moment_truth {
  double mean, var_f, se, var_expected, var_se;
};
inline moment_truth moment_closed_form(int dims, std::size_t points) {
  const double n = dims, m = static_cast<double>(points);
  const double var_y = 4.0 / 45, mu4_y = 16.0 / 945;
  const double var_f = n * var_y;
  const double mu4_f = n * mu4_y + 3 * n * (n - 1) * var_y * var_y;
  const double kurtosis = mu4_f / (var_f * var_f);
  // The estimator's variance is s^2 / M; Var(s^2) = sigma^4 (kurtosis - 1 + 2/(M-1)) / M.
  const double var_expected = var_f / m;
  return {n / 3, var_f, std::sqrt(var_f / m), var_expected,
          var_expected * std::sqrt((kurtosis - 1 + 2 / (m - 1)) / m)};
}

// |estimate - N/3| < 4 SE with SE = sqrt(4N/(45M)), and the variance estimate within 4 of
// its own standard errors of 4N/(45M). max_error: the estimate's error in SE units.
inline validation check_moment(int dims, std::size_t points, double estimate, double variance) {
  const moment_truth t = moment_closed_form(dims, points);
  const double z = std::isnan(estimate) ? INFINITY : std::fabs(estimate - t.mean) / t.se;
  const double zv = std::isnan(variance) ? INFINITY : std::fabs(variance - t.var_expected) / t.var_se;
  const std::string what = "E||x||^2 estimate " + num(estimate) + " vs N/3 = " + num(t.mean) + " (" + num(z) +
                           " SE, limit 4); variance estimate " + num(variance) + " vs 4N/(45M) = " +
                           num(t.var_expected) + " (" + num(zv) + " SE, limit 4)";
  return z < 4 && zv < 4 ? validation::pass(what, z) : validation::fail(what, z);
}

// Hit fraction within 4 binomial standard errors of pi/4. max_error: |pi estimate - pi|.
inline validation check_pi(std::size_t samples, std::uint64_t hits) {
  const double m = static_cast<double>(samples), p = std::acos(-1.0) / 4;
  const double frac = static_cast<double>(hits) / m;
  const double z = std::fabs(frac - p) / std::sqrt(p * (1 - p) / m);
  const double err = std::fabs(4 * frac - 4 * p);
  const std::string what = "pi estimate " + num(4 * frac) + " (" + std::to_string(hits) + " hits of " +
                           std::to_string(samples) + "), " + num(z) + " binomial SE from pi/4 (limit 4)";
  return z < 4 ? validation::pass(what, err) : validation::fail(what, err);
}

} // namespace speedlab::plugins::montecarlo
