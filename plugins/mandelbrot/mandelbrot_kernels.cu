// Lesson 8 kernel: one thread per pixel, 2-D thread blocks. An 8 x 8 block (each warp an
// 8 x 4 patch) keeps neighbouring pixels, whose iteration counts are alike, in one warp,
// so few lanes idle while the slowest pixel of the warp iterates.
#include <cstddef>

#include <speedlab/cuda.hpp>
#include "mandelbrot_cuda.hpp"
#include "mandelbrot_problem.hpp"

namespace speedlab::plugins::mandelbrot::detail {

inline constexpr int tuned_block_x = 8;
inline constexpr int tuned_block_y = 8;

// The tuned kernel's shape, chosen on the H100 (scripts/bench/kernels_bench.cu, issue 14):
// 16 x 16 blocks (each warp a 16 x 2 patch), the escape test every 16 iterations after the
// first 8 one at a time.
inline constexpr int fast_block_x = 16, fast_block_y = 16, fast_block_iterations = 16, fast_first_iterations = 8;

template <int BX, int BY>
__global__ void mandelbrot_kernel(int* __restrict__ image, int size, int iterations) {
  const int col = blockIdx.x * BX + threadIdx.x;
  const int row = blockIdx.y * BY + threadIdx.y;
  if (col >= size || row >= size) return;
  image[std::size_t(row) * size + col] = escape_count(coordinate(col, size), coordinate(row, size), iterations);
}

template <int BX, int BY>
void launch(int* image, int size, int iterations, cudaStream_t stream) {
  const dim3 block(BX, BY);
  const dim3 grid((size + BX - 1) / BX, (size + BY - 1) / BY);
  mandelbrot_kernel<BX, BY><<<grid, block, 0, stream>>>(image, size, iterations);
}

// ---- Tuned kernel (issue 14) --------------------------------------------------------------
// The same escape counts as escape_count() with fewer FP64 instructions per iteration (the
// kernel is bound by the FP64 pipe):
// - 2*x*y + cy as fma(x*y, 2, cy): doubling is exact, so fl(2 fl(x y) + cy) is what the plain
//   code computes (fl(2x) y = 2 fl(x y)), in 2 instructions instead of 3;
// - the escape test (an add and a compare) once per K iterations: when |z|^2 >= 4 (or NaN,
//   after an overflow) at the end of a block of K, the pixel goes back to the block's start
//   and repeats it one iteration at a time with the test after each, so the count is the
//   first escaping iteration exactly as before. Once |z| >= 2 with |c| < 2 (a pixel with
//   |c| >= 2 escapes at iteration 0) |z| keeps growing, so an escape inside a block is
//   still seen at its end (in exact arithmetic; scripts/bench/kernels_bench.cu compares every
//   count with the lesson kernel's, equal at every size tried). 6 FP64 instructions per iteration plus 2 per block, not 9;
// - the first P iterations one at a time (the pixels outside |c| < 2, a fifth of the image,
//   and the others that escape at once would otherwise pay a whole block and its repeat).
// The lanes that leave the block loop early wait at its end, so a warp makes one pass of
// the per-iteration loop, whatever the iterations at which its lanes escape.
__device__ __forceinline__ void iterate(double& x, double& y, double& x2, double& y2, double cx, double cy) {
  y = __fma_rn(__dmul_rn(x, y), 2.0, cy);
  x = __dadd_rn(__dsub_rn(x2, y2), cx);
  x2 = __dmul_rn(x, x);
  y2 = __dmul_rn(y, y);
}

template <int K, int P>
__device__ __forceinline__ int escape_count_blocked(double cx, double cy, int max_iterations) {
  double x = 0, y = 0, x2 = 0, y2 = 0;
  int i = 0;
  for (const int first = P < max_iterations ? P : max_iterations; i < first; ++i) {
    iterate(x, y, x2, y2, cx, cy);
    if (x2 + y2 >= 4.0) return i;
  }
  if constexpr (K > 1) {
    for (; i + K <= max_iterations; i += K) {
      const double sx = x, sy = y;
#pragma unroll
      for (int k = 0; k < K; ++k) iterate(x, y, x2, y2, cx, cy);
      if (!(x2 + y2 < 4.0)) { // escaped in this block (or overflowed to inf/NaN): redo it
        x = sx;
        y = sy;
        x2 = sx * sx;
        y2 = sy * sy;
        break;
      }
    }
  }
  for (; i < max_iterations; ++i) {
    iterate(x, y, x2, y2, cx, cy);
    if (x2 + y2 >= 4.0) return i;
  }
  return max_iterations;
}

// Skip: the algorithmic shortcut of variant cuda-cardioid (not kernel tuning): pixels strictly
// inside the main cardioid or the period-2 bulb are members without iterating.
template <int BX, int BY, int K, int P, bool Skip = false>
__global__ void __launch_bounds__(BX * BY) mandelbrot_tuned_kernel(int* __restrict__ image, int size, int iterations) {
  const int col = blockIdx.x * BX + threadIdx.x;
  const int row = blockIdx.y * BY + threadIdx.y;
  if (col >= size || row >= size) return;
  const double cx = coordinate(col, size), cy = coordinate(row, size);
  image[std::size_t(row) * size + col] =
      Skip && in_cardioid_or_bulb(cx, cy) ? iterations : escape_count_blocked<K, P>(cx, cy, iterations);
}

template <int BX, int BY, int K, int P, bool Skip = false>
void launch_tuned(int* image, int size, int iterations, cudaStream_t stream) {
  const dim3 block(BX, BY);
  const dim3 grid((size + BX - 1) / BX, (size + BY - 1) / BY);
  mandelbrot_tuned_kernel<BX, BY, K, P, Skip><<<grid, block, 0, stream>>>(image, size, iterations);
}

} // namespace speedlab::plugins::mandelbrot::detail

