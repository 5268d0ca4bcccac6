// Lesson 4 functions, written once for the host variants and the CUDA kernels (the
// lessons' Numba ufuncs gaussian_pdf and polar_distance), and plain C++ entry points to the
// kernels in transcendental_kernels.cu. Pointers are device pointers; each launch is
// checked and returns at once; the caller synchronizes.
#pragma once

#include <cmath>
#include <cstddef>

#if defined(__CUDACC__)
#define SPEEDLAB_TRANSCENDENTAL_HD __host__ __device__ __forceinline__
#else
#define SPEEDLAB_TRANSCENDENTAL_HD inline
#endif

namespace speedlab::plugins::transcendental {

// The lesson's normal distribution: mean 0, sigma 1; 1/sqrt(2 pi) in double.
inline constexpr double pdf_mean = 0.0;
inline constexpr double pdf_sigma = 1.0;
inline constexpr double inv_sqrt_2pi = 0.398942280401432677939946059934381868;

// exp(-((x - mean) / sigma)^2 / 2) / (sigma sqrt(2 pi)), in T throughout (float32 stays
// float32: expf, no double promotion).
template <class T>
SPEEDLAB_TRANSCENDENTAL_HD T gaussian_pdf(T x) {
  constexpr T mean = static_cast<T>(pdf_mean);
  constexpr T inv_sigma = static_cast<T>(1.0 / pdf_sigma);
  constexpr T norm = static_cast<T>(inv_sqrt_2pi / pdf_sigma);
  const T t = (x - mean) * inv_sigma;
  return std::exp(static_cast<T>(-0.5) * t * t) * norm;
}

// Distance between two points given in polar coordinates.
template <class T>
SPEEDLAB_TRANSCENDENTAL_HD T polar_distance(T rho1, T theta1, T rho2, T theta2) {
  T s1, c1, s2, c2;
#if defined(__CUDA_ARCH__)
  sincos(theta1, &s1, &c1); // one call for both (overloaded for float and double)
  sincos(theta2, &s2, &c2);
#else
  s1 = std::sin(theta1), c1 = std::cos(theta1), s2 = std::sin(theta2), c2 = std::cos(theta2);
#endif
  return std::hypot(rho1 * c1 - rho2 * c2, rho1 * s1 - rho2 * s2);
}

void launch_gauss(const float* x, float* y, std::size_t n, bool lesson_kernel);
void launch_gauss(const double* x, double* y, std::size_t n, bool lesson_kernel);
void launch_polar(const float* rho1, const float* theta1, const float* rho2, const float* theta2, float* d,
                  std::size_t n, bool lesson_kernel);
void launch_polar(const double* rho1, const double* theta1, const double* rho2, const double* theta2, double* d,
                  std::size_t n, bool lesson_kernel);

} // namespace speedlab::plugins::transcendental
