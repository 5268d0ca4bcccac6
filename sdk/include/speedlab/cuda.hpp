// speedlab plugin SDK, CUDA part: what a CUDA variant needs besides <speedlab/plugin.hpp>.
//
// - SPEEDLAB_CUDA_CHECK(call): throws std::runtime_error naming the call's text, the CUDA
//   error and the file:line; speedlab records the message as the point's failure.
//   SPEEDLAB_CUDA_CHECK_LAUNCH() after a kernel launch.
// - speedlab::cuda::unavailable_reason(): "" when a CUDA device is usable, else why not;
//   speedlab::cuda::variant<Run>(name, description) makes a cuda variant_spec that uses it
//   (speedlab then skips the variant with that reason: "cannot run here").
// - RAII: device_buffer<T> (cudaMalloc/cudaFree), pinned_buffer<T> (cudaMallocHost),
//   event (cudaEvent_t), stream (cudaStream_t). Move-only; destructors never throw.
// - full_grid<Kernel, BlockSize>(): a grid that fills every SM once, for grid-stride loops.
// - <speedlab/cuda_event_timer.hpp>: a cudaEvent timer for run_context::self_timing.
//
// Standard and needs: C++17 or later; usable from .cu files (nvcc) and from .cpp files
// compiled by the host compiler alike. Needs the CUDA runtime headers and the shared runtime
// library (CUDA::cudart; speedlab_add_plugin links it for plugins with CUDA_SOURCES).
// Include it only where the plugin is built with CUDA: speedlab_add_plugin defines
// SPEEDLAB_PLUGIN_HAS_CUDA=1 then, 0 otherwise.
#pragma once

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <cuda_runtime.h>

#include <speedlab/plugin.hpp>

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

// A variant of kind cuda whose availability is unavailable_reason(): speedlab skips it, with
// the reason, where no device is usable.
template <class Run>
variant_spec variant(std::string name, std::string description) {
  variant_spec v = variant_spec::make<Run>(std::move(name), variant_kind::cuda, std::move(description));
  v.unavailable_reason = &unavailable_reason;
  return v;
}

namespace detail {
struct device_memory { // cudaMalloc: device memory, not readable from the host
  static constexpr bool host_readable = false;
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    SPEEDLAB_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  static void release(void* p) { cudaFree(p); }
};
struct pinned_memory { // cudaMallocHost: page-locked host memory
  static constexpr bool host_readable = true;
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    SPEEDLAB_CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  static void release(void* p) { cudaFreeHost(p); }
};

// n elements of T (uninitialised) in Memory, freed with the object; move-only.
template <class T, class Memory>
class buffer {
public:
  buffer() = default;
  explicit buffer(std::size_t n) : m_size(n) {
    if (n) m_ptr = static_cast<T*>(Memory::allocate(n * sizeof(T)));
  }
  ~buffer() {
    if (m_ptr) Memory::release(m_ptr);
  }
  buffer(buffer&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
  buffer& operator=(buffer&& o) noexcept {
    std::swap(m_ptr, o.m_ptr);
    std::swap(m_size, o.m_size);
    return *this;
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  T* get() const { return m_ptr; }
  template <class M = Memory, class = std::enable_if_t<M::host_readable>>
  T& operator[](std::size_t i) const {
    return m_ptr[i];
  }
  std::size_t size() const { return m_size; }
  std::size_t bytes() const { return m_size * sizeof(T); }

private:
  T* m_ptr = nullptr;
  std::size_t m_size = 0;
};
} // namespace detail

// Device memory for n elements of T (cudaMalloc / cudaFree).
template <class T>
using device_buffer = detail::buffer<T, detail::device_memory>;
// Page-locked host memory (cudaMallocHost / cudaFreeHost): copies from it run at full bus
// speed and can be async; elements are reachable with [].
template <class T>
using pinned_buffer = detail::buffer<T, detail::pinned_memory>;

// A CUDA event (cudaEventCreate / cudaEventDestroy).
class event {
public:
  explicit event(unsigned flags = cudaEventDefault) { SPEEDLAB_CUDA_CHECK(cudaEventCreateWithFlags(&m_event, flags)); }
  ~event() {
    if (m_event) cudaEventDestroy(m_event);
  }
  event(event&& o) noexcept : m_event(std::exchange(o.m_event, nullptr)) {}
  event& operator=(event&& o) noexcept {
    std::swap(m_event, o.m_event);
    return *this;
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  cudaEvent_t get() const { return m_event; }
  void record(cudaStream_t stream = nullptr) { SPEEDLAB_CUDA_CHECK(cudaEventRecord(m_event, stream)); }
  void synchronize() { SPEEDLAB_CUDA_CHECK(cudaEventSynchronize(m_event)); }
  // Milliseconds from `start` to this event, both recorded and complete.
  float elapsed_ms_since(const event& start) const {
    float ms = 0;
    SPEEDLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.m_event, m_event));
    return ms;
  }

private:
  cudaEvent_t m_event = nullptr;
};

// A non-blocking CUDA stream (cudaStreamCreateWithFlags / cudaStreamDestroy).
class stream {
public:
  stream() { SPEEDLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }
  ~stream() {
    if (m_stream) cudaStreamDestroy(m_stream);
  }
  stream(stream&& o) noexcept : m_stream(std::exchange(o.m_stream, nullptr)) {}
  stream& operator=(stream&& o) noexcept {
    std::swap(m_stream, o.m_stream);
    return *this;
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  cudaStream_t get() const { return m_stream; }
  void synchronize() { SPEEDLAB_CUDA_CHECK(cudaStreamSynchronize(m_stream)); }

private:
  cudaStream_t m_stream = nullptr;
};

} // namespace speedlab::cuda
