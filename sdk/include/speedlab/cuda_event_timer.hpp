// Times GPU work with a cudaEvent recorded before the launch and one after, on the same
// stream, read once the work is done: how a lesson times its kernel, made exact. Used when
// speedlab asks for the variant's own timings (run_context::self_timing), so the report can
// set them beside CUPTI's kernel times.
//
// On an idle GPU a plain event pair also times the host's launch call: the start event runs
// the moment it is recorded, the kernel only once cudaLaunchKernel has returned (measured on
// the H100: 7-55 us more than the kernel). So, like nvbench's blocking kernel, the timer holds
// the stream behind a flag in pinned memory (cuStreamWaitValue32) from start() to stop(): the
// start event, the work and the stop event then run back to back once stop() lifts it. What
// remains is the GPU front end's gap around the kernel (about 2.4 us on the H100). The first
// timing is never gated: with the first launch gated every point hung on the H100 (a first
// launch may load the kernel's module lazily, which waits for the device).
// Where stream memory operations are unavailable the pair runs ungated; gated() says whether
// the last timing was.
//
//   speedlab::cuda::event_timer timer;       // in setup (events, flag)
//   timer.start(); launch(...); timer.stop();
//   ... synchronize ...
//   speedlab::report_timing(ctx, timer.gated() ? "kernel" : "kernel+launch", timer.elapsed_ns());
// Part of the speedlab plugin SDK; C++17, CUDA runtime and driver headers (the driver
// function is reached through cudart, no libcuda link).
#pragma once

#include <cstdint>

#include <cuda.h> // types and enums of cuStreamWaitValue32 only: it is reached through cudart
#include <cuda_runtime.h>

#include <speedlab/cuda.hpp>

namespace speedlab::cuda {

class event_timer {
public:
  // prime: a 4-byte cudaMemsetAsync ahead of the gate takes the GPU work that follows a new
  // allocation, so it does not land between the start event and the kernel.
  explicit event_timer(bool prime = true) {
    SPEEDLAB_CUDA_CHECK(cudaEventCreate(&m_start));
    if (const cudaError_t err = cudaEventCreate(&m_stop); err != cudaSuccess) {
      cudaEventDestroy(m_start);
      SPEEDLAB_CUDA_CHECK(err);
    }
    if (prime && cudaMalloc(&m_scratch, sizeof(std::uint32_t)) != cudaSuccess) {
      cudaGetLastError();
      m_scratch = nullptr;
    }
    open_gate();
  }
  ~event_timer() {
    lift();
    if (m_flag) cudaFreeHost(m_flag);
    if (m_scratch) cudaFree(m_scratch);
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;

  bool gated() const { return m_last_gated; }

  void start(cudaStream_t stream = nullptr) {
    if (m_scratch) SPEEDLAB_CUDA_CHECK(cudaMemsetAsync(m_scratch, 0, sizeof(std::uint32_t), stream));
    m_last_gated = m_wait && m_timings > 0;
    if (m_last_gated) {
      __atomic_store_n(m_flag, 0u, __ATOMIC_RELEASE); // a builtin: nvcc may compile this as C++17
      if (m_wait(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(m_flag), 1,
                 CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
        throw std::runtime_error("cuStreamWaitValue32 failed: the event timer cannot hold the stream");
      m_held = true;
    }
    SPEEDLAB_CUDA_CHECK(cudaEventRecord(m_start, stream));
  }

  void stop(cudaStream_t stream = nullptr) {
    const cudaError_t err = cudaEventRecord(m_stop, stream);
    lift(); // even if the record failed: a held stream would hang the next synchronize
    SPEEDLAB_CUDA_CHECK(err);
    ++m_timings;
  }

  // Waits for the stop event (a no-op once the work was synchronized), then returns the time
  // between the two events (resolution about 0.5 us).
  double elapsed_ns() {
    SPEEDLAB_CUDA_CHECK(cudaEventSynchronize(m_stop));
    float ms = 0;
    SPEEDLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
    return static_cast<double>(ms) * 1e6;
  }

private:
  using wait_value_fn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

  void open_gate() {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !fn) {
      cudaGetLastError();
      return;
    }
    void* flag = nullptr;
    if (cudaHostAlloc(&flag, sizeof(std::uint32_t), cudaHostAllocMapped) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    m_flag = static_cast<std::uint32_t*>(flag); // unified addressing: the host pointer is the device's too
    *m_flag = 1;
    m_wait = reinterpret_cast<wait_value_fn>(fn);
  }

  void lift() {
    if (!m_held) return;
    __atomic_store_n(m_flag, 1u, __ATOMIC_RELEASE);
    m_held = false;
  }

  cudaEvent_t m_start = nullptr, m_stop = nullptr;
  std::uint32_t* m_flag = nullptr;
  void* m_scratch = nullptr; // prime target
  wait_value_fn m_wait = nullptr;
  bool m_held = false, m_last_gated = false;
  unsigned m_timings = 0;
};

} // namespace speedlab::cuda
