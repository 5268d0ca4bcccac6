// The CUDA side of the convolution plugin as plain C++ (no CUDA or SDK headers).
#pragma once

#include <memory>

namespace speedlab::plugins::convolution {

enum class gpu_kernel {
  naive, // one output per thread, image and mask read from global memory
  tiled, // image tile + halo in shared memory, mask in constant memory, 8 outputs per thread
};

// Device buffers for a size x size image and a mask x mask filter, used by one kernel.
// The tiled kernel's mask lives in constant memory (one per process: one instance at a
// time). Every call completes its GPU work and throws std::runtime_error on a CUDA error.
class gpu_convolution {
public:
  gpu_convolution(int device, int size, int mask, gpu_kernel kernel); // cudaMalloc
  ~gpu_convolution();
  gpu_convolution(const gpu_convolution&) = delete;
  gpu_convolution& operator=(const gpu_convolution&) = delete;

  void upload(const float* image, const float* mask); // image and mask host -> device
  void convolve();                                    // launch, synchronize
  void download(float* out);                          // result device -> host

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

} // namespace speedlab::plugins::convolution
