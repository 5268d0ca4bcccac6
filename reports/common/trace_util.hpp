// Names for trace records as the timeline exporters write them. The trace model keeps
// CUPTI's numbering (profilers/trace.hpp); these helpers name and remap it.
#pragma once

#include <cstdint>
#include <string>

#include "model/trace.hpp"

namespace speedlab::reports {

// CUPTI copy kind as "HtoD", "DtoH", "DtoD", ... ("Unknown" otherwise).
const char* copy_kind_short(std::uint8_t cupti_copy_kind);
// CUPTI copy kind as Nsight labels it: "Host-to-Device", "Device-to-Host", ...
const char* copy_kind_label(std::uint8_t cupti_copy_kind);
// CUPTI memory kind as "Pageable", "Pinned", "Device", ...
const char* memory_kind_label(std::uint8_t cupti_memory_kind);
// Nsight Systems numbers memory kinds one lower than CUPTI, with unknown last:
// nsys = cupti - 1, and CUPTI's 0 (unknown) becomes 7.
int nsys_memory_kind(std::uint8_t cupti_memory_kind);
// "Memcpy HtoD (Pageable -> Device)", the name Kineto/PyTorch traces use.
std::string memcpy_event_name(const trace::memcpy_record& m);
// "Memset (Device)".
std::string memset_event_name(const trace::memset_record& m);
// CUPTI synchronization type: "Event sync", "Stream wait event", "Stream sync", "Context sync".
const char* sync_type_label(std::uint8_t type);
// The base name of a demangled kernel: "void ns::k<float>(float*, int)" -> "k".
std::string kernel_short_name(const std::string& demangled);

} // namespace speedlab::reports
