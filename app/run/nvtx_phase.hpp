// NVTX ranges for the runner's phases, in domain "speedlab", so the same program under
// `nsys profile` (or speedlab's own CUPTI backend) shows each phase on the timeline.
// Without NVTX headers at build time the range is a no-op.
#pragma once

#include <string>

#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace speedlab::app {

#if SPEEDLAB_HAS_NVTX
inline nvtxDomainHandle_t speedlab_nvtx_domain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("speedlab");
  return domain;
}

class nvtx_range {
public:
  explicit nvtx_range(const std::string& name) {
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name.c_str();
    nvtxDomainRangePushEx(speedlab_nvtx_domain(), &attr);
  }
  ~nvtx_range() { nvtxDomainRangePop(speedlab_nvtx_domain()); }
  nvtx_range(const nvtx_range&) = delete;
  nvtx_range& operator=(const nvtx_range&) = delete;
};
// The hooks behind the SDK's scoped_range: plugins' own ranges, recorded by this executable.
inline void plugin_range_push(const char* name) { nvtxRangePushA(name); }
inline void plugin_range_pop() { nvtxRangePop(); }
#else
inline void plugin_range_push(const char*) {}
inline void plugin_range_pop() {}
class nvtx_range {
public:
  explicit nvtx_range(const std::string&) {}
};
#endif

} // namespace speedlab::app
