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
                   full_grid<pi_points_kernel>()});
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

} // namespace speedlab::plugins::montecarlo
