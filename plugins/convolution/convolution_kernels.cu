// Lesson 6 kernels: naive (every tap from global memory) vs tiled (image tile with its halo
// in shared memory, mask in constant memory, each thread computing 8 (4 for masks above 19)
// outputs of one column so every shared-memory value it loads feeds up to 8 FMAs).
#include <cstddef>
#include <stdexcept>
#include <string>

#include "convolution_cuda.hpp"
#include <speedlab/cuda.hpp>

namespace speedlab::plugins::convolution::detail {

inline constexpr int max_mask = 31;
__constant__ float c_mask[max_mask * max_mask];

__global__ void naive_kernel(const float* __restrict__ in, const float* __restrict__ mask, float* __restrict__ out,
                             int size, int m) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= size || y >= size) return;
  const int h = m / 2;
  float acc = 0.0f;
  for (int i = 0; i < m; ++i) {
    const int yy = y + i - h;
    if (yy < 0 || yy >= size) continue;
    for (int j = 0; j < m; ++j) {
      const int xx = x + j - h;
      if (xx >= 0 && xx < size) acc += in[std::size_t(yy) * size + xx] * mask[i * m + j];
    }
  }
  out[std::size_t(y) * size + x] = acc;
}

inline constexpr int tile_w = 32;    // output columns per block = threads in x (one warp)
inline constexpr int block_rows = 8; // threads in y
inline constexpr int block_threads = tile_w * block_rows;
// Outputs per thread: 8 while the fully unrolled body stays within nvcc's unroll limit.
constexpr int outputs_per_thread(int m) { return m <= 19 ? 8 : 4; }
// Blocks per SM the register budget must allow (4: <= 64 registers, 3: <= 80) without
// spilling; more resident warps hide the shared-memory latency better.
constexpr int min_blocks_per_sm(int m) { return m <= 13 ? 4 : m <= 15 ? 3 : 2; }

// Output tile: 32 columns x (8 * R) rows. The mask width M is a template parameter so the
// loops unroll and every mask tap is an FMA operand straight from constant memory.
template <int M, int R, int MIN_BLOCKS>
__global__ void __launch_bounds__(block_threads, MIN_BLOCKS)
    tiled_kernel(const float* __restrict__ in, float* __restrict__ out, int size) {
  constexpr int half = M / 2;
  constexpr int tile_h = block_rows * R;
  constexpr int smem_w = tile_w + M - 1, smem_h = tile_h + M - 1;
  __shared__ float tile[smem_h][smem_w];

  const int x0 = blockIdx.x * tile_w - half, y0 = blockIdx.y * tile_h - half;
  for (int k = threadIdx.y * tile_w + threadIdx.x; k < smem_h * smem_w; k += block_threads) {
    const int r = k / smem_w, c = k % smem_w;
    const int gy = y0 + r, gx = x0 + c;
    tile[r][c] = (gy >= 0 && gy < size && gx >= 0 && gx < size) ? __ldg(in + std::size_t(gy) * size + gx) : 0.0f;
  }
  __syncthreads();

  // Thread (tx, ty) computes rows ty*R .. ty*R+R-1 of column tx. Input row k of its window
  // contributes to output o through mask row k - o; summation order is mask row-major.
  const int tx = threadIdx.x, row0 = threadIdx.y * R;
  float acc[R];
#pragma unroll
  for (int o = 0; o < R; ++o) acc[o] = 0.0f;
#pragma unroll
  for (int k = 0; k < R + M - 1; ++k) {
    float v[M];
    // Keeps the compiler from hoisting every row's loads to the top (hundreds of live
    // registers and spills); one row of the window is live at a time.
    asm volatile("" ::: "memory");
#pragma unroll
    for (int j = 0; j < M; ++j) v[j] = tile[row0 + k][tx + j];
#pragma unroll
    for (int o = 0; o < R; ++o) {
      const int i = k - o;
      if (i >= 0 && i < M) {
#pragma unroll
        for (int j = 0; j < M; ++j) acc[o] = fmaf(v[j], c_mask[i * M + j], acc[o]);
      }
    }
  }
  const int x = blockIdx.x * tile_w + tx;
  if (x >= size) return;
#pragma unroll
  for (int o = 0; o < R; ++o) {
    const int y = blockIdx.y * tile_h + row0 + o;
    if (y < size) out[std::size_t(y) * size + x] = acc[o];
  }
}

