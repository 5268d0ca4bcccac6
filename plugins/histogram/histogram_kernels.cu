// Lesson 5 kernels: global atomics (the lesson's first version), privatized bins in shared
// memory (the tuned version) and a deliberately racy one. Only plain C++ crosses to the
// .cpp side (histogram_cuda.hpp).
//
// Every kernel adds into `counts` (zeroed before) and block 0 zeroes `next_counts`, the
// other half of a double buffer that the following launch adds into: a repetition is one
// kernel, with no memset before it.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <speedlab/cuda.hpp>
#include "histogram_cuda.hpp"
#include "histogram_problem.hpp"

namespace speedlab::plugins::histogram::detail {

// Up to this many bins each thread of a 1024-thread block owns a column of counters in
// shared memory (11 * 1024 * 4 bytes fit the 48 KiB a block gets without opting in).
inline constexpr int column_bins = 11;
inline constexpr int column_block = 1024;
inline constexpr int column_unroll = 2;
inline constexpr int column_blocks_per_sm = 2;
// Above that, per-warp copies of the histogram in this much shared memory per block.
inline constexpr int copies_block = 256;
inline constexpr int copies_unroll = 4;
inline constexpr int shared_budget_bytes = 32 * 1024;
inline constexpr int max_bins = shared_budget_bytes / 4;

__device__ __forceinline__ void zero_next(unsigned* next_counts, int bins) {
  if (blockIdx.x == 0)
    for (int b = threadIdx.x; b < bins; b += blockDim.x) next_counts[b] = 0;
}

__global__ void global_atomics_kernel(const float* __restrict__ x, std::size_t n, unsigned* __restrict__ counts,
                                      unsigned* __restrict__ next_counts, int bins, float scale) {
  zero_next(next_counts, bins);
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int b = bin_of(x[i], bins, scale);
    if (b >= 0) atomicAdd(counts + b, 1u);
  }
}

// Grid-stride over float4 (16-byte streaming loads): each thread issues UNROLL loads at
// once, those past the end predicated off as NaN (which no bin takes), so no thread ends
// with a chain of lone loads; then the n % 4 tail. `add` counts one sample.
template <int BLOCK, int UNROLL, class Add>
__device__ __forceinline__ void for_each_sample(const float* __restrict__ x, std::size_t n, Add&& add) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const std::size_t n4 = n / 4;
  const std::size_t stride = std::size_t(gridDim.x) * BLOCK;
  const std::size_t first = std::size_t(blockIdx.x) * BLOCK + threadIdx.x;
  const float nan = __int_as_float(0x7fffffff);
  for (std::size_t base = first; base < n4; base += UNROLL * stride) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const std::size_t i = base + u * stride;
      v[u] = i < n4 ? __ldcs(x4 + i) : make_float4(nan, nan, nan, nan);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      add(v[u].x);
      add(v[u].y);
      add(v[u].z);
      add(v[u].w);
    }
  }
  if (first < n - n4 * 4) add(x[n4 * 4 + first]); // at most 3 samples left
}

// Few bins: every thread counts into its own column of a [bins][BLOCK] shared array, so
// there are neither atomics nor bank conflicts; the block then sums its columns (one warp
// per bin) and adds one value per bin to the global counts. Large blocks, few of them:
// fewer global atomics on the one cache line of counts at the end.
template <int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, 2048 / BLOCK)
    private_columns_kernel(const float* __restrict__ x, std::size_t n, unsigned* __restrict__ counts,
                           unsigned* __restrict__ next_counts, int bins, float scale) {
  extern __shared__ unsigned s_columns[];
  zero_next(next_counts, bins);
  unsigned* mine = s_columns + threadIdx.x;
  for (int b = 0; b < bins; ++b) mine[b * BLOCK] = 0;
  for_each_sample<BLOCK, UNROLL>(x, n, [&](float v) {
    const int b = bin_of(v, bins, scale);
    if (b >= 0) mine[b * BLOCK] += 1u;
  });
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int b = warp; b < bins; b += BLOCK / 32) {
    unsigned sum = 0;
    for (int c = lane; c < BLOCK; c += 32) sum += s_columns[b * BLOCK + c];
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0 && sum != 0) atomicAdd(counts + b, sum);
  }
}

