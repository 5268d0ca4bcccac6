#include "profilers/cupti/cupti_records.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "model/counters.hpp"
#include "model/trace_fold.hpp"

namespace speedlab::profiling::cupti {
namespace {

std::uint64_t shift(std::uint64_t t, std::int64_t offset) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(t) + offset);
}

bool usable(std::uint64_t start, std::uint64_t end) { return start != 0 && end != 0 && end >= start; }


// The record with its interval moved onto the host clock; nullopt (counted incomplete) when
// CUPTI left the interval unfinished.
template <class Record, class Activity>
std::optional<Record> timed(const Activity& a, std::int64_t offset, parsed_records& out) {
  if (!usable(a.start, a.end)) {
    ++out.incomplete;
    return std::nullopt;
  }
  Record r;
  r.start = shift(a.start, offset);
  r.end = shift(a.end, offset);
  return r;
}

// Where device work ran.
template <class Record, class Activity>
void place(Record& r, const Activity& a) {
  r.device = a.deviceId;
  r.context = a.contextId;
  r.stream = a.streamId;
}

template <class Memcpy>
void add_memcpy(const Memcpy& m, std::uint32_t correlation, std::int64_t offset, parsed_records& out) {
  auto r = timed<trace::memcpy_record>(m, offset, out);
  if (!r) return;
  place(*r, m);
  r->correlation = correlation;
  r->bytes = m.bytes;
  r->copy_kind = m.copyKind;
  r->src_kind = m.srcKind;
  r->dst_kind = m.dstKind;
  r->async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  out.trace.memcpys.push_back(*r);
}

} // namespace

void parsed_records::append(parsed_records&& other) {
  trace::append_records(trace, std::move(other.trace));
  markers.insert(markers.end(), std::make_move_iterator(other.markers.begin()),
                 std::make_move_iterator(other.markers.end()));
  incomplete += other.incomplete;
  ignored += other.ignored;
}

namespace {

void add_kernel(const kernel_activity& k, std::int64_t offset, parsed_records& out) {
  auto r = timed<trace::kernel_record>(k, offset, out);
  if (!r) return;
  place(*r, k);
  r->correlation = k.correlationId;
  r->mangled_name = k.name ? k.name : ""; // demangled in finalize, once per distinct name
  r->grid = {k.gridX, k.gridY, k.gridZ};
  r->block = {k.blockX, k.blockY, k.blockZ};
  r->registers_per_thread = k.registersPerThread;
  r->static_shared_bytes = k.staticSharedMemory;
  r->dynamic_shared_bytes = k.dynamicSharedMemory;
  r->local_bytes_per_thread = static_cast<std::int32_t>(k.localMemoryPerThread);
  out.trace.kernels.push_back(std::move(*r));
}

void add_memset(const memset_activity& m, std::int64_t offset, parsed_records& out) {
  auto r = timed<trace::memset_record>(m, offset, out);
  if (!r) return;
  place(*r, m);
  r->correlation = m.correlationId;
  r->bytes = m.bytes;
  r->value = m.value;
  r->memory_kind = static_cast<std::uint8_t>(m.memoryKind);
  out.trace.memsets.push_back(*r);
}

void add_api_call(const api_activity& a, bool driver, std::int64_t offset, parsed_records& out) {
  auto r = timed<trace::api_record>(a, offset, out);
  if (!r) return;
  r->process = a.processId;
  r->thread = a.threadId;
  r->correlation = a.correlationId;
  r->callback_id = a.cbid;
  r->driver = driver;
  r->return_value = static_cast<std::int32_t>(a.returnValue);
  out.trace.api_calls.push_back(std::move(*r));
}

void add_sync(const sync_activity& s, std::int64_t offset, parsed_records& out) {
  auto r = timed<trace::sync_record>(s, offset, out);
  if (!r) return;
  r->context = s.contextId;
  r->stream = s.streamId;
  r->correlation = s.correlationId;
  r->type = static_cast<std::uint8_t>(s.type);
  out.trace.syncs.push_back(*r);
}

void add_marker(const marker_activity& m, std::int64_t offset, parsed_records& out) {
  marker_event e;
  e.id = m.id;
  e.flags = m.flags;
  e.timestamp = m.timestamp ? shift(m.timestamp, offset) : 0;
  if (m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    e.process = m.objectId.pt.processId;
    e.thread = m.objectId.pt.threadId;
  }
  if (m.name) e.name = m.name;
  if (m.domain) e.domain = m.domain;
  out.markers.push_back(std::move(e));
}

} // namespace

