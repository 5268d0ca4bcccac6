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

} // namespace speedlab::plugins::mandelbrot::detail

namespace speedlab::plugins::mandelbrot {

struct gpu_mandelbrot::impl {
  int size, iterations;
  cuda::device_buffer<int> image;
};

gpu_mandelbrot::gpu_mandelbrot(int device, int size, int iterations) {
  SPEEDLAB_CUDA_CHECK(cudaSetDevice(device));
  m_impl = std::make_unique<impl>(impl{size, iterations, cuda::device_buffer<int>(std::size_t(size) * size)});
}

gpu_mandelbrot::~gpu_mandelbrot() = default;

void gpu_mandelbrot::upload(const std::int32_t* image) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_impl->image.get(), image, m_impl->image.bytes(), cudaMemcpyHostToDevice));
}

void gpu_mandelbrot::render() {
  detail::launch<detail::tuned_block_x, detail::tuned_block_y>(m_impl->image.get(), m_impl->size, m_impl->iterations,
                                                               0);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
  SPEEDLAB_CUDA_CHECK(cudaStreamSynchronize(0));
}

void gpu_mandelbrot::download(std::int32_t* image) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(image, m_impl->image.get(), m_impl->image.bytes(), cudaMemcpyDeviceToHost));
}

} // namespace speedlab::plugins::mandelbrot
