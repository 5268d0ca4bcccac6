// GPU calibration: measured ceilings for the device model. Each figure is the best of a
// few repetitions after a warm-up, timed with CUDA events (host clock for launches).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "model/device_keys.hpp"
#include "device/calibrate.hpp"

namespace speedlab::device::detail {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(fmt::format("{}: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e)));
  }
}

// RAII for the few CUDA resources calibration needs.
struct device_mem {
  void* p = nullptr;
  explicit device_mem(std::size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~device_mem() { cudaFree(p); }
  device_mem(const device_mem&) = delete;
  device_mem& operator=(const device_mem&) = delete;
};
struct pinned_mem {
  void* p = nullptr;
  explicit pinned_mem(std::size_t bytes) { check(cudaMallocHost(&p, bytes), "cudaMallocHost"); }
  ~pinned_mem() { cudaFreeHost(p); }
  pinned_mem(const pinned_mem&) = delete;
  pinned_mem& operator=(const pinned_mem&) = delete;
};
struct event_pair {
  cudaEvent_t start = nullptr, stop = nullptr;
  event_pair() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~event_pair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
  template <class F>
  double time_s(F&& f) {
    check(cudaEventRecord(start), "cudaEventRecord");
    f();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms / 1e3;
  }
};

__global__ void empty_kernel() {}

// Independent FMA chains: enough in flight per warp to hide the FMA latency, nothing
// the compiler can fold (a and b arrive at run time), one unlikely store to keep it alive.
template <class T>
__global__ void fma_chains(T* out, int iters, T a, T b) {
  constexpr int chains = 8;
  T x[chains];
#pragma unroll
  for (int j = 0; j < chains; ++j) x[j] = T(threadIdx.x + j) * T(1e-3);
#pragma unroll 8
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < chains; ++j) x[j] = fma(x[j], a, b);
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < chains; ++j) s += x[j];
  if (s == T(-1.2345)) out[blockIdx.x] = s;
}

// Read-only streaming: 16-byte loads over the buffer, grid-stride, summed so the loads stay;
// one store per thread that never happens (the sum of ones is never negative).
__global__ void read_stream(const float4* in, std::size_t n, float* out) {
  float s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const float4 v = in[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s < 0) out[blockIdx.x] = s;
}

// Write-only streaming: 16-byte stores, grid-stride.
__global__ void write_stream(float4* out, std::size_t n, float value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = make_float4(value, value, value, value);
}

// L2 bandwidth: every block rereads a buffer that fits in L2 (after a first touch) `rounds` times.
__global__ void l2_reread(const float4* in, std::size_t n, int rounds, float* out) {
  float s = 0;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
      const float4 v = __ldcg(in + i); // cache in L2 only: the L1 does not serve the rereads
      s += v.x + v.w;
    }
  if (s < 0) out[blockIdx.x] = s;
}

template <class F>
double best_of(int reps, F&& measure) {
  measure(); // warm-up
  double best = 0;
  for (int r = 0; r < reps; ++r) best = std::max(best, measure());
  return best;
}

template <class T>
double fma_gflops(int sms, int threads_per_sm, int iters, int reps) {
  const int block = 256;
  const int blocks = sms * std::max(1, threads_per_sm / block);
  device_mem out(sizeof(T) * static_cast<std::size_t>(blocks));
  event_pair ev;
  const double flops = 2.0 * 8 * static_cast<double>(iters) * blocks * block;
  return best_of(reps, [&] {
    const double s = ev.time_s([&] { fma_chains<T><<<blocks, block>>>(static_cast<T*>(out.p), iters, T(0.9999), T(1e-4)); });
    check(cudaGetLastError(), "fma_chains launch");
    return s > 0 ? flops / s / 1e9 : 0.0;
  });
}

} // namespace

