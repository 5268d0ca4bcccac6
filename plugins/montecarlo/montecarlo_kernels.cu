// Lesson 3 kernels: each thread draws its own points (grid-stride), keeps private sums in
// registers, the block reduces them (warp shuffles + shared memory), and the last block to
// finish combines the block partials: one launch, one pass, no atomics on the data path.
#include <algorithm>

#include <speedlab/cuda.hpp>
#include "montecarlo_kernels.hpp"

namespace speedlab::plugins::montecarlo {
namespace {

constexpr int block_size = 256;
constexpr int warps = block_size / 32;
constexpr int full_occupancy_blocks = 2048 / block_size; // the tuned kernels: 32 registers at most

// Sum over the block, valid in thread 0. Starts with a barrier so calls can follow each
// other without racing on the shared slots.
template <class T>
__device__ __forceinline__ T block_sum(T v) {
  __shared__ T warp_sums[warps];
  __syncthreads();
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < warps ? warp_sums[threadIdx.x] : T{0};
  if (warp == 0)
#pragma unroll
    for (int offset = warps / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Writes the block's partial, takes a ticket; true in every thread of the last block.
template <class T>
__device__ __forceinline__ bool publish(T* partials, unsigned* counter, T a, T b) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = a;
    partials[2 * blockIdx.x + 1] = b;
    __threadfence(); // partials visible device-wide before the ticket
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  return last;
}

// In the last block: totals of both partial columns (valid in thread 0); resets the counter.
template <class T>
__device__ __forceinline__ void totals(const T* partials, unsigned* counter, T& a, T& b) {
  T x{0}, y{0};
  for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) {
    x += __ldcg(partials + 2 * k);
    y += __ldcg(partials + 2 * k + 1);
  }
  a = block_sum(x);
  b = block_sum(y);
  if (threadIdx.x == 0) *counter = 0;
}

__device__ __forceinline__ void finish_moment(double s, double q, std::size_t points, double* partials,
                                              unsigned* counter, double* result) {
  s = block_sum(s);
  q = block_sum(q);
  if (!publish(partials, counter, s, q)) return;
  totals(partials, counter, s, q);
  if (threadIdx.x == 0) {
    const moment_estimate e = estimate_from_sums(s, q, points);
    result[0] = s;
    result[1] = q;
    result[2] = e.estimate;
    result[3] = e.variance;
  }
}

// f = ||x||^2 in float32 with fused multiply-adds; sums of f and f^2 in double.
template <int Dims>
__global__ void __launch_bounds__(block_size)
    moment_philox_kernel(int runtime_dims, std::size_t points, double* partials, unsigned* counter,
                         double* result) {
  const int dims = Dims > 0 ? Dims : runtime_dims;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  double s = 0, q = 0;
  for (std::size_t m = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < points; m += stride) {
    float f = 0.0f;
#pragma unroll
    for (int g = 0; g < (dims + 3) / 4; ++g) {
      const rng::uint4x32 r = coordinates(static_cast<std::uint32_t>(g), m);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (4 * g + k < dims) {
          const float u = rng::to_unit_float(r.v[k]);
          f = fmaf(u, u, f);
        }
    }
    s += f;
    q = fma(static_cast<double>(f), static_cast<double>(f), q);
  }
  finish_moment(s, q, points, partials, counter, result);
}

template <int Dims>
__global__ void __launch_bounds__(block_size)
    moment_points_kernel(const float* __restrict__ pts, int runtime_dims, std::size_t points, double* partials,
                         unsigned* counter, double* result) {
  const int dims = Dims > 0 ? Dims : runtime_dims;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  double s = 0, q = 0;
  for (std::size_t m = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < points; m += stride) {
    const float* p = pts + m * static_cast<std::size_t>(dims);
    float f = 0.0f;
    if constexpr (Dims > 0 && Dims % 4 == 0) {
      // Rows of a multiple of 4 floats are 16-byte aligned: vector loads.
#pragma unroll
      for (int g = 0; g < Dims / 4; ++g) {
        const float4 v = reinterpret_cast<const float4*>(p)[g];
        f = fmaf(v.x, v.x, f);
        f = fmaf(v.y, v.y, f);
        f = fmaf(v.z, v.z, f);
        f = fmaf(v.w, v.w, f);
      }
    } else {
      for (int d = 0; d < dims; ++d) f = fmaf(p[d], p[d], f);
    }
    s += f;
    q = fma(static_cast<double>(f), static_cast<double>(f), q);
  }
  finish_moment(s, q, points, partials, counter, result);
}

__device__ __forceinline__ void finish_pi(unsigned count, unsigned long long* partials, unsigned* counter,
                                          unsigned long long* hits) {
  unsigned long long c = block_sum(static_cast<unsigned long long>(count));
  if (!publish(partials, counter, c, 0ull)) return;
  unsigned long long unused = 0;
  totals(partials, counter, c, unused);
  if (threadIdx.x == 0) *hits = c;
}

__global__ void __launch_bounds__(block_size)
    pi_philox_kernel(std::size_t samples, unsigned long long* partials, unsigned* counter, unsigned long long* hits) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t pairs = (samples + 1) / 2;
  unsigned count = 0;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < pairs; j += stride) {
    const rng::uint4x32 r = pi_pair(j);
    count += inside(rng::to_unit_float(r.v[0]), rng::to_unit_float(r.v[1]));
    if (2 * j + 1 < samples) count += inside(rng::to_unit_float(r.v[2]), rng::to_unit_float(r.v[3]));
  }
  finish_pi(count, partials, counter, hits);
}

