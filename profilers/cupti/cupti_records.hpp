// CUPTI activity records -> neutral trace records. This is the replay seam: it takes the
// raw CUpti_Activity structs exactly as CUPTI delivers them, so tests build records from
// the real cupti_activity.h structs and check the conversion without a GPU.
// Internal to profilers/cupti (it includes cupti.h); nothing outside this folder sees it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cupti.h>

#include "model/trace.hpp"

#if !defined(CUPTI_API_VERSION) || CUPTI_API_VERSION < 130000
#error "speedlab's CUPTI backend needs CUDA 13 CUPTI headers (CUPTI_API_VERSION >= 130000)"
#endif

namespace speedlab::profiling::cupti {

// Record layouts of the CUPTI these headers describe (13.0: Kernel10, Memcpy6, ...). Later
// 13.x releases append fields, so a newer libcupti of the same major still parses.
using kernel_activity = CUpti_ActivityKernel10;
using memcpy_activity = CUpti_ActivityMemcpy6;
using peer_copy_activity = CUpti_ActivityMemcpyPtoP4;
using memset_activity = CUpti_ActivityMemset4;
using api_activity = CUpti_ActivityAPI;
using sync_activity = CUpti_ActivitySynchronization2;
using overhead_activity = CUpti_ActivityOverhead3;
using marker_activity = CUpti_ActivityMarker2;

// The runtime API calls that launch a kernel (the counters backend reads the same list).
inline constexpr CUpti_CallbackId launch_callback_ids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
};

// One NVTX marker record (start or end half of a range), paired up in finalize().
struct marker_event {
  std::uint32_t id = 0;
  std::uint32_t flags = 0;
  std::uint64_t timestamp = 0;
  std::uint32_t process = 0, thread = 0;
  std::string name, domain;
};

// Records parsed from one or more CUPTI buffers. API names are resolved later, so parsing
// (which runs in CUPTI's buffer callback) stays cheap and makes no CUPTI calls.
struct parsed_records {
  trace::device_trace trace;
  std::vector<marker_event> markers;
  std::uint64_t incomplete = 0; // records without usable timestamps: counted as dropped
  std::uint64_t ignored = 0;    // kinds speedlab does not use

  void append(parsed_records&& other);
};

// Converts one record. `clock_offset_ns` is added to every CUPTI timestamp (0 when CUPTI
// already reports the steady clock through the registered timestamp callback).
void parse_record(const CUpti_Activity& record, std::int64_t clock_offset_ns, parsed_records& out);

// A linear map from CUPTI's own clock to the host steady clock, from (CUPTI, steady) pairs
// read at session start and stop: an offset, plus the rate difference of the two clocks
// (NTP slews the steady clock; CUPTI's clock may not be slewed).
struct clock_map {
  std::uint64_t cupti0 = 0, steady0 = 0;
  double rate = 1; // steady ns per CUPTI ns
  static clock_map from_pairs(std::uint64_t cupti0, std::uint64_t steady0, std::uint64_t cupti1, std::uint64_t steady1);
  std::uint64_t operator()(std::uint64_t t) const;
};

// Moves every parsed record (markers included) onto the steady clock; call it before adding
// anything speedlab timed itself.
void map_clock(parsed_records& r, const clock_map& m);

// (domain is CUPTI_CB_DOMAIN_RUNTIME_API or CUPTI_CB_DOMAIN_DRIVER_API) -> "cudaMemcpy_v3020"
using api_name_fn = std::function<std::string(CUpti_CallbackDomain, CUpti_CallbackId)>;
std::string cupti_api_name(CUpti_CallbackDomain domain, CUpti_CallbackId id); // real CUPTI lookup

// Completes parsed records into `out`: names API calls (cached per id), demangles kernel
// names, pairs marker start/end into ranges, and sets memcpy `async` from the correlated
// runtime call's name ("...Async...") where one exists, else from CUPTI's async flag.
// Markers without their other half are dropped and counted in `unpaired_markers`.
void finalize(parsed_records&& in, const api_name_fn& api_name, trace::device_trace& out,
              std::uint64_t* unpaired_markers = nullptr);

std::string overhead_kind_name(std::uint32_t kind);

} // namespace speedlab::profiling::cupti
