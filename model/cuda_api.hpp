// The one classifier of CUDA API calls (runtime and driver, by the name CUPTI gives them).
// The time split, the trace summary, the rules and the program-level analysis all ask it,
// so "what synchronizes" or "what launches" means the same thing everywhere.
//
//   trace::api_kind k = trace::classify_api("cudaMemcpy_v3020");   // api_kind::copy_sync
//   if (trace::blocks_host(k)) ...                                  // true
#pragma once

#include <cstdint>
#include <string_view>

namespace speedlab::trace {

enum class api_kind : std::uint8_t {
  launch,      // a kernel or graph launch (cudaLaunchKernel*, cuLaunch*, cudaGraphLaunch, <<<>>>)
  synchronize, // waits for the device, a stream or an event (*Synchronize*)
  poll,        // asks whether an event or a stream is done, without waiting (cudaEventQuery, ...)
  copy_sync,   // a memcpy without Async: returns once the copy is done (pageable: after staging)
  copy_async,  // a memcpy*Async
  memset,      // cudaMemset*, cuMemsetD*
  alloc,       // device, host-pinned, managed or pool allocation
  free,        // the matching frees
  other,       // everything else (attribute queries, stream/event creation, ...)
};

// "cudaMemcpy_v3020" -> "cudaMemcpy": CUPTI's version suffix (a numeric "_vNNNN") removed.
std::string_view strip_api_version(std::string_view name);

api_kind classify_api(std::string_view name);

// A graph launch (cudaGraphLaunch, cuGraphLaunch): one call, many kernels under its correlation id.
constexpr bool is_graph_launch(std::string_view name) { return name.find("GraphLaunch") != std::string_view::npos; }

// True where the calling thread waits for device work to finish: explicit synchronizations
// and synchronous copies.
constexpr bool blocks_host(api_kind k) { return k == api_kind::synchronize || k == api_kind::copy_sync; }

// True for the calls the time split and the synchronization counts take as synchronizing:
// waits, and polls (CUPTI's SYNCHRONIZATION records count an event or stream query as a
// synchronization; the injection library records the call instead of that record).
constexpr bool synchronizes(api_kind k) { return k == api_kind::synchronize || k == api_kind::poll; }

// The calls whose time the time split gives to waiting (sync, or the copy of a synchronous
// copy) rather than to "other CUDA API": the host-blocking calls and the polls.
constexpr bool split_as_waiting(api_kind k) { return blocks_host(k) || synchronizes(k); }

std::string_view to_string(api_kind k);

// True for a collective-communication kernel (NCCL's ncclKernel_*, ncclDevKernel_*, ...: "nccl"
// in any case). The rank analysis counts them as communication; the counters collector never
// replays one (a collective replayed alone waits for the other ranks forever).
bool is_collective_kernel(std::string_view kernel_name);

} // namespace speedlab::trace
