// Lesson 3 sampling rules shared bit for bit by the host variants and the CUDA kernels
// (philox.hpp: the same numbers from (seed, stream, counter) everywhere), and plain C++
// entry points to the kernels in montecarlo_kernels.cu. Pointers are device pointers; each
// launch is checked and returns at once; the caller synchronizes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "philox.hpp"

namespace speedlab::plugins::montecarlo {

inline constexpr std::uint64_t seed = rng::default_seed;

// Point m of the moment problem: coordinate d is word d % 4 of Philox(seed, stream d / 4,
// counter m), as a float in [0, 1) (24 random bits).
SPEEDLAB_HD rng::uint4x32 coordinates(std::uint32_t group, std::uint64_t m) { return rng::draw4(seed, group, m); }

// Monte Carlo pi: the pair j gives samples 2j (words 0, 1) and 2j + 1 (words 2, 3).
inline constexpr std::uint32_t pi_stream = 64;
SPEEDLAB_HD rng::uint4x32 pi_pair(std::uint64_t j) { return rng::draw4(seed, pi_stream, j); }

// x^2 + y^2 < 1 in float32, rounded the same way on host and device (no FMA contraction),
// so every variant counts the same hits.
SPEEDLAB_HD bool inside(float x, float y) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(x, x), __fmul_rn(y, y)) < 1.0f;
#else
  return x * x + y * y < 1.0f;
#endif
}

// The lesson's estimator from the sums of f and f^2 over M points (support volume V = 1):
// phi = sum f / M and its variance V^2/(M(M-1)) sum (f - phi)^2.
struct moment_estimate {
  double estimate;
  double variance;
};
SPEEDLAB_HD moment_estimate estimate_from_sums(double sum, double sum_sq, std::size_t points) {
  const double m = static_cast<double>(points);
  const double phi = sum / m;
  const double ss = sum_sq - sum * phi; // sum (f - phi)^2
  return {phi, (ss > 0 ? ss : 0.0) / (m * (m - 1))};
}

// Device results: the moment kernels write {sum f, sum f^2, estimate, variance}; the pi
// kernels write the hit count.
inline constexpr std::size_t moment_result_size = 4;

struct scratch {
  void* partials = nullptr;   // max_blocks() elements of 16 bytes
  unsigned* counter = nullptr; // zero between launches (the last block resets it)
};
std::size_t max_blocks();
inline constexpr std::size_t partial_bytes = 16;

// On-device Philox: generate and reduce in one pass.
void launch_moment_philox(int dims, std::size_t points, scratch s, double* result);
void launch_pi_philox(std::size_t samples, scratch s, unsigned long long* hits);

// Host-generated points already on the device: points[m * dims + d], xy[2 s], xy[2 s + 1].
void launch_moment_points(const float* points, int dims, std::size_t count, scratch s, double* result);
void launch_pi_points(const float* xy, std::size_t samples, scratch s, unsigned long long* hits);

// Tuned kernels (issue 14). Exact twins of launch_*_philox (the same Philox numbers and
// float32 operations: the same hits and sums), and fast-generator kernels drawing xoshiro128+
// numbers seeded per thread from Philox (statistically checked, grid-dependent results).
void launch_moment_philox_tuned(int dims, std::size_t points, scratch s, double* result);
void launch_pi_philox_tuned(std::size_t samples, scratch s, unsigned long long* hits);
void launch_moment_xoshiro(int dims, std::size_t points, scratch s, double* result);
void launch_pi_xoshiro(std::size_t samples, scratch s, unsigned long long* hits);

} // namespace speedlab::plugins::montecarlo
