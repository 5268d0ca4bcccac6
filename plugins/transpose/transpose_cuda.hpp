// The CUDA side of the transpose plugin as plain C++ (no CUDA or SDK headers).
#pragma once

#include <cstdint>
#include <memory>

namespace speedlab::plugins::transpose {

enum class gpu_kernel {
  naive, // coalesced reads, writes strided by n (one 32-byte sector per element)
  tiled, // 32x32 tile through shared memory padded to 32x33: both sides coalesced
};

// Device buffers for an n x n int32 matrix and its transpose. Every call completes its GPU
// work and throws std::runtime_error on a CUDA error.
class gpu_transpose {
public:
  gpu_transpose(int device, int n); // cudaMalloc
  ~gpu_transpose();
  gpu_transpose(const gpu_transpose&) = delete;
  gpu_transpose& operator=(const gpu_transpose&) = delete;

  void upload(const std::int32_t* in); // host -> device
  void transpose(gpu_kernel kernel);   // launch, synchronize
  void download(std::int32_t* out);    // device -> host

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

} // namespace speedlab::plugins::transpose
