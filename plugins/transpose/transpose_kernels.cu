// Lesson 7 kernels. Both use 32x32 tiles and blocks of 32 x ROWS threads (32 / ROWS
// elements per thread); n need not be a multiple of 32.
#include <cstddef>

#include <speedlab/cuda.hpp>
#include "transpose_cuda.hpp"

namespace speedlab::plugins::transpose::detail {

inline constexpr int tile = 32;
inline constexpr int tuned_rows = 8;

template <int ROWS>
__global__ void __launch_bounds__(32 * ROWS) naive_kernel(const int* __restrict__ in, int* __restrict__ out, int n) {
  const int x = blockIdx.x * tile + threadIdx.x;
  const int y = blockIdx.y * tile + threadIdx.y;
  if (x >= n) return;
#pragma unroll
  for (int k = 0; k < tile; k += ROWS)
    if (y + k < n) out[std::size_t(x) * n + (y + k)] = in[std::size_t(y + k) * n + x];
}

// Read a tile row-wise (coalesced), write it column-wise from shared memory (coalesced).
// The 33rd column shifts each row by one bank, so reading a tile column is conflict-free.
template <int ROWS>
__global__ void __launch_bounds__(32 * ROWS) tiled_kernel(const int* __restrict__ in, int* __restrict__ out, int n) {
  __shared__ int t[tile][tile + 1];
  int x = blockIdx.x * tile + threadIdx.x;
  int y = blockIdx.y * tile + threadIdx.y;
  if (x < n) {
#pragma unroll
    for (int k = 0; k < tile; k += ROWS)
      if (y + k < n) t[threadIdx.y + k][threadIdx.x] = in[std::size_t(y + k) * n + x];
  }
  __syncthreads();
  x = blockIdx.y * tile + threadIdx.x;
  y = blockIdx.x * tile + threadIdx.y;
  if (x < n) {
#pragma unroll
    for (int k = 0; k < tile; k += ROWS)
      if (y + k < n) out[std::size_t(y + k) * n + x] = t[threadIdx.x][threadIdx.y + k];
  }
}

template <int ROWS>
void launch(gpu_kernel kernel, const int* in, int* out, int n, cudaStream_t stream) {
  const dim3 block(tile, ROWS);
  const dim3 grid((n + tile - 1) / tile, (n + tile - 1) / tile);
  if (kernel == gpu_kernel::naive)
    naive_kernel<ROWS><<<grid, block, 0, stream>>>(in, out, n);
  else
    tiled_kernel<ROWS><<<grid, block, 0, stream>>>(in, out, n);
}

} // namespace speedlab::plugins::transpose::detail

namespace speedlab::plugins::transpose {

struct gpu_transpose::impl {
  int n;
  cuda::device_buffer<int> in, out;
};

gpu_transpose::gpu_transpose(int device, int n) {
  SPEEDLAB_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t count = std::size_t(n) * n;
  m_impl = std::make_unique<impl>(impl{n, cuda::device_buffer<int>(count), cuda::device_buffer<int>(count)});
}

gpu_transpose::~gpu_transpose() = default;

void gpu_transpose::upload(const std::int32_t* in) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_impl->in.get(), in, m_impl->in.bytes(), cudaMemcpyHostToDevice));
}

void gpu_transpose::transpose(gpu_kernel kernel) {
  detail::launch<detail::tuned_rows>(kernel, m_impl->in.get(), m_impl->out.get(), m_impl->n, 0);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
  SPEEDLAB_CUDA_CHECK(cudaStreamSynchronize(0));
}

void gpu_transpose::download(std::int32_t* out) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(out, m_impl->out.get(), m_impl->out.bytes(), cudaMemcpyDeviceToHost));
}

} // namespace speedlab::plugins::transpose