__global__ void __launch_bounds__(block_size)
    pi_points_kernel(const float2* __restrict__ xy, std::size_t samples, unsigned long long* partials,
                     unsigned* counter, unsigned long long* hits) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned count = 0;
  for (std::size_t s = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; s < samples; s += stride) {
    const float2 p = xy[s];
    count += inside(p.x, p.y);
  }
  finish_pi(count, partials, counter, hits);
}

// ---- Tuned kernels (issue 14), beside the lesson's ----------------------------------------
//
// Exact twins: the same Philox numbers and the same float32 operations as the kernels above
// (so the same hits and the same f per point), with less arithmetic per number. A unit float
// is u = a 2^-24 with a = w >> 8 < 2^24 exact in float32; scaling by a power of two is exact
// and float rounding is scale-invariant away from subnormals (a^2 >= 1 here), so
//   fl(fl(x x) + fl(y y)) < 1   <=>   fl(fl(a a) + fl(b b)) < 2^48, and
//   fmaf(u, u, f) chains give f = 2^-48 * (the same chain over a with F = f 2^48),
// which drops the scaling multiply of every number. Pi takes two independent draws per loop
// trip (two dependency chains per thread); a moment point already makes N/4 of them.
__device__ __forceinline__ float scaled(std::uint32_t w) { return static_cast<float>(w >> 8); }
__device__ __forceinline__ unsigned hit_scaled(std::uint32_t wx, std::uint32_t wy) {
  const float a = scaled(wx), b = scaled(wy);
  return __fadd_rn(__fmul_rn(a, a), __fmul_rn(b, b)) < 281474976710656.0f; // 2^48
}

__global__ void __launch_bounds__(block_size, full_occupancy_blocks)
    pi_philox_tuned_kernel(std::size_t samples, unsigned long long* partials, unsigned* counter,
                           unsigned long long* hits) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t full = samples / 2; // pairs whose two samples both count
  unsigned count = 0;
  std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; j + stride < full; j += 2 * stride) {
    const rng::uint4x32 r = pi_pair(j), t = pi_pair(j + stride);
    count += hit_scaled(r.v[0], r.v[1]) + hit_scaled(r.v[2], r.v[3]);
    count += hit_scaled(t.v[0], t.v[1]) + hit_scaled(t.v[2], t.v[3]);
  }
  if (j < full) {
    const rng::uint4x32 r = pi_pair(j);
    count += hit_scaled(r.v[0], r.v[1]) + hit_scaled(r.v[2], r.v[3]);
    j += stride;
  }
  if (samples % 2 == 1 && j == full) { // the last, unpaired sample: words 0 and 1 of pair `full`
    const rng::uint4x32 r = pi_pair(j);
    count += hit_scaled(r.v[0], r.v[1]);
  }
  finish_pi(count, partials, counter, hits);
}

template <int Dims>
__device__ __forceinline__ float moment_f_scaled(int runtime_dims, std::size_t m) { // 2^48 f of point m
  const int dims = Dims > 0 ? Dims : runtime_dims;
  float f = 0.0f;
#pragma unroll
  for (int g = 0; g < (dims + 3) / 4; ++g) {
    const rng::uint4x32 r = coordinates(static_cast<std::uint32_t>(g), m);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (4 * g + k < dims) {
        const float a = scaled(r.v[k]);
        f = fmaf(a, a, f);
      }
  }
  return f;
}

template <int Dims>
__global__ void __launch_bounds__(block_size, full_occupancy_blocks)
    moment_philox_tuned_kernel(int dims, std::size_t points, double* partials, unsigned* counter, double* result) {
  constexpr float unscale = 1.0f / 281474976710656.0f; // 2^-48
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  double s = 0, q = 0;
  for (std::size_t m = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < points; m += stride) {
    const float f = moment_f_scaled<Dims>(dims, m) * unscale;
    s += f;
    q = fma(static_cast<double>(f), static_cast<double>(f), q);
  }
  finish_moment(s, q, points, partials, counter, result);
}

