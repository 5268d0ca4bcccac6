// When the injection library's periodic flush must force CUPTI's buffers out.
//
// A periodic flush takes only buffers whose records are all complete
// (cuptiActivityFlushAll(0)): a forced one would also hand over records of work still in
// flight, without timestamps, and CUPTI never sends those again. But a GPU that is never
// idle at a flush keeps a record in flight in its newest buffer, so that buffer, and every
// kernel and copy record in it, would stay in CUPTI until the buffer fills or the program
// ends; a program killed meanwhile would lose them all. So: when the flushes have delivered
// launches and copy calls for longer than `force_after_ns` without the GPU records that end
// after them, the next flush forces. It loses at most the records of work running at that
// moment, counted as dropped, instead of everything since the last delivered GPU record.
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/cuda_api.hpp"
#include "model/trace.hpp"

namespace speedlab::inject {

class flush_policy {
public:
  explicit flush_policy(std::uint64_t force_after_ns) : m_force_after_ns(force_after_ns) {}
  std::uint64_t force_after_ns() const { return m_force_after_ns; }

  // What one delivered batch says: the latest end of a GPU record (kernel, copy, memset) and
  // of a call that puts work on the GPU (launch, copy, memset), on the batch's clock.
  void delivered(const trace::device_trace& batch, std::uint64_t now_ns) {
    std::uint64_t gpu_end = 0;
    for (const auto& k : batch.kernels) gpu_end = std::max(gpu_end, k.end);
    for (const auto& c : batch.memcpys) gpu_end = std::max(gpu_end, c.end);
    for (const auto& m : batch.memsets) gpu_end = std::max(gpu_end, m.end);
    if (gpu_end > m_gpu_end) {
      m_gpu_end = gpu_end;
      m_gpu_delivered_ns = now_ns;
    }
    for (const auto& a : batch.api_calls) {
      const auto kind = trace::classify_api(a.name);
      if (kind == trace::api_kind::launch || kind == trace::api_kind::copy_sync ||
          kind == trace::api_kind::copy_async || kind == trace::api_kind::memset)
        m_work_call_start = std::max(m_work_call_start, a.start);
    }
    if (m_gpu_delivered_ns == 0) m_gpu_delivered_ns = now_ns; // the clock starts at the first flush
  }

  // True when GPU records are held back: a call that put work on the GPU started after the
  // end of every GPU record delivered, and no GPU record came for force_after_ns.
  bool should_force(std::uint64_t now_ns) const {
    return m_force_after_ns > 0 && m_work_call_start > m_gpu_end && now_ns >= m_gpu_delivered_ns &&
           now_ns - m_gpu_delivered_ns >= m_force_after_ns;
  }

  // After a forced flush: whatever it delivered, wait a whole period before the next one.
  void forced(std::uint64_t now_ns) { m_gpu_delivered_ns = now_ns; }

private:
  std::uint64_t m_force_after_ns;
  std::uint64_t m_gpu_end = 0, m_work_call_start = 0, m_gpu_delivered_ns = 0;
};

} // namespace speedlab::inject
