// Lesson 5 problem definition shared by the host variants and the CUDA kernels: the binning
// rule (identical bit for bit on host and device) and the sample generator.
#pragma once

#include <cstdint>

#include "philox.hpp"

namespace speedlab::plugins::histogram {

inline constexpr float range_lo = -4.0f;
inline constexpr float range_hi = 4.0f;
inline constexpr std::uint32_t sample_stream = 5;

// bins / (hi - lo): exact in float for any bin count below 2^24.
SPEEDLAB_HD float bin_scale(int bins) { return static_cast<float>(bins) / (range_hi - range_lo); }

// Bin of x in [lo, hi), or -1 outside (and for NaN). Computed in float32 with explicit
// round-to-nearest on the device so nvcc cannot fuse it into an FMA: host and device agree.
SPEEDLAB_HD int bin_of(float x, int bins, float scale) {
  if (!(x >= range_lo && x < range_hi)) return -1;
#if defined(__CUDA_ARCH__)
  const float t = __fmul_rn(__fadd_rn(x, -range_lo), scale);
#else
  const float t = (x - range_lo) * scale;
#endif
  const int b = static_cast<int>(t);
  return b < bins ? b : bins - 1; // x just below hi may round up to bins
}

} // namespace speedlab::plugins::histogram
