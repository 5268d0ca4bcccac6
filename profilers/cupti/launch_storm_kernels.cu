// Kernels for speedlab_launch_storm: an empty kernel launched as fast as the host can.
#include <time.h>

#include <cuda_runtime.h>

#include "launch_storm_kernels.hpp"

namespace {
__global__ void speedlab_empty_kernel() {}
} // namespace

namespace speedlab::storm {

std::string device_name() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return {};
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return {};
  return prop.name;
}

std::string last_error() { return cudaGetErrorString(cudaGetLastError()); }

bool launch_empty(long n) {
  for (long i = 0; i < n; ++i) speedlab_empty_kernel<<<1, 1>>>();
  return cudaGetLastError() == cudaSuccess;
}

bool launch_empty_timed(long n, std::uint64_t* durations_ns) {
  for (long i = 0; i < n; ++i) {
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    speedlab_empty_kernel<<<1, 1>>>();
    clock_gettime(CLOCK_MONOTONIC, &b);
    durations_ns[i] = static_cast<std::uint64_t>((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
  }
  return cudaGetLastError() == cudaSuccess;
}

bool synchronize() { return cudaDeviceSynchronize() == cudaSuccess; }

} // namespace speedlab::storm
