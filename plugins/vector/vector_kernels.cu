// Lesson 1 kernels: the lessons' one-thread-per-element kernel and a tuned streaming one.
#include <algorithm>

#include <speedlab/cuda.hpp>
#include "vector_kernels.hpp"

namespace speedlab::plugins::vector {
namespace {

constexpr int block_size = 256;
constexpr int unroll = 4; // float4 loads per input in flight per thread

template <op_kind Op>
__device__ __forceinline__ float apply(float x, float y) {
  if constexpr (Op == op_kind::add) return x + y;
  else return x * y;
}

template <op_kind Op>
__device__ __forceinline__ float4 apply4(float4 x, float4 y) {
  return make_float4(apply<Op>(x.x, y.x), apply<Op>(x.y, y.y), apply<Op>(x.z, y.z), apply<Op>(x.w, y.w));
}

template <op_kind Op>
__global__ void naive_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                             std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = apply<Op>(a[i], b[i]);
}

template <op_kind Op>
__global__ void __launch_bounds__(block_size)
    tuned_kernel(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c,
                 std::size_t n4, const float* __restrict__ a_tail, const float* __restrict__ b_tail,
                 float* __restrict__ c_tail, unsigned tail) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t i = tid;
  // All loads of a group are issued before the first store: unroll x 32 bytes in flight.
  for (; i + (unroll - 1) * stride < n4; i += unroll * stride) {
    float4 x[unroll], y[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) {
      x[u] = a[i + u * stride];
      y[u] = b[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < unroll; ++u) c[i + u * stride] = apply4<Op>(x[u], y[u]);
  }
  for (; i < n4; i += stride) c[i] = apply4<Op>(a[i], b[i]);
  if (tid < tail) c_tail[tid] = apply<Op>(a_tail[tid], b_tail[tid]);
}

// One full device of Kernel at this file's block size (cached per device).
template <auto Kernel>
unsigned full_grid() {
  return speedlab::cuda::full_grid<Kernel, block_size>();
}

template <op_kind Op>
void tuned(const float* a, const float* b, float* c, std::size_t n) {
  const std::size_t n4 = n / 4;
  const auto tail = static_cast<unsigned>(n - 4 * n4);
  const unsigned max_blocks = full_grid<tuned_kernel<Op>>();
  const std::size_t wanted = (std::max<std::size_t>(n4, tail) + block_size - 1) / block_size;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(wanted, 1), max_blocks));
  // cudaMalloc'd buffers are 256-byte aligned, so the float4 views are aligned.
  tuned_kernel<Op><<<blocks, block_size>>>(reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b),
                                           reinterpret_cast<float4*>(c), n4, a + 4 * n4, b + 4 * n4, c + 4 * n4,
                                           tail);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

} // namespace

void launch_naive(op_kind op, const float* a, const float* b, float* c, std::size_t n) {
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>((n + block_size - 1) / block_size);
  if (op == op_kind::add) naive_kernel<op_kind::add><<<blocks, block_size>>>(a, b, c, n);
  else naive_kernel<op_kind::mul><<<blocks, block_size>>>(a, b, c, n);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

void launch_tuned(op_kind op, const float* a, const float* b, float* c, std::size_t n) {
  if (n == 0) return;
  if (op == op_kind::add) tuned<op_kind::add>(a, b, c, n);
  else tuned<op_kind::mul>(a, b, c, n);
}

} // namespace speedlab::plugins::vector
