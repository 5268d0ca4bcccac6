// The template's CUDA variant: device-resident x and y, one thread per element. A .cu file
// is C++17 (speedlab_add_plugin sets it): no designated initializers here.
#include <cstddef>
#include <string>
#include <vector>

#include <speedlab/cuda.hpp>

#include "template_cuda.hpp"

namespace template_plugin {
namespace {

__global__ void saxpy_kernel(std::size_t n, float alpha, const float* x, float* y) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

class saxpy_cuda final : public speedlab::variant_run {
public:
  explicit saxpy_cuda(const speedlab::point& p) : m_n(static_cast<std::size_t>(p.get_int("n"))) {}

  // Untimed: allocate and fill the device buffers once.
  void setup() override {
    std::vector<float> x(m_n), y(m_n, 1.0f);
    for (std::size_t i = 0; i < m_n; ++i) x[i] = x_at(i);
    m_x = speedlab::cuda::device_buffer<float>(m_n);
    m_y = speedlab::cuda::device_buffer<float>(m_n);
    m_y0 = speedlab::cuda::device_buffer<float>(m_n);
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_x.get(), x.data(), m_x.bytes(), cudaMemcpyHostToDevice));
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_y0.get(), y.data(), m_y0.bytes(), cudaMemcpyHostToDevice));
  }

  // Timed: reset y on the device (the same work every repetition), launch, wait.
  void compute() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpyAsync(m_y.get(), m_y0.get(), m_y.bytes(), cudaMemcpyDeviceToDevice));
    const unsigned block = 256;
    const unsigned grid = static_cast<unsigned>((m_n + block - 1) / block);
    saxpy_kernel<<<grid, block>>>(m_n, a, m_x.get(), m_y.get());
    SPEEDLAB_CUDA_CHECK_LAUNCH();
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize()); // a phase returns when its work is done
  }

  // Untimed, outside the split: copy y back and check it.
  speedlab::validation validate() override {
    std::vector<float> y(m_n);
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(y.data(), m_y.get(), m_y.bytes(), cudaMemcpyDeviceToHost));
    return check_saxpy(y);
  }

private:
  std::size_t m_n;
  speedlab::cuda::device_buffer<float> m_x, m_y, m_y0;
};

} // namespace

speedlab::variant_spec saxpy_cuda_variant() {
  return speedlab::cuda::variant<saxpy_cuda>("cuda", "device-resident x and y, one thread per element");
}

} // namespace template_plugin
