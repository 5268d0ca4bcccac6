// Small CUDA helpers for the GPU tests (kernels live in gpu_kernels.cu).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace speedlab::gpu_test {

std::string device_problem(); // empty when a CUDA device is usable

struct buffers {
  void* device = nullptr;
  void* pinned = nullptr;
  void* pageable = nullptr;
  std::size_t bytes = 0;
};
bool allocate(buffers& b, std::size_t bytes);
void release(buffers& b);

bool copy_h2d_sync(const buffers& b);           // cudaMemcpy pageable -> device
bool copy_d2h_async_pinned(const buffers& b);   // cudaMemcpyAsync device -> pinned, default stream
bool memset_device(const buffers& b, int value); // cudaMemset
bool spin(std::uint64_t ns);                    // one 1-thread kernel busy for ns (globaltimer)
// ms between cudaEvents around one spin kernel queued behind a 300 us blocker kernel; -1 on error
float spin_timed_by_events(std::uint64_t ns);
// ms between cudaEvents around one c = a * b kernel over n floats (one thread per element,
// blocks of 256, as the lesson's). fresh: a, b, c are cudaMalloc'ed and a, b copied in just
// before (as the lesson does every call); else reused. idle_ms: the host sleeps that long
// (GPU idle) before queuing. hold: the events and kernel are queued behind a 300 us blocker
// kernel (blocker), behind the plugins' event_timer flag (flag: cuStreamWaitValue32), or
// behind that flag with the timer's 4-byte memset ahead of it (primed_flag).
enum class hold { blocker, flag, primed_flag };
float multiply_timed_by_events(std::size_t n, bool fresh, int idle_ms = 0, hold how = hold::blocker);
bool launch_empty(int n);
bool synchronize();                             // cudaDeviceSynchronize
std::string last_error();

} // namespace speedlab::gpu_test
