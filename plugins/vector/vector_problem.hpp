// Lesson 1 problem definition shared by every variant: the inputs (closed forms of the
// index, so every product and sum is exact in float32) and the independent check.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "parallel.hpp"
#include "vector_kernels.hpp"

namespace speedlab::plugins::vector {

inline op_kind parse_op(const std::string& op) {
  if (op == "add") return op_kind::add;
  if (op == "mul") return op_kind::mul;
  throw std::invalid_argument("vector: op must be add or mul, not '" + op + "'");
}

// add: a = i mod 2^24, b = 2a, both exact floats; a + b = 3a is then the correctly rounded
// 3a (exactly 3i for i < 2^24 / 3, the lessons' check).
// mul: a = i mod 4093 + 1, b = i mod 4091 + 1: products below 2^24, so exact.
inline constexpr std::size_t add_period = std::size_t{1} << 24;

inline float input_a(op_kind op, std::size_t i) {
  return op == op_kind::add ? static_cast<float>(i % add_period) : static_cast<float>(i % 4093 + 1);
}
inline float input_b(op_kind op, std::size_t i) {
  return op == op_kind::add ? 2.0f * static_cast<float>(i % add_period) : static_cast<float>(i % 4091 + 1);
}
// From the closed form in double, rounded once: what IEEE float32 must produce bit for bit.
inline float expected(op_kind op, std::size_t i) {
  if (op == op_kind::add) return static_cast<float>(3.0 * static_cast<double>(i % add_period));
  return static_cast<float>(static_cast<double>(i % 4093 + 1) * static_cast<double>(i % 4091 + 1));
}

// Setup is untimed: fill with every hardware thread.
inline void fill_inputs(op_kind op, float* a, float* b, std::size_t n) {
  parallel::for_static(parallel::default_threads(), n, [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      a[i] = input_a(op, i);
      b[i] = input_b(op, i);
    }
  });
}

// Exact comparison of every element with the closed form (never with another variant).
inline validation check(op_kind op, const float* c, std::size_t n) {
  const int threads = parallel::default_threads();
  struct alignas(64) partial {
    std::size_t mismatches = 0;
    std::size_t first = SIZE_MAX;
    double max_error = 0;
  };
  std::vector<partial> parts(static_cast<std::size_t>(threads));
  parallel::for_static(threads, n, [&](std::size_t t, std::size_t lo, std::size_t hi) {
    partial p;
    for (std::size_t i = lo; i < hi; ++i) {
      const float e = expected(op, i);
      if (c[i] != e) {
        if (p.mismatches++ == 0) p.first = i;
        const double err = std::isnan(c[i]) ? INFINITY : std::fabs(static_cast<double>(c[i]) - e);
        p.max_error = std::max(p.max_error, err);
      }
    }
    parts[t] = p;
  });
  partial all;
  for (const partial& p : parts) {
    all.mismatches += p.mismatches;
    all.first = std::min(all.first, p.first);
    all.max_error = std::max(all.max_error, p.max_error);
  }
  const char* what = op == op_kind::add ? "c = a + b" : "c = a * b";
  if (all.mismatches == 0)
    return validation::pass(std::string(what) + " exact for all " + std::to_string(n) + " elements");
  return validation::fail(std::string(what) + ": " + std::to_string(all.mismatches) + " of " + std::to_string(n) +
                              " elements wrong; first c[" + std::to_string(all.first) + "] = " +
                              std::to_string(c[all.first]) + ", expected " +
                              std::to_string(expected(op, all.first)),
                          all.max_error);
}

} // namespace speedlab::plugins::vector