// Many bins: `copies` histograms in shared memory, warp w counting into copy w % copies
// with shared atomics (contention only inside a warp and its few sharers), merged per block.
// ATOMIC = false is the deliberate race of the lesson: read-modify-write without atomics,
// so increments by threads hitting one bin at once are lost.
template <int BLOCK, int UNROLL, bool ATOMIC>
__global__ void __launch_bounds__(BLOCK)
    shared_copies_kernel(const float* __restrict__ x, std::size_t n, unsigned* __restrict__ counts,
                         unsigned* __restrict__ next_counts, int bins, float scale, int copies) {
  extern __shared__ unsigned s_copies[];
  zero_next(next_counts, bins);
  for (int k = threadIdx.x; k < copies * bins; k += BLOCK) s_copies[k] = 0;
  __syncthreads();
  unsigned* mine = s_copies + ((threadIdx.x >> 5) % copies) * bins;
  for_each_sample<BLOCK, UNROLL>(x, n, [&](float v) {
    const int b = bin_of(v, bins, scale);
    if (b < 0) return;
    if constexpr (ATOMIC)
      atomicAdd(mine + b, 1u);
    else
      mine[b] = mine[b] + 1u; // the race, on purpose
  });
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += BLOCK) {
    unsigned sum = 0;
    for (int c = 0; c < copies; ++c) sum += s_copies[c * bins + b];
    if (sum != 0) atomicAdd(counts + b, sum);
  }
}

// How one kernel is launched for (n, bins) on the current device.
struct launch_plan {
  int grid = 1;
  int block = 256;
  std::size_t shared_bytes = 0;
  int copies = 1;
};

inline int sm_count() {
  int device = 0, sms = 0;
  SPEEDLAB_CUDA_CHECK(cudaGetDevice(&device));
  SPEEDLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// A grid that fills the device once (persistent blocks, at most `per_sm_cap` per SM), but
// no more blocks than there is work.
template <class Kernel>
int resident_grid(Kernel kernel, int block, std::size_t shared_bytes, std::size_t work_items, int per_sm_cap = 64) {
  int per_sm = 0;
  SPEEDLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, shared_bytes));
  const std::size_t full = static_cast<std::size_t>(std::clamp(per_sm, 1, per_sm_cap)) * sm_count();
  const std::size_t needed = std::max<std::size_t>(1, (work_items + block - 1) / block);
  return static_cast<int>(std::min(full, needed));
}

inline launch_plan plan_for(gpu_kernel kernel, std::size_t n, int bins) {
  if (bins < 1 || bins > max_bins)
    throw std::invalid_argument("histogram: bins must be in 1.." + std::to_string(max_bins));
  launch_plan p;
  switch (kernel) {
  case gpu_kernel::global_atomics:
    p.block = 256;
    p.grid = static_cast<int>(std::min<std::size_t>((n + p.block - 1) / p.block, std::size_t(sm_count()) * 32));
    break;
  case gpu_kernel::privatized:
    if (bins <= column_bins) {
      p.block = column_block;
      p.shared_bytes = std::size_t(bins) * column_block * sizeof(unsigned);
      p.grid = resident_grid(private_columns_kernel<column_block, column_unroll>, p.block, p.shared_bytes, n / 4,
                             column_blocks_per_sm);
    } else {
      p.block = copies_block;
      p.copies = std::clamp(shared_budget_bytes / (bins * 4), 1, copies_block / 32);
      p.shared_bytes = std::size_t(p.copies) * bins * sizeof(unsigned);
      p.grid = resident_grid(shared_copies_kernel<copies_block, copies_unroll, true>, p.block, p.shared_bytes, n / 4);
    }
    break;
  case gpu_kernel::racy:
    p.block = copies_block;
    p.copies = 1;
    p.shared_bytes = std::size_t(bins) * sizeof(unsigned);
    p.grid = resident_grid(shared_copies_kernel<copies_block, copies_unroll, false>, p.block, p.shared_bytes, n / 4);
    break;
  }
  return p;
}

