// speedlab's own NVTX tool. NVTX v3 calls in the speedlab executable (the runner's phase
// ranges in domain "speedlab", and anything else linked statically into it) reach this
// recorder through NVTX's static injection (InitializeInjectionNvtx2_fnptr), unless
// NVTX_INJECTION64_PATH names another tool (nsys, or libcupti): that tool then wins and
// gets the ranges instead. Timestamps are steady-clock nanoseconds, thread ids are gettid().
//
//   profiling::nvtx_capture capture;          // start recording
//   ... NVTX push/pop, start/end ranges ...
//   auto ranges = capture.take();              // ranges that ended since the capture began
//
// Plugins are shared libraries with hidden symbols: each carries its own NVTX state and
// does not see the static injection, so their own ranges reach only a tool named by
// NVTX_INJECTION64_PATH.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.hpp"

namespace speedlab::profiling {

class nvtx_capture {
public:
  nvtx_capture();
  ~nvtx_capture();
  nvtx_capture(const nvtx_capture&) = delete;
  nvtx_capture& operator=(const nvtx_capture&) = delete;

  // Completed ranges whose end is at or after this capture's start, in order of their end.
  std::vector<trace::range_record> take() const;
  std::uint64_t start_ns() const { return m_start; }

  // True once some NVTX instance in this process initialized with speedlab as its tool.
  static bool tool_attached();
  // Ranges lost because the store hit its cap (1 million ranges) while capturing.
  static std::uint64_t dropped();
  // Moves out every range completed so far, for writers that stream ranges in batches
  // (the injection library); a later take() no longer sees them.
  static std::vector<trace::range_record> drain();

private:
  std::uint64_t m_start;
};

// The NVTX v3 tool entry point for a shared library named by NVTX_INJECTION64_PATH
// (NVTX calls InitializeInjectionNvtx2(getExportTable); the library forwards it here).
// Returns 1 when speedlab became the tool, 0 otherwise (or without NVTX headers).
int initialize_nvtx_tool(void* get_export_table) noexcept;

// Steady-clock nanoseconds (CLOCK_MONOTONIC), the time base of every trace record.
std::uint64_t steady_now_ns();

} // namespace speedlab::profiling
