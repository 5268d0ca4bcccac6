// speedlab plugin SDK, CUDA part: what a CUDA variant needs besides <speedlab/plugin.hpp>.
//
// - SPEEDLAB_CUDA_CHECK(call): throws std::runtime_error naming the call's text, the CUDA
//   error and the file:line; speedlab records the message as the point's failure.
//   SPEEDLAB_CUDA_CHECK_LAUNCH() after a kernel launch.
// - speedlab::cuda::unavailable_reason(): "" when a CUDA device is usable, else why not, by
//   its cause (no driver, no GPU, driver too old, no permission: <speedlab/gpu_availability.hpp>);
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

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <cuda_runtime.h>

#include <speedlab/gpu_availability.hpp>
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

static_assert(gpu::error_insufficient_driver == cudaErrorInsufficientDriver &&
              gpu::error_devices_unavailable == cudaErrorDevicesUnavailable &&
              gpu::error_no_device == cudaErrorNoDevice && gpu::error_not_permitted == cudaErrorNotPermitted &&
              gpu::error_system_driver_mismatch == cudaErrorSystemDriverMismatch);

// What this process finds: the driver library, the runtime's answer, the device nodes. Like
// any CUDA call, it initializes CUDA in the calling process.
inline gpu::facts gpu_facts() {
  gpu::facts f;
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (driver) {
    dlclose(driver);
  } else {
    f.driver_loadable = false;
    const char* why = dlerror();
    f.driver_load_error = why ? why : "not found";
    if (f.driver_load_error.rfind("libcuda.so.1: ", 0) == 0) f.driver_load_error.erase(0, 14); // named already
  }
  cudaDriverGetVersion(&f.driver_version);
  cudaRuntimeGetVersion(&f.runtime_version);
  if (const cudaError_t err = cudaGetDeviceCount(&f.device_count); err != cudaSuccess) {
    cudaGetLastError(); // clear the error state
    f.error = static_cast<int>(err);
    f.error_name = cudaGetErrorName(err);
    f.error_text = cudaGetErrorString(err);
    f.device_count = 0;
  }
  f.device_nodes = ::access("/dev/nvidiactl", F_OK) == 0;
  for (const char* node : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"})
    if (::access(node, F_OK) == 0 && ::access(node, R_OK | W_OK) != 0) {
      f.denied_node = node;
      break;
    }
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    f.visible_devices_set = true;
    f.visible_devices = visible;
  }
  return f;
}

// Empty when a CUDA device is usable, else why not: the cause and what to do.
inline std::string unavailable_reason() { return gpu::classify(gpu_facts()).reason; }

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
// Where a buffer lives: its allocation and release calls, and whether the host may read it.
template <cudaError_t (*Allocate)(void**, std::size_t), cudaError_t (*Release)(void*), bool HostReadable>
struct memory {
  static constexpr bool host_readable = HostReadable;
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    if (const cudaError_t err = Allocate(&p, bytes); err != cudaSuccess)
      throw std::runtime_error(std::string(HostReadable ? "cudaMallocHost" : "cudaMalloc") + " of " +
                               std::to_string(bytes) + " bytes failed: " + cudaGetErrorName(err) + ": " +
                               cudaGetErrorString(err));
    return p;
  }
  static void release(void* p) { Release(p); }
};
using device_memory = memory<cudaMalloc, cudaFree, false>;
using pinned_memory = memory<cudaMallocHost, cudaFreeHost, true>;

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

namespace detail {
// Owns one CUDA handle (event, stream), destroyed with the object; move-only.
template <class Handle, cudaError_t (*Destroy)(Handle)>
class unique_handle {
public:
  unique_handle() = default;
  ~unique_handle() {
    if (m_handle) Destroy(m_handle);
  }
  unique_handle(unique_handle&& o) noexcept : m_handle(std::exchange(o.m_handle, nullptr)) {}
  unique_handle& operator=(unique_handle&& o) noexcept {
    std::swap(m_handle, o.m_handle);
    return *this;
  }
  unique_handle(const unique_handle&) = delete;
  unique_handle& operator=(const unique_handle&) = delete;
  Handle get() const { return m_handle; }

protected:
  Handle m_handle = nullptr;
};
} // namespace detail

// A CUDA event (cudaEventCreateWithFlags / cudaEventDestroy).
class event : public detail::unique_handle<cudaEvent_t, cudaEventDestroy> {
public:
  explicit event(unsigned flags = cudaEventDefault) { SPEEDLAB_CUDA_CHECK(cudaEventCreateWithFlags(&m_handle, flags)); }
  void record(cudaStream_t stream = nullptr) { SPEEDLAB_CUDA_CHECK(cudaEventRecord(m_handle, stream)); }
  void synchronize() { SPEEDLAB_CUDA_CHECK(cudaEventSynchronize(m_handle)); }
  // Milliseconds from `start` to this event, both recorded and complete.
  float elapsed_ms_since(const event& start) const {
    float ms = 0;
    SPEEDLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), m_handle));
    return ms;
  }
};

// A non-blocking CUDA stream (cudaStreamCreateWithFlags / cudaStreamDestroy).
class stream : public detail::unique_handle<cudaStream_t, cudaStreamDestroy> {
public:
  stream() { SPEEDLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&m_handle, cudaStreamNonBlocking)); }
  void synchronize() { SPEEDLAB_CUDA_CHECK(cudaStreamSynchronize(m_handle)); }
};

} // namespace speedlab::cuda
