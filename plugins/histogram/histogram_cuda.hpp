// The CUDA side of the histogram plugin as plain C++ (no CUDA or SDK headers), so the
// variant classes in histogram.cpp and the kernels in histogram_kernels.cu stay apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace speedlab::plugins::histogram {

enum class gpu_kernel {
  global_atomics, // every sample: atomicAdd on the global bins
  privatized,     // per-thread / per-warp bins in shared memory, merged per block
  racy,           // one shared histogram per block, non-atomic increments: loses counts
};

// Device buffers for n samples and `bins` counts on one device. Every call completes its
// GPU work (synchronizes) and throws std::runtime_error on a CUDA error.
class gpu_histogram {
public:
  gpu_histogram(int device, std::size_t n, int bins); // cudaMalloc
  ~gpu_histogram();                                   // cudaFree
  gpu_histogram(const gpu_histogram&) = delete;
  gpu_histogram& operator=(const gpu_histogram&) = delete;

  void upload(const float* samples);    // n floats host -> device
  void count(gpu_kernel kernel);        // one launch (it zeroes the next launch's bins), synchronize
  void download(std::uint32_t* counts); // the last count's bins device -> host

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

} // namespace speedlab::plugins::histogram