using tiled_launcher = void (*)(const float*, float*, int, cudaStream_t);

template <int M, int R = outputs_per_thread(M), int MIN_BLOCKS = min_blocks_per_sm(M)>
void launch_tiled(const float* in, float* out, int size, cudaStream_t stream) {
  const dim3 block(tile_w, block_rows);
  const dim3 grid((size + tile_w - 1) / tile_w, (size + block_rows * R - 1) / (block_rows * R));
  tiled_kernel<M, R, MIN_BLOCKS><<<grid, block, 0, stream>>>(in, out, size);
}

inline tiled_launcher tiled_for(int m) {
  switch (m) {
  case 1:
    return launch_tiled<1>;
  case 3:
    return launch_tiled<3>;
  case 5:
    return launch_tiled<5>;
  case 7:
    return launch_tiled<7>;
  case 9:
    return launch_tiled<9>;
  case 11:
    return launch_tiled<11>;
  case 13:
    return launch_tiled<13>;
  case 15:
    return launch_tiled<15>;
  case 17:
    return launch_tiled<17>;
  case 19:
    return launch_tiled<19>;
  case 21:
    return launch_tiled<21>;
  case 23:
    return launch_tiled<23>;
  case 25:
    return launch_tiled<25>;
  case 27:
    return launch_tiled<27>;
  case 29:
    return launch_tiled<29>;
  case 31:
    return launch_tiled<31>;
  default:
    throw std::invalid_argument("convolution: mask must be odd and at most " + std::to_string(max_mask));
  }
}

inline void launch_naive(const float* in, const float* mask, float* out, int size, int m, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((size + 15) / 16, (size + 15) / 16);
  naive_kernel<<<grid, block, 0, stream>>>(in, mask, out, size, m);
}

} // namespace speedlab::plugins::convolution::detail

namespace speedlab::plugins::convolution {

struct gpu_convolution::impl {
  int size, mask;
  gpu_kernel kernel;
  detail::tiled_launcher tiled;
  cuda::device_buffer<float> in, out, weights;
};

gpu_convolution::gpu_convolution(int device, int size, int mask, gpu_kernel kernel) {
  SPEEDLAB_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t pixels = std::size_t(size) * size;
  m_impl = std::make_unique<impl>(impl{size, mask, kernel, detail::tiled_for(mask), cuda::device_buffer<float>(pixels),
                                       cuda::device_buffer<float>(pixels),
                                       cuda::device_buffer<float>(kernel == gpu_kernel::naive ? mask * mask : 0)});
}

gpu_convolution::~gpu_convolution() = default;

void gpu_convolution::upload(const float* image, const float* mask) {
  auto& s = *m_impl;
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(s.in.get(), image, s.in.bytes(), cudaMemcpyHostToDevice));
  const std::size_t mask_bytes = std::size_t(s.mask) * s.mask * sizeof(float);
  if (s.kernel == gpu_kernel::naive)
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(s.weights.get(), mask, mask_bytes, cudaMemcpyHostToDevice));
  else
    SPEEDLAB_CUDA_CHECK(cudaMemcpyToSymbol(detail::c_mask, mask, mask_bytes));
}

void gpu_convolution::convolve() {
  auto& s = *m_impl;
  if (s.kernel == gpu_kernel::naive)
    detail::launch_naive(s.in.get(), s.weights.get(), s.out.get(), s.size, s.mask, 0);
  else
    s.tiled(s.in.get(), s.out.get(), s.size, 0);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
  SPEEDLAB_CUDA_CHECK(cudaStreamSynchronize(0));
}

void gpu_convolution::download(float* out) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(out, m_impl->out.get(), m_impl->out.bytes(), cudaMemcpyDeviceToHost));
}

} // namespace speedlab::plugins::convolution
