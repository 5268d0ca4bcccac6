// Lesson 2 kernels: a one-pass tree reduction (grid-stride, warp shuffles, shared memory,
// last block finishes) and the lessons' global-atomics version.
#include <algorithm>

#include <speedlab/cuda.hpp>
#include "reduction_kernels.hpp"

namespace speedlab::plugins::reduction {
namespace {

constexpr int block_size = 256;
constexpr int warps = block_size / 32;
constexpr int unroll = 4; // float4 loads per input in flight per thread

template <op_kind Op>
__device__ __forceinline__ double term(float x, float y) {
  if constexpr (Op == op_kind::mean) return static_cast<double>(x);
  else return static_cast<double>(x) * static_cast<double>(y); // exact in double
}

template <op_kind Op>
__device__ __forceinline__ double term4(float4 x, float4 y) {
  return (term<Op>(x.x, y.x) + term<Op>(x.y, y.y)) + (term<Op>(x.z, y.z) + term<Op>(x.w, y.w));
}

// Sum over the block; the result is valid in thread 0.
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[warps];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < warps ? warp_sums[threadIdx.x] : 0.0;
  if (warp == 0)
#pragma unroll
    for (int offset = warps / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <op_kind Op>
__global__ void __launch_bounds__(block_size)
    tree_kernel(const float* __restrict__ a, const float* __restrict__ b, std::size_t n, double scale,
                double* __restrict__ partials, unsigned* __restrict__ counter, double* __restrict__ result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t n4 = n / 4;
  const auto* a4 = reinterpret_cast<const float4*>(a);
  const auto* b4 = reinterpret_cast<const float4*>(b);
  double acc = 0;
  std::size_t i = tid;
  for (; i + (unroll - 1) * stride < n4; i += unroll * stride) {
    float4 x[unroll], y[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      x[u] = a4[i + u * stride];
      if constexpr (Op == op_kind::dot) y[u] = b4[i + u * stride];
      else y[u] = x[u];
    }
#pragma unroll
    for (int u = 0; u < unroll; ++u) acc += term4<Op>(x[u], y[u]);
  }
  for (; i < n4; i += stride) acc += term4<Op>(a4[i], Op == op_kind::dot ? b4[i] : a4[i]);
  if (tid < n - 4 * n4) {
    const std::size_t j = 4 * n4 + tid;
    acc += term<Op>(a[j], Op == op_kind::dot ? b[j] : a[j]);
  }

  // Block partial, then a ticket: the block that takes the last one sums all partials.
  const double block = block_sum(acc);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block;
    __threadfence(); // the partial is visible device-wide before the ticket is taken
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  double total = 0;
  for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) total += __ldcg(partials + k);
  total = block_sum(total);
  if (threadIdx.x == 0) {
    *result = total * scale;
    *counter = 0; // ready for the next launch
  }
}

template <op_kind Op>
__global__ void atomic_kernel(const float* __restrict__ a, const float* __restrict__ b, std::size_t n,
                              double* sum) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, term<Op>(a[i], Op == op_kind::dot ? b[i] : 0.0f));
}

__global__ void scale_kernel(const double* sum, double scale, double* result) { *result = *sum * scale; }

// One full device of Kernel at this file's block size (cached per device).
template <auto Kernel>
unsigned full_grid() {
  return speedlab::cuda::full_grid<Kernel, block_size>();
}

template <op_kind Op>
void tree(const float* a, const float* b, std::size_t n, double scale, tree_scratch s) {
  const std::size_t wanted = (std::max<std::size_t>(n / 4, 1) + block_size - 1) / block_size;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(wanted, full_grid<tree_kernel<Op>>()));
  tree_kernel<Op><<<blocks, block_size>>>(a, b, n, scale, s.partials, s.counter, s.result);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

} // namespace

std::size_t tree_max_blocks() {
  return std::max(full_grid<tree_kernel<op_kind::mean>>(), full_grid<tree_kernel<op_kind::dot>>());
}

void launch_tree(op_kind op, const float* a, const float* b, std::size_t n, double scale, tree_scratch s) {
  if (op == op_kind::mean) tree<op_kind::mean>(a, b, n, scale, s);
  else tree<op_kind::dot>(a, b, n, scale, s);
}

void launch_atomic(op_kind op, const float* a, const float* b, std::size_t n, double scale, double* sum,
                   double* result) {
  SPEEDLAB_CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(double)));
  if (n > 0) {
    const auto blocks = static_cast<unsigned>((n + block_size - 1) / block_size);
    if (op == op_kind::mean) atomic_kernel<op_kind::mean><<<blocks, block_size>>>(a, b, n, sum);
    else atomic_kernel<op_kind::dot><<<blocks, block_size>>>(a, b, n, sum);
    SPEEDLAB_CUDA_CHECK_LAUNCH();
  }
  scale_kernel<<<1, 1>>>(sum, scale, result);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

} // namespace speedlab::plugins::reduction
