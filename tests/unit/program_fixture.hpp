// Synthetic processes of a profiled program for the program analysis and report tests: a
// loop that does everything wrong (an allocation, a tiny kernel and a synchronous pageable
// copy per step), a clean one, a process that never used CUDA and a truncated one.
#pragma once

#include <cstdint>
#include <string>

#include "model/profile.hpp"
#include "unit/analysis_test_support.hpp"

namespace speedlab::test_program {

constexpr std::uint64_t us = 1000;
constexpr std::uint64_t ms = 1000 * us;

inline trace::api_record api(std::uint64_t start, std::uint64_t end, std::uint32_t thread, std::uint32_t correlation,
                             std::string name) {
  trace::api_record a;
  a.start = start;
  a.end = end;
  a.process = thread;
  a.thread = thread;
  a.correlation = correlation;
  a.name = std::move(name);
  return a;
}

// A kernel of 256 blocks of 128 threads on a stream, launched by call `correlation`.
inline trace::kernel_record kernel(std::uint64_t start, std::uint64_t end, std::uint32_t stream, std::uint32_t correlation,
                                   std::string name) {
  trace::kernel_record k = analysis_test::kernel(name, start, end, 256, 128);
  k.stream = stream;
  k.correlation = correlation;
  return k;
}

// `steps` iterations of 1 ms from t = 1 ms: range "step" [0, 900 us); cudaMalloc [0, 50);
// launch [60, 90) of a 10 us kernel at [100, 110); cudaMemcpy [120, 400) whose pageable D2H
// copy runs [300, 400); cudaFree [410, 460). GPU idle: 190 us inside cudaMemcpy, then
// 700 us to the next step's kernel.
inline profile::process_profile bad_loop(std::uint32_t pid = 100, int steps = 120, std::string kernel_name = "tiny_kernel") {
  profile::process_profile p;
  p.process.pid = pid;
  p.process.parent_pid = 1;
  p.process.host = "node";
  p.process.command_line = {"/usr/bin/python3", "loop.py", "--steps", std::to_string(steps)};
  p.process.used_cuda = true;
  p.process.start_ns = 0;
  p.process.end_ns = (1 + static_cast<std::uint64_t>(steps)) * ms;
  p.process.exit_code = 0;
  p.trace.backend = "cupti";
  p.trace.process = pid;
  std::uint32_t corr = 1;
  for (int i = 0; i < steps; ++i) {
    const std::uint64_t t = ms + static_cast<std::uint64_t>(i) * ms;
    p.trace.ranges.push_back({t, t + 900 * us, pid, pid, "", "step"});
    p.trace.api_calls.push_back(api(t, t + 50 * us, pid, corr++, "cudaMalloc_v3020"));
    const std::uint32_t launch = corr++;
    p.trace.api_calls.push_back(api(t + 60 * us, t + 90 * us, pid, launch, "cudaLaunchKernel_v7000"));
    p.trace.kernels.push_back(kernel(t + 100 * us, t + 110 * us, 7, launch, kernel_name));
    const std::uint32_t copy = corr++;
    p.trace.api_calls.push_back(api(t + 120 * us, t + 400 * us, pid, copy, "cudaMemcpy_v3020"));
    trace::memcpy_record m = analysis_test::copy(trace::copy_dtoh, t + 300 * us, t + 400 * us, 4 << 20, trace::mem_pageable);
    m.stream = 7;
    m.correlation = copy;
    p.trace.memcpys.push_back(m);
    p.trace.api_calls.push_back(api(t + 410 * us, t + 460 * us, pid, corr++, "cudaFree_v3020"));
  }
  p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
  return p;
}

// 50 back-to-back 1 ms kernels queued ahead, buffers allocated before the first launch, one
// pinned asynchronous copy at the end: nothing for the program rules to find.
inline profile::process_profile clean_loop(std::uint32_t pid = 200) {
  profile::process_profile p;
  p.process.pid = pid;
  p.process.parent_pid = 1;
  p.process.host = "node";
  p.process.command_line = {"./clean"};
  p.process.used_cuda = true;
  p.process.start_ns = 0;
  p.process.end_ns = 55 * ms;
  p.process.exit_code = 0;
  p.trace.process = pid;
  std::uint32_t corr = 1;
  for (int i = 0; i < 3; ++i)
    p.trace.api_calls.push_back(api(100 * us + i * 100 * us, 150 * us + i * 100 * us, pid, corr++, "cudaMalloc_v3020"));
  for (int i = 0; i < 50; ++i) {
    const std::uint64_t t = 2 * ms + static_cast<std::uint64_t>(i) * ms;
    const std::uint32_t launch = corr++;
    p.trace.api_calls.push_back(api(ms + i * 5 * us, ms + i * 5 * us + 4 * us, pid, launch, "cudaLaunchKernel_v7000"));
    p.trace.kernels.push_back(kernel(t, t + ms, 0, launch, "big_kernel"));
  }
  trace::memcpy_record m = analysis_test::copy(trace::copy_dtoh, 52 * ms, 52 * ms + 200 * us, 1 << 20, trace::mem_pinned, true);
  m.correlation = corr++;
  p.trace.memcpys.push_back(m);
  p.trace.api_calls.push_back(api(ms + 300 * us, ms + 305 * us, pid, m.correlation, "cudaMemcpyAsync_v3020"));
  p.trace.api_calls.push_back(api(ms + 310 * us, 52 * ms + 250 * us, pid, corr++, "cudaDeviceSynchronize_v3020"));
  p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
  return p;
}

inline profile::process_profile shell(std::uint32_t pid = 50) {
  profile::process_profile p;
  p.process.pid = pid;
  p.process.parent_pid = 1;
  p.process.command_line = {"/bin/sh", "run.sh"};
  p.process.start_ns = 0;
  p.process.end_ns = 130 * ms;
  p.process.exit_code = 3;
  return p;
}

} // namespace speedlab::test_program
