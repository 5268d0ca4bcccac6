// Lesson 2 problem definition shared by every variant: the inputs and the independent
// check against closed forms (mean of 0..n-1 is (n-1)/2; dot of 3s and 2s is 6n).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <speedlab/plugin.hpp>

#include "parallel.hpp"
#include "reduction_kernels.hpp"

namespace speedlab::plugins::reduction {

inline op_kind parse_op(const std::string& op) {
  if (op == "mean") return op_kind::mean;
  if (op == "dot") return op_kind::dot;
  throw std::invalid_argument("reduction: op must be mean or dot, not '" + op + "'");
}

// mean reads a = arange(n) in float32 (rounded to even above 2^24; the rounding is
// symmetric, so the mean stays within the tolerance); dot reads a = 3, b = 2.
inline float input_a(op_kind op, std::size_t i) { return op == op_kind::mean ? static_cast<float>(i) : 3.0f; }
inline constexpr float input_b = 2.0f;

inline void fill_inputs(op_kind op, float* a, float* b, std::size_t n) {
  parallel::for_static(parallel::default_threads(), n, [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) a[i] = input_a(op, i);
    if (b)
      for (std::size_t i = lo; i < hi; ++i) b[i] = input_b;
  });
}

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Every partial sum of 6s below 2^53 is exact in double: dot must be exactly 6n.
inline constexpr double mean_tolerance = 1e-6; // relative

inline double expected(op_kind op, std::size_t n) {
  return op == op_kind::mean ? (static_cast<double>(n) - 1) / 2 : 6.0 * static_cast<double>(n);
}

inline validation check(op_kind op, std::size_t n, double value) {
  const double e = expected(op, n);
  const double err = std::isnan(value) ? INFINITY : std::fabs(value - e);
  if (op == op_kind::dot) {
    const std::string what = "dot(3s, 2s) = " + num(value) + ", expected exactly 6n = " + num(e);
    return err == 0 ? validation::pass(what) : validation::fail(what, err);
  }
  const double rel = e != 0 ? err / e : err;
  const std::string what = "mean(arange n) = " + num(value) + " vs (n-1)/2 = " + num(e) + ", relative error " +
                           num(rel) + " (tolerance 1e-6)";
  return rel <= mean_tolerance ? validation::pass(what, rel) : validation::fail(what, rel);
}

} // namespace speedlab::plugins::reduction