// Fast generator: xoshiro128+ (Blackman and Vigna, 2018), 128 bits of state per thread in
// registers, seeded from Philox(seed, stream, global thread index) so every thread starts at an
// independent point of the 2^128 - 1 period; a draw is 7 integer operations. Its top bits are
// the good ones: a number uses w >> 8 (24 bits). Different numbers from the Philox variants;
// results depend on the grid and are checked statistically like every variant's.
struct xoshiro128p {
  std::uint32_t s0, s1, s2, s3;
  __device__ explicit xoshiro128p(std::uint32_t stream) {
    const std::uint64_t id = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const rng::uint4x32 r = rng::draw4(seed, stream, id);
    s0 = r.v[0] | ((r.v[1] | r.v[2] | r.v[3]) == 0); // never the all-zero state
    s1 = r.v[1];
    s2 = r.v[2];
    s3 = r.v[3];
  }
  __device__ __forceinline__ std::uint32_t next() {
    const std::uint32_t out = s0 + s3, t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = __funnelshift_l(s3, s3, 11);
    return out;
  }
  __device__ __forceinline__ std::uint32_t next24() { return next() >> 8; }
};
inline constexpr std::uint32_t fast_pi_stream = 128, fast_moment_stream = 129;

// How many of n items, dealt round-robin over `threads`, fall to thread `t`.
__device__ __forceinline__ unsigned share(std::size_t n, std::size_t t, std::size_t threads) {
  return t < n ? static_cast<unsigned>((n - t - 1) / threads + 1) : 0u;
}

// Hits with an exact integer test on the 24-bit lattice: a^2 + b^2 < 2^48 (64-bit products).
__global__ void __launch_bounds__(block_size, full_occupancy_blocks)
    pi_xoshiro_kernel(std::size_t samples, unsigned long long* partials, unsigned* counter, unsigned long long* hits) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const unsigned n = share(samples, static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x, threads);
  xoshiro128p g(fast_pi_stream);
  unsigned count = 0;
#pragma unroll 4
  for (unsigned k = 0; k < n; ++k) {
    const std::uint64_t a = g.next24(), b = g.next24();
    count += a * a + b * b < (1ull << 48);
  }
  finish_pi(count, partials, counter, hits);
}

// f = ||x||^2 exactly: the sum of the a_d^2 (< 2^51) in 64-bit integers, times 2^-48 in double.
template <int Dims>
__global__ void __launch_bounds__(block_size, full_occupancy_blocks)
    moment_xoshiro_kernel(int runtime_dims, std::size_t points, double* partials, unsigned* counter, double* result) {
  const int dims = Dims > 0 ? Dims : runtime_dims;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const unsigned n = share(points, static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x, threads);
  xoshiro128p g(fast_moment_stream);
  double s = 0, q = 0;
#pragma unroll 2
  for (unsigned k = 0; k < n; ++k) {
    std::uint64_t sq = 0;
#pragma unroll
    for (int d = 0; d < dims; ++d) {
      const std::uint64_t a = g.next24();
      sq += a * a;
    }
    const double f = static_cast<double>(sq) * (1.0 / 281474976710656.0);
    s += f;
    q = fma(f, f, q);
  }
  finish_moment(s, q, points, partials, counter, result);
}

// One full device of Kernel at this file's block size (cached per device).
template <auto Kernel>
unsigned full_grid() {
  return speedlab::cuda::full_grid<Kernel, block_size>();
}

// A grid-stride grid: no more blocks than the work needs, no more than fill the device.
template <auto Kernel>
unsigned grid_for(std::size_t work) {
  const std::size_t wanted = (std::max<std::size_t>(work, 1) + block_size - 1) / block_size;
  return static_cast<unsigned>(std::min<std::size_t>(wanted, full_grid<Kernel>()));
}

