// The neutral trace model: what any profiler backend records for one measured point.
// Every timestamp is nanoseconds on the host's steady clock (CLOCK_MONOTONIC), the clock
// the runner's phase timers use, so host phases and device activity share one time base.
// Enumerations keep CUPTI's numbering (documented per field); exporters remap.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace speedlab::trace {

struct kernel_record {
  std::uint64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::string name;          // demangled
  std::string mangled_name;
  std::array<std::int32_t, 3> grid{1, 1, 1};
  std::array<std::int32_t, 3> block{1, 1, 1};
  std::int32_t registers_per_thread = 0;
  std::int32_t static_shared_bytes = 0;
  std::int32_t dynamic_shared_bytes = 0;
  std::int32_t local_bytes_per_thread = 0;
};

// CUPTI_ACTIVITY_MEMCPY_KIND_*: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA,
// 8 DtoD, 9 HtoH, 10 PtoP.  Memory kinds are CUPTI_ACTIVITY_MEMORY_KIND_*: 0 unknown,
// 1 pageable, 2 pinned, 3 device, 4 array, 5 managed, 6 device static, 7 managed static.
enum copy_kind : std::uint8_t { copy_unknown = 0, copy_htod = 1, copy_dtoh = 2, copy_dtod = 8, copy_htoh = 9, copy_ptop = 10 };
enum memory_kind : std::uint8_t { mem_unknown = 0, mem_pageable = 1, mem_pinned = 2, mem_device = 3, mem_array = 4, mem_managed = 5 };

struct memcpy_record {
  std::uint64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::uint64_t bytes = 0;
  std::uint8_t copy_kind = 0;
  std::uint8_t src_kind = 0;
  std::uint8_t dst_kind = 0;
  bool async = false; // issued by an *Async call
};

struct memset_record {
  std::uint64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::uint64_t bytes = 0;
  std::uint32_t value = 0;
  std::uint8_t memory_kind = 0;
};

// A CUDA runtime or driver API call on a host thread.
struct api_record {
  std::uint64_t start = 0, end = 0;
  std::uint32_t process = 0, thread = 0, correlation = 0;
  std::uint32_t callback_id = 0;
  std::string name;           // e.g. "cudaLaunchKernel_v7000", as CUPTI names it
  bool driver = false;        // driver API (cu*) rather than runtime (cuda*)
  std::int32_t return_value = 0;
};

// CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_*: 1 event synchronize, 2 stream wait event,
// 3 stream synchronize, 4 context synchronize.
struct sync_record {
  std::uint64_t start = 0, end = 0;
  std::uint32_t context = 0, stream = 0, correlation = 0;
  std::uint8_t type = 0;
};

// An NVTX push/pop or start/end range (speedlab's phases and the plugin's own ranges).
struct range_record {
  std::uint64_t start = 0, end = 0;
  std::uint32_t process = 0, thread = 0;
  std::string domain;   // "speedlab" for the runner's phases
  std::string name;
};

// Time CUPTI spent on itself (buffer flushes, instrumentation).
struct overhead_record {
  std::uint64_t start = 0, end = 0;
  std::string kind;
};

// One repetition's window and phases as the runner timed them.
struct repetition_window {
  std::uint64_t start = 0, end = 0;
  std::uint64_t transfer_in_end = 0, compute_end = 0; // phase boundaries inside [start, end]
};

struct device_trace {
  std::string backend;              // "cupti", "none", ...
  std::string note;                 // why GPU data is missing, if it is
  std::uint64_t dropped_records = 0;
  std::uint64_t buffer_bytes = 0;   // CUPTI buffer memory used at the peak
  std::uint32_t process = 0;
  std::vector<kernel_record> kernels;
  std::vector<memcpy_record> memcpys;
  std::vector<memset_record> memsets;
  std::vector<api_record> api_calls;
  std::vector<sync_record> syncs;
  std::vector<range_record> ranges;
  std::vector<overhead_record> overheads;
  std::vector<repetition_window> repetitions;

  bool has_gpu_activity() const { return !kernels.empty() || !memcpys.empty() || !memsets.empty(); }
};

// The "version" key of a saved trace; a reader refuses a newer one.
inline constexpr int trace_format_version = 1;

void to_json(nlohmann::json& j, const device_trace& t);
void from_json(const nlohmann::json& j, device_trace& t);

} // namespace speedlab::trace