namespace speedlab::plugins::mandelbrot {

struct gpu_mandelbrot::impl {
  int size, iterations;
  mandelbrot_kernel kernel;
  cuda::device_buffer<int> image;
};

gpu_mandelbrot::gpu_mandelbrot(int device, int size, int iterations, mandelbrot_kernel kernel) {
  SPEEDLAB_CUDA_CHECK(cudaSetDevice(device));
  m_impl = std::make_unique<impl>(impl{size, iterations, kernel, cuda::device_buffer<int>(std::size_t(size) * size)});
}

gpu_mandelbrot::~gpu_mandelbrot() = default;

void gpu_mandelbrot::upload(const std::int32_t* image) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_impl->image.get(), image, m_impl->image.bytes(), cudaMemcpyHostToDevice));
}

void gpu_mandelbrot::render() {
  using namespace detail;
  int* image = m_impl->image.get();
  const int size = m_impl->size, iterations = m_impl->iterations;
  switch (m_impl->kernel) {
  case mandelbrot_kernel::lesson: launch<tuned_block_x, tuned_block_y>(image, size, iterations, 0); break;
  case mandelbrot_kernel::tuned:
    launch_tuned<fast_block_x, fast_block_y, fast_block_iterations, fast_first_iterations>(image, size, iterations, 0);
    break;
  case mandelbrot_kernel::cardioid:
    launch_tuned<fast_block_x, fast_block_y, fast_block_iterations, fast_first_iterations, true>(image, size,
                                                                                                 iterations, 0);
    break;
  }
  SPEEDLAB_CUDA_CHECK_LAUNCH();
  SPEEDLAB_CUDA_CHECK(cudaStreamSynchronize(0));
}

void gpu_mandelbrot::download(std::int32_t* image) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(image, m_impl->image.get(), m_impl->image.bytes(), cudaMemcpyDeviceToHost));
}

} // namespace speedlab::plugins::mandelbrot