void parse_record(const CUpti_Activity& record, std::int64_t offset, parsed_records& out) {
  switch (record.kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    add_kernel(reinterpret_cast<const kernel_activity&>(record), offset, out);
    return;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto& m = reinterpret_cast<const memcpy_activity&>(record);
    // The runtime correlation id links the copy to its cuda* call; fall back to the driver's.
    add_memcpy(m, m.runtimeCorrelationId ? m.runtimeCorrelationId : m.correlationId, offset, out);
    return;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY2: {
    const auto& m = reinterpret_cast<const peer_copy_activity&>(record);
    add_memcpy(m, m.correlationId, offset, out);
    return;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    add_memset(reinterpret_cast<const memset_activity&>(record), offset, out);
    return;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: {
    add_api_call(reinterpret_cast<const api_activity&>(record), record.kind == CUPTI_ACTIVITY_KIND_DRIVER, offset, out);
    return;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    add_sync(reinterpret_cast<const sync_activity&>(record), offset, out);
    return;
  }
  case CUPTI_ACTIVITY_KIND_OVERHEAD: {
    const auto& o = reinterpret_cast<const overhead_activity&>(record);
    if (!usable(o.start, o.end)) {
      ++out.incomplete;
      return;
    }
    out.trace.overheads.push_back({shift(o.start, offset), shift(o.end, offset), overhead_kind_name(o.overheadKind)});
    return;
  }
  case CUPTI_ACTIVITY_KIND_MARKER: {
    add_marker(reinterpret_cast<const marker_activity&>(record), offset, out);
    return;
  }
  default: ++out.ignored; return;
  }
}

std::string cupti_api_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name) return name;
  return (domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver_api_" : "runtime_api_") + std::to_string(id);
}

void finalize(parsed_records&& in, const api_name_fn& api_name, trace::device_trace& out,
              std::uint64_t* unpaired_markers) {
  auto& t = in.trace;

  std::map<std::pair<int, std::uint32_t>, std::string> names;
  for (auto& a : t.api_calls) {
    const auto domain = a.driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    auto [it, inserted] = names.try_emplace({static_cast<int>(domain), a.callback_id});
    if (inserted) it->second = api_name ? api_name(domain, a.callback_id) : std::string{};
    a.name = it->second;
  }

  std::unordered_map<std::string, std::string> demangled;
  for (auto& k : t.kernels) {
    auto [it, inserted] = demangled.try_emplace(k.mangled_name);
    // The one demangling (model/counters): `_Z` names only, so an extern "C" kernel named
    // `d` or `f` stays itself (the ABI demangler reads a bare `d` as "double").
    if (inserted) it->second = speedlab::counters::demangled_name(k.mangled_name);
    k.name = it->second;
  }

  // Copies issued by a cuda*Async call are async whatever CUPTI's flag says (the flag is
  // clear for pageable copies that the driver made synchronous).
  std::unordered_map<std::uint32_t, const trace::api_record*> runtime_calls;
  for (const auto& a : t.api_calls)
    if (!a.driver) runtime_calls.emplace(a.correlation, &a);
  for (auto& m : t.memcpys)
    if (auto it = runtime_calls.find(m.correlation); it != runtime_calls.end())
      m.async = it->second->name.find("Async") != std::string::npos;

  std::unordered_map<std::uint32_t, marker_event> open;
  std::uint64_t unpaired = 0;
  for (auto& m : in.markers) {
    if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
      open[m.id] = std::move(m);
    } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
      auto it = open.find(m.id);
      if (it == open.end() || it->second.timestamp == 0 || m.timestamp < it->second.timestamp) {
        ++unpaired;
        continue;
      }
      const auto& s = it->second;
      t.ranges.push_back({s.timestamp, m.timestamp, s.process, s.thread, s.domain, s.name});
      open.erase(it);
    }
  }
  unpaired += open.size();
  if (unpaired_markers) *unpaired_markers += unpaired;

  trace::sort_by_start(t);
  trace::append_records(out, std::move(t));
}

std::string overhead_kind_name(std::uint32_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver_compiler";
  case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "cupti_buffer_flush";
  case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "cupti_instrumentation";
  case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "cupti_resource";
  case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "runtime_triggered_module_loading";
  case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy_function_loading";
  case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command_buffer_full";
  case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity_buffer_request";
  case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "uvm_activity_init";
  default: return "unknown";
  }
}

clock_map clock_map::from_pairs(std::uint64_t cupti0, std::uint64_t steady0, std::uint64_t cupti1,
                                std::uint64_t steady1) {
  clock_map m{cupti0, steady0, 1.0};
  // Rates far from 1 mean a bad read, not a real clock difference (NTP slews <= 500 ppm).
  if (cupti1 > cupti0 + 1000000 && steady1 > steady0) {
    const double rate = static_cast<double>(steady1 - steady0) / static_cast<double>(cupti1 - cupti0);
    if (rate > 0.999 && rate < 1.001) m.rate = rate;
  }
  return m;
}

std::uint64_t clock_map::operator()(std::uint64_t t) const {
  if (t == 0) return 0; // "no timestamp" stays so
  const double delta = static_cast<double>(static_cast<std::int64_t>(t - cupti0)) * rate;
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(steady0) + std::llround(delta));
}

void map_clock(parsed_records& r, const clock_map& m) {
  auto each = [&m](auto& records) {
    for (auto& x : records) {
      x.start = m(x.start);
      x.end = m(x.end);
    }
  };
  auto& t = r.trace;
  each(t.kernels);
  each(t.memcpys);
  each(t.memsets);
  each(t.api_calls);
  each(t.syncs);
  each(t.ranges);
  each(t.overheads);
  for (auto& e : r.markers) e.timestamp = m(e.timestamp);
}

} // namespace speedlab::profiling::cupti
