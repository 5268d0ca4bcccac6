// CUDA helpers for plugins: error checks that throw (the runner records the message),
// RAII device and pinned buffers, the availability check every cuda variant uses, and the
// full-device grid size for grid-stride kernels.
#pragma once

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#define SPEEDLAB_CUDA_CHECK(expr)                                                               \
  do {                                                                                          \
    const cudaError_t speedlab_err_ = (expr);                                                   \
    if (speedlab_err_ != cudaSuccess)                                                           \
      throw std::runtime_error(std::string(#expr) + " failed: " + cudaGetErrorName(speedlab_err_) + \
                               ": " + cudaGetErrorString(speedlab_err_) + " (" __FILE__ ":" +  \
                               std::to_string(__LINE__) + ")");                                 \
  } while (0)

// After a launch: launch errors now, execution errors at the next sync.
#define SPEEDLAB_CUDA_CHECK_LAUNCH() SPEEDLAB_CUDA_CHECK(cudaGetLastError())

namespace speedlab::cuda {

// Empty when a CUDA device is usable, else why not.
inline std::string unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError(); // clear the sticky-free error state
    return std::string("no usable CUDA device: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  }
  if (count == 0) return "no CUDA device found";
  return {};
}

// Resident blocks per SM times SMs for Kernel launched with BlockSize threads and no dynamic
// shared memory: a grid-stride grid that fills the current device once. Cached per device
// (the queries cost more than a launch).
template <auto Kernel, int BlockSize>
unsigned full_grid() {
  static std::atomic<unsigned> cache[64] = {};
  int device = 0;
  SPEEDLAB_CUDA_CHECK(cudaGetDevice(&device));
  auto& slot = cache[static_cast<unsigned>(device) % 64];
  if (const unsigned cached = slot.load(std::memory_order_relaxed)) return cached;
  int sms = 0, per_sm = 0;
  SPEEDLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SPEEDLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, BlockSize, 0));
  const unsigned blocks = static_cast<unsigned>(sms) * static_cast<unsigned>(per_sm > 0 ? per_sm : 1);
  slot.store(blocks, std::memory_order_relaxed);
  return blocks;
}

template <class T>
class device_buffer {
public:
  device_buffer() = default;
  explicit device_buffer(std::size_t n) : m_size(n) {
    if (n) SPEEDLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&m_ptr), n * sizeof(T)));
  }
  ~device_buffer() { if (m_ptr) cudaFree(m_ptr); }
  device_buffer(device_buffer&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(m_ptr, o.m_ptr);
    std::swap(m_size, o.m_size);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  T* get() const { return m_ptr; }
  std::size_t size() const { return m_size; }
  std::size_t bytes() const { return m_size * sizeof(T); }

private:
  T* m_ptr = nullptr;
  std::size_t m_size = 0;
};

// Page-locked host memory: copies from it run at full bus speed and can be async.
template <class T>
class pinned_buffer {
public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t n) : m_size(n) {
    if (n) SPEEDLAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&m_ptr), n * sizeof(T)));
  }
  ~pinned_buffer() { if (m_ptr) cudaFreeHost(m_ptr); }
  pinned_buffer(pinned_buffer&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    std::swap(m_ptr, o.m_ptr);
    std::swap(m_size, o.m_size);
    return *this;
  }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  T* get() const { return m_ptr; }
  T& operator[](std::size_t i) const { return m_ptr[i]; }
  std::size_t size() const { return m_size; }
  std::size_t bytes() const { return m_size * sizeof(T); }

private:
  T* m_ptr = nullptr;
  std::size_t m_size = 0;
};

} // namespace speedlab::cuda
