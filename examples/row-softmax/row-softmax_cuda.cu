// row-softmax on the GPU: a naive kernel (one thread per row: each thread walks its row, so
// a warp's loads are cols floats apart and never coalesce; few threads when rows are few)
// and an optimized one (one block of 256 threads per row: coalesced loads, max and sum by
// warp shuffles and a shared-memory step). Both device-resident: the inputs go over once in
// setup, the output comes back in validate (untimed).
#include <cfloat>
#include <cstddef>
#include <vector>

#include <speedlab/cuda.hpp>

#include "row-softmax_cuda.hpp"

namespace {

__global__ void softmax_naive(const float* x, float* y, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + static_cast<std::size_t>(r) * cols;
  float* yr = y + static_cast<std::size_t>(r) * cols;
  float max = xr[0];
  for (int c = 1; c < cols; ++c) max = fmaxf(max, xr[c]);
  float sum = 0;
  for (int c = 0; c < cols; ++c) {
    yr[c] = __expf(xr[c] - max);
    sum += yr[c];
  }
  const float inv = 1.0f / sum;
  for (int c = 0; c < cols; ++c) yr[c] *= inv;
}

constexpr int block_threads = 256;

// Every thread gets op over the block's values; identity fills the lanes past the warps.
template <class Op>
__device__ float block_reduce(float v, Op op, float identity, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < block_threads / 32 ? shared[lane] : identity;
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads(); // shared is reused by the next reduction
  return v;
}

struct max_op {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
  __device__ float operator()(float a, float b) const { return a + b; }
};

__global__ void __launch_bounds__(block_threads) softmax_block(const float* x, float* y, int cols) {
  __shared__ float shared[block_threads / 32];
  const float* xr = x + static_cast<std::size_t>(blockIdx.x) * cols;
  float* yr = y + static_cast<std::size_t>(blockIdx.x) * cols;
  float max = -FLT_MAX;
  for (int c = threadIdx.x; c < cols; c += block_threads) max = fmaxf(max, xr[c]);
  max = block_reduce(max, max_op{}, -FLT_MAX, shared);
  float sum = 0;
  for (int c = threadIdx.x; c < cols; c += block_threads) sum += __expf(xr[c] - max);
  sum = block_reduce(sum, sum_op{}, 0.0f, shared);
  const float inv = 1.0f / sum;
  for (int c = threadIdx.x; c < cols; c += block_threads) yr[c] = __expf(xr[c] - max) * inv;
}

enum class kernel { naive, block };

template <kernel K>
class cuda_run final : public speedlab::variant_run {
public:
  explicit cuda_run(const speedlab::point& p)
      : m_rows(static_cast<int>(p.get_int("rows"))), m_cols(static_cast<int>(p.get_int("cols"))) {}

  void setup() override {
    m_x_host = row_softmax_input(m_rows, m_cols);
    m_x = speedlab::cuda::device_buffer<float>(m_x_host.size());
    m_y = speedlab::cuda::device_buffer<float>(m_x_host.size());
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_x.get(), m_x_host.data(), m_x.bytes(), cudaMemcpyHostToDevice));
  }

  void compute() override {
    if (K == kernel::naive) {
      const int block = 128;
      softmax_naive<<<(m_rows + block - 1) / block, block>>>(m_x.get(), m_y.get(), m_rows, m_cols);
    } else {
      softmax_block<<<m_rows, block_threads>>>(m_x.get(), m_y.get(), m_cols);
    }
    SPEEDLAB_CUDA_CHECK_LAUNCH();
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  speedlab::validation validate() override {
    std::vector<float> y(m_x_host.size());
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(y.data(), m_y.get(), m_y.bytes(), cudaMemcpyDeviceToHost));
    return row_softmax_check(m_x_host, y, m_rows, m_cols);
  }

private:
  int m_rows, m_cols;
  std::vector<float> m_x_host;
  speedlab::cuda::device_buffer<float> m_x, m_y;
};

} // namespace

std::vector<speedlab::variant_spec> row_softmax_cuda_variants() {
  std::vector<speedlab::variant_spec> v;
  v.push_back(speedlab::cuda::variant<cuda_run<kernel::naive>>(
      "cuda-naive", "one thread per row, three passes over its row (uncoalesced)"));
  v.push_back(speedlab::cuda::variant<cuda_run<kernel::block>>(
      "cuda", "one 256-thread block per row, coalesced, warp-shuffle max and sum"));
  return v;
}