// Enqueues the kernel on `stream`; `counts` must be zero, `next_counts` becomes zero.
inline void launch(gpu_kernel kernel, const launch_plan& p, const float* x, std::size_t n, unsigned* counts,
                   unsigned* next_counts, int bins, cudaStream_t stream) {
  const float scale = bin_scale(bins);
  switch (kernel) {
  case gpu_kernel::global_atomics:
    global_atomics_kernel<<<p.grid, p.block, 0, stream>>>(x, n, counts, next_counts, bins, scale);
    break;
  case gpu_kernel::privatized:
    if (bins <= column_bins)
      private_columns_kernel<column_block, column_unroll>
          <<<p.grid, p.block, p.shared_bytes, stream>>>(x, n, counts, next_counts, bins, scale);
    else
      shared_copies_kernel<copies_block, copies_unroll, true>
          <<<p.grid, p.block, p.shared_bytes, stream>>>(x, n, counts, next_counts, bins, scale, p.copies);
    break;
  case gpu_kernel::racy:
    shared_copies_kernel<copies_block, copies_unroll, false>
        <<<p.grid, p.block, p.shared_bytes, stream>>>(x, n, counts, next_counts, bins, scale, p.copies);
    break;
  }
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

} // namespace speedlab::plugins::histogram::detail

namespace speedlab::plugins::histogram {

struct gpu_histogram::impl {
  std::size_t n;
  int bins;
  cuda::device_buffer<float> samples;
  cuda::device_buffer<unsigned> counts; // two halves: the one added into, the one zeroed for next time
  int current = 0;                      // half the next launch adds into
  detail::launch_plan plans[3];
  unsigned* half(int h) const { return counts.get() + std::size_t(h) * bins; }
};

gpu_histogram::gpu_histogram(int device, std::size_t n, int bins) {
  SPEEDLAB_CUDA_CHECK(cudaSetDevice(device));
  m_impl = std::make_unique<impl>(
      impl{n, bins, cuda::device_buffer<float>(n), cuda::device_buffer<unsigned>(2 * std::size_t(bins)), 0, {}});
  for (auto k : {gpu_kernel::global_atomics, gpu_kernel::privatized, gpu_kernel::racy})
    m_impl->plans[static_cast<int>(k)] = detail::plan_for(k, n, bins);
  SPEEDLAB_CUDA_CHECK(cudaMemset(m_impl->counts.get(), 0, m_impl->counts.bytes()));
}

gpu_histogram::~gpu_histogram() = default;

void gpu_histogram::upload(const float* samples) {
  SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_impl->samples.get(), samples, m_impl->samples.bytes(), cudaMemcpyHostToDevice));
}

void gpu_histogram::count(gpu_kernel kernel) {
  auto& s = *m_impl;
  detail::launch(kernel, s.plans[static_cast<int>(kernel)], s.samples.get(), s.n, s.half(s.current),
                 s.half(1 - s.current), s.bins, 0);
  SPEEDLAB_CUDA_CHECK(cudaStreamSynchronize(0));
  s.current = 1 - s.current;
}

void gpu_histogram::download(std::uint32_t* counts) {
  const auto& s = *m_impl;
  SPEEDLAB_CUDA_CHECK(
      cudaMemcpy(counts, s.half(1 - s.current), std::size_t(s.bins) * sizeof(unsigned), cudaMemcpyDeviceToHost));
}

} // namespace speedlab::plugins::histogram
