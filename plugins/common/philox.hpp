// Counter-based random numbers (Philox-4x32-10), the same on the host and the device, so
// every variant of a workload draws the same numbers from (seed, index) and results are
// reproducible and comparable. Usable from .cpp and .cu files.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SPEEDLAB_HD __host__ __device__ __forceinline__
#else
#define SPEEDLAB_HD inline
#endif

namespace speedlab::rng {

struct uint4x32 {
  std::uint32_t v[4];
};

SPEEDLAB_HD std::uint32_t mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  return static_cast<std::uint32_t>(p);
}

// Philox4x32 with 10 rounds (Salmon et al., SC'11): counter (c0..c3) and key (k0, k1).
SPEEDLAB_HD uint4x32 philox4x32(uint4x32 c, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  constexpr std::uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    std::uint32_t hi0, hi1;
    const std::uint32_t lo0 = mulhilo(m0, c.v[0], hi0);
    const std::uint32_t lo1 = mulhilo(m1, c.v[2], hi1);
    c = uint4x32{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
    k0 += w0;
    k1 += w1;
  }
  return c;
}

// Four 32-bit random words for (seed, stream, index): stream separates independent draws
// (dimensions, or the two inputs of a problem) at the same index.
SPEEDLAB_HD uint4x32 draw4(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  const uint4x32 c{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), stream, 0u}};
  return philox4x32(c, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Uniform float in [0, 1) from the top 24 bits: exact and identical on host and device.
SPEEDLAB_HD float to_unit_float(std::uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
// Uniform double in [0, 1) from 53 bits of two words.
SPEEDLAB_HD double to_unit_double(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(bits & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

inline constexpr std::uint64_t default_seed = 0x5eed1ab5eed1ab5ull;

} // namespace speedlab::rng