namespace {

// What every measurement needs: the options, the device's properties, the model it fills.
struct calibration {
  const calibrate_options& o;
  const cudaDeviceProp& p;
  speedlab::device_model& m;
  std::string mode;
  int reps;
  void log(const std::string& s) const {
    if (o.log) o.log(s);
  }
};

// Device-to-device copy: every byte is read once and written once.
void measure_device_copy(const calibration& cal) {
  const auto& o = cal.o;
  auto& m = cal.m;
  const std::string& mode = cal.mode;
  const int reps = cal.reps;
  const std::size_t bytes = std::size_t(o.quick ? 256 : 1024) << 20;
  device_mem a(bytes), b(bytes);
  check(cudaMemset(a.p, 1, bytes), "cudaMemset");
  event_pair ev;
  const double gbps = best_of(reps, [&] {
    return 2.0 * bytes / ev.time_s([&] { check(cudaMemcpy(b.p, a.p, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy D2D"); }) / 1e9;
  });
  set_measured(m.gpu, keys::dram_bw,
                         {gbps, "GB/s", true,
                          fmt::format("calibrate ({}): cudaMemcpy D2D of {} MiB, read + write bytes, best of {}", mode,
                                      bytes >> 20, reps)});
  cal.log(fmt::format("device memory bandwidth (D2D copy, read+write): {:.0f} GB/s", gbps));
}

// DRAM read-only and write-only bandwidth: a read-mostly kernel is bounded by the first,
// not by the copy figure above (which mixes both directions).
void measure_dram_and_l2(const calibration& cal) {
  const auto& o = cal.o;
  const auto& p = cal.p;
  auto& m = cal.m;
  const std::string& mode = cal.mode;
  const int reps = cal.reps;
  const std::size_t bytes = std::size_t(o.quick ? 512 : 2048) << 20;
  const std::size_t n = bytes / sizeof(float4);
  device_mem a(bytes), out(sizeof(float) * 65536);
  check(cudaMemset(a.p, 0, bytes), "cudaMemset");
  event_pair ev;
  const int block = 512, blocks = p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / block) * 4;
  const double read = best_of(reps, [&] {
    const double s = ev.time_s([&] { read_stream<<<blocks, block>>>(static_cast<const float4*>(a.p), n, static_cast<float*>(out.p)); });
    check(cudaGetLastError(), "read_stream launch");
    return bytes / s / 1e9;
  });
  const double write = best_of(reps, [&] {
    const double s = ev.time_s([&] { write_stream<<<blocks, block>>>(static_cast<float4*>(a.p), n, 1.0f); });
    check(cudaGetLastError(), "write_stream launch");
    return bytes / s / 1e9;
  });
  set_measured(m.gpu, keys::dram_read_bw,
               {read, "GB/s", true,
                fmt::format("calibrate ({}): read-only kernel, 16-byte loads over {} MiB, best of {}", mode, bytes >> 20, reps)});
  set_measured(m.gpu, keys::dram_write_bw,
               {write, "GB/s", true,
                fmt::format("calibrate ({}): write-only kernel, 16-byte stores over {} MiB, best of {}", mode, bytes >> 20, reps)});
  cal.log(fmt::format("device memory read-only bandwidth:  {:.0f} GB/s", read));
  cal.log(fmt::format("device memory write-only bandwidth: {:.0f} GB/s", write));
  // L2: a buffer of a quarter of the L2, reread many times by every SM.
  const std::size_t l2_bytes = std::max<std::size_t>(1 << 20, static_cast<std::size_t>(p.l2CacheSize) / 4) / 16 * 16;
  const int rounds = o.quick ? 20 : 100;
  const double l2 = best_of(reps, [&] {
    const double s = ev.time_s([&] {
      l2_reread<<<blocks, block>>>(static_cast<const float4*>(a.p), l2_bytes / sizeof(float4), rounds, static_cast<float*>(out.p));
    });
    check(cudaGetLastError(), "l2_reread launch");
    return static_cast<double>(l2_bytes) * rounds / s / 1e9;
  });
  set_measured(m.gpu, keys::l2_bw,
               {l2, "GB/s", true,
                fmt::format("calibrate ({}): {} KiB (a quarter of L2) reread {} times with L2-only loads, best of {}",
                            mode, l2_bytes >> 10, rounds, reps)});
  cal.log(fmt::format("L2 read bandwidth:                  {:.0f} GB/s", l2));
}

// Host <-> device, pinned and pageable.
void measure_host_copies(const calibration& cal) {
  const auto& o = cal.o;
  auto& m = cal.m;
  const std::string& mode = cal.mode;
  const int reps = cal.reps;
  const std::size_t bytes = std::size_t(o.quick ? 64 : 256) << 20;
  device_mem d(bytes);
  pinned_mem pinned(bytes);
  std::vector<unsigned char> pageable(bytes, 1); // touched: the pages exist
  std::memset(pinned.p, 1, bytes);
  event_pair ev;
  auto measure = [&](void* dst, const void* src, cudaMemcpyKind kind, const char* key, const char* label) {
    const double gbps = best_of(reps, [&] {
      return bytes / ev.time_s([&] { check(cudaMemcpy(dst, src, bytes, kind), label); }) / 1e9;
    });
    set_measured(m.gpu, key,
                           {gbps, "GB/s", true,
                            fmt::format("calibrate ({}): cudaMemcpy {} of {} MiB, best of {}", mode, label, bytes >> 20, reps)});
    cal.log(fmt::format("{:<28} {:.1f} GB/s", std::string(label) + ":", gbps));
  };
  measure(d.p, pinned.p, cudaMemcpyHostToDevice, keys::h2d_pinned_bw, "H2D pinned");
  measure(d.p, pageable.data(), cudaMemcpyHostToDevice, keys::h2d_pageable_bw, "H2D pageable");
  measure(pinned.p, d.p, cudaMemcpyDeviceToHost, keys::d2h_pinned_bw, "D2H pinned");
  measure(pageable.data(), d.p, cudaMemcpyDeviceToHost, keys::d2h_pageable_bw, "D2H pageable");
}

// FMA throughput, FP32 and FP64, with the GPU full of resident threads.
void measure_fma(const calibration& cal) {
  const auto& o = cal.o;
  const auto& p = cal.p;
  auto& m = cal.m;
  const std::string& mode = cal.mode;
  const int reps = cal.reps;
  const int iters32 = o.quick ? 16384 : 65536, iters64 = o.quick ? 4096 : 16384;
  const double fp32 = fma_gflops<float>(p.multiProcessorCount, p.maxThreadsPerMultiProcessor, iters32, reps);
  const double fp64 = fma_gflops<double>(p.multiProcessorCount, p.maxThreadsPerMultiProcessor, iters64, reps);
  set_measured(m.gpu, keys::fp32_peak,
                         {fp32, "GFLOP/s", true,
                          fmt::format("calibrate ({}): independent FP32 FMA chains, best of {}", mode, reps)});
  set_measured(m.gpu, keys::fp64_peak,
                         {fp64, "GFLOP/s", true,
                          fmt::format("calibrate ({}): independent FP64 FMA chains, best of {}", mode, reps)});
  cal.log(fmt::format("FP32 FMA rate: {:.0f} GFLOP/s", fp32));
  cal.log(fmt::format("FP64 FMA rate: {:.0f} GFLOP/s", fp64));
}

// Launch latency: empty kernels back to back (host launch cost per launch), and one
// launch followed by a synchronization (the round trip).
void measure_launch_latency(const calibration& cal) {
  const auto& o = cal.o;
  auto& m = cal.m;
  const std::string& mode = cal.mode;
  using clk = std::chrono::steady_clock;
  const int n = o.quick ? 2000 : 20000;
  for (int i = 0; i < 100; ++i) empty_kernel<<<1, 1>>>();
  check(cudaDeviceSynchronize(), "warm-up launches");
  double best_us = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = clk::now();
    for (int i = 0; i < n; ++i) empty_kernel<<<1, 1>>>();
    check(cudaDeviceSynchronize(), "launches");
    best_us = std::min(best_us, std::chrono::duration<double, std::micro>(clk::now() - t0).count() / n);
  }
  check(cudaGetLastError(), "empty_kernel launch");
  std::vector<double> round_trips;
  const int m_sync = o.quick ? 200 : 2000;
  for (int i = 0; i < m_sync; ++i) {
    const auto t0 = clk::now();
    empty_kernel<<<1, 1>>>();
    check(cudaDeviceSynchronize(), "launch + sync");
    round_trips.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
  }
  std::nth_element(round_trips.begin(), round_trips.begin() + m_sync / 2, round_trips.end());
  set_measured(m.gpu, keys::launch_latency,
                         {best_us, "us", true,
                          fmt::format("calibrate ({}): {} empty kernels back to back, per launch, best of 3", mode, n)});
  set_measured(m.gpu, keys::launch_sync_latency,
                         {round_trips[m_sync / 2], "us", true,
                          fmt::format("calibrate ({}): empty kernel + cudaDeviceSynchronize, median of {}", mode, m_sync)});
  cal.log(fmt::format("launch latency (back to back): {:.2f} us per launch", best_us));
  cal.log(fmt::format("launch + synchronize:          {:.2f} us", round_trips[m_sync / 2]));
}

} // namespace

void calibrate_gpu(const calibrate_options& o, speedlab::device_model& m) {
  check(cudaSetDevice(o.device), "cudaSetDevice");
  check(cudaFree(nullptr), "context creation");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, o.device), "cudaGetDeviceProperties");
  const calibration cal{o, p, m, o.quick ? "quick" : "full", o.quick ? 5 : 20};
  measure_device_copy(cal);
  measure_dram_and_l2(cal);
  measure_host_copies(cal);
  measure_fma(cal);
  measure_launch_latency(cal);
}

} // namespace speedlab::device::detail