template <int Dims>
void moment_philox(int dims, std::size_t points, scratch s, double* result) {
  constexpr auto kernel = moment_philox_kernel<Dims>;
  kernel<<<grid_for<kernel>(points), block_size>>>(dims, points, static_cast<double*>(s.partials), s.counter,
                                                   result);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

template <int Dims>
void moment_philox_tuned(int dims, std::size_t points, scratch s, double* result) {
  constexpr auto kernel = moment_philox_tuned_kernel<Dims>;
  kernel<<<grid_for<kernel>(points), block_size>>>(dims, points, static_cast<double*>(s.partials), s.counter, result);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

template <int Dims>
void moment_xoshiro(int dims, std::size_t points, scratch s, double* result) {
  constexpr auto kernel = moment_xoshiro_kernel<Dims>;
  kernel<<<full_grid<kernel>(), block_size>>>(dims, points, static_cast<double*>(s.partials), s.counter, result);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

template <int Dims>
void moment_points(const float* pts, int dims, std::size_t points, scratch s, double* result) {
  constexpr auto kernel = moment_points_kernel<Dims>;
  kernel<<<grid_for<kernel>(points), block_size>>>(pts, dims, points, static_cast<double*>(s.partials), s.counter,
                                                   result);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

} // namespace

std::size_t max_blocks() {
  return std::max({full_grid<moment_philox_kernel<0>>(), full_grid<moment_philox_kernel<2>>(),
                   full_grid<moment_philox_kernel<8>>(), full_grid<moment_philox_kernel<32>>(),
                   full_grid<moment_points_kernel<0>>(), full_grid<moment_points_kernel<8>>(),
                   full_grid<moment_points_kernel<32>>(), full_grid<pi_philox_kernel>(),
                   full_grid<pi_points_kernel>(), full_grid<pi_philox_tuned_kernel>(),
                   full_grid<pi_xoshiro_kernel>(), full_grid<moment_philox_tuned_kernel<0>>(), full_grid<moment_philox_tuned_kernel<2>>(),
                   full_grid<moment_philox_tuned_kernel<8>>(), full_grid<moment_philox_tuned_kernel<32>>(),
                   full_grid<moment_xoshiro_kernel<0>>(), full_grid<moment_xoshiro_kernel<2>>(), full_grid<moment_xoshiro_kernel<8>>(),
                   full_grid<moment_xoshiro_kernel<32>>()});
}

// The lessons' dimensions get kernels unrolled for them; any other N takes the generic one.
void launch_moment_philox(int dims, std::size_t points, scratch s, double* result) {
  switch (dims) {
  case 2: moment_philox<2>(dims, points, s, result); break;
  case 8: moment_philox<8>(dims, points, s, result); break;
  case 32: moment_philox<32>(dims, points, s, result); break;
  default: moment_philox<0>(dims, points, s, result); break;
  }
}

void launch_moment_points(const float* pts, int dims, std::size_t points, scratch s, double* result) {
  switch (dims) {
  case 8: moment_points<8>(pts, dims, points, s, result); break;
  case 32: moment_points<32>(pts, dims, points, s, result); break;
  default: moment_points<0>(pts, dims, points, s, result); break;
  }
}

void launch_pi_philox(std::size_t samples, scratch s, unsigned long long* hits) {
  pi_philox_kernel<<<grid_for<pi_philox_kernel>((samples + 1) / 2), block_size>>>(
      samples, static_cast<unsigned long long*>(s.partials), s.counter, hits);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

void launch_pi_points(const float* xy, std::size_t samples, scratch s, unsigned long long* hits) {
  pi_points_kernel<<<grid_for<pi_points_kernel>(samples), block_size>>>(
      reinterpret_cast<const float2*>(xy), samples, static_cast<unsigned long long*>(s.partials), s.counter, hits);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

// The tuned kernels are unrolled for the lessons' dimensions; any other N takes the generic one.
void launch_moment_philox_tuned(int dims, std::size_t points, scratch s, double* result) {
  switch (dims) {
  case 2: moment_philox_tuned<2>(dims, points, s, result); break;
  case 8: moment_philox_tuned<8>(dims, points, s, result); break;
  case 32: moment_philox_tuned<32>(dims, points, s, result); break;
  default: moment_philox_tuned<0>(dims, points, s, result); break;
  }
}

void launch_moment_xoshiro(int dims, std::size_t points, scratch s, double* result) {
  switch (dims) {
  case 2: moment_xoshiro<2>(dims, points, s, result); break;
  case 8: moment_xoshiro<8>(dims, points, s, result); break;
  case 32: moment_xoshiro<32>(dims, points, s, result); break;
  default: moment_xoshiro<0>(dims, points, s, result); break;
  }
}

void launch_pi_philox_tuned(std::size_t samples, scratch s, unsigned long long* hits) {
  pi_philox_tuned_kernel<<<grid_for<pi_philox_tuned_kernel>(samples / 2 + 1), block_size>>>(
      samples, static_cast<unsigned long long*>(s.partials), s.counter, hits);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

void launch_pi_xoshiro(std::size_t samples, scratch s, unsigned long long* hits) {
  pi_xoshiro_kernel<<<full_grid<pi_xoshiro_kernel>(), block_size>>>(
      samples, static_cast<unsigned long long*>(s.partials), s.counter, hits);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

} // namespace speedlab::plugins::montecarlo
