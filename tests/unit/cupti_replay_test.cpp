// The CUPTI record parser, fed with records built from the real cupti_activity.h structs
// (no GPU needed), and the backend's degrade path on a machine without a driver.
#include "speedlab_catch.hpp"

#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_CUPTI

#include <cstring>
#include <map>

#include "profilers/cupti/cupti_records.hpp"
#include "profilers/profiler.hpp"
#include "analysis/time_split.hpp"

using namespace speedlab;
namespace cp = speedlab::profiling::cupti;

namespace {

template <class T>
T zeroed() {
  T t;
  std::memset(&t, 0, sizeof t);
  return t;
}

const CUpti_Activity& as_activity(const void* p) { return *static_cast<const CUpti_Activity*>(p); }

cp::kernel_activity kernel(std::uint64_t start, std::uint64_t end, std::uint32_t correlation, const char* name) {
  auto k = zeroed<cp::kernel_activity>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 13;
  k.correlationId = correlation;
  k.name = name;
  k.gridX = 1024;
  k.gridY = 1;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 128;
  k.dynamicSharedMemory = 2048;
  k.localMemoryPerThread = 16;
  return k;
}

cp::api_activity api_call(CUpti_ActivityKind kind, CUpti_CallbackId cbid, std::uint64_t start, std::uint64_t end,
                          std::uint32_t correlation) {
  auto a = zeroed<cp::api_activity>();
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 500;
  a.threadId = 501;
  a.correlationId = correlation;
  return a;
}

cp::memcpy_activity copy(std::uint64_t start, std::uint64_t end, std::uint8_t kind, std::uint32_t driver_corr,
                         std::uint32_t runtime_corr, bool async_flag) {
  auto m = zeroed<cp::memcpy_activity>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = kind;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = async_flag ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  m.bytes = 1u << 20;
  m.start = start;
  m.end = end;
  m.streamId = 13;
  m.correlationId = driver_corr;
  m.runtimeCorrelationId = runtime_corr;
  return m;
}

cp::marker_activity marker(std::uint32_t id, std::uint32_t flags, std::uint64_t t, const char* name, const char* domain) {
  auto m = zeroed<cp::marker_activity>();
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.timestamp = t;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 500;
  m.objectId.pt.threadId = 501;
  m.name = name;
  m.domain = domain;
  return m;
}

std::string fake_names(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  static const std::map<CUpti_CallbackId, std::string> runtime = {
      {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync_v3020"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize_v3020"}};
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? "cuLaunchKernel" : "cu?";
  auto it = runtime.find(id);
  return it == runtime.end() ? "cuda?" : it->second;
}

} // namespace

TEST_CASE("cupti replay: records become trace records on the shifted clock", "[cupti_replay]") {
  const std::int64_t offset = -1000; // CUPTI time 5000 is steady time 4000
  cp::parsed_records parsed;

  const auto launch = api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 5000, 5100, 1);
  const auto drv = api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 5010, 5090, 1);
  const auto k = kernel(6000, 9000, 1, "_Z11spin_kernelmPi");
  const auto sync_call = api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 5200, 9100, 2);
  // A synchronous cudaMemcpy whose record has CUPTI's async flag set: the API name wins.
  const auto memcpy_call = api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 9200, 9800, 3);
  const auto h2d = copy(9300, 9700, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 33, 3, true);
  // No runtime record for this one: CUPTI's flag decides.
  const auto orphan = copy(9900, 9950, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 44, 0, true);

  auto ms = zeroed<cp::memset_activity>();
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.value = 7;
  ms.bytes = 4096;
  ms.start = 10000;
  ms.end = 10100;
  ms.correlationId = 4;
  ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

  auto p2p = zeroed<cp::peer_copy_activity>();
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p2p.bytes = 64;
  p2p.start = 10200;
  p2p.end = 10300;
  p2p.correlationId = 5;

  auto sync = zeroed<cp::sync_activity>();
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sync.start = 5300;
  sync.end = 9050;
  sync.correlationId = 2;
  sync.contextId = 1;

  auto over = zeroed<cp::overhead_activity>();
  over.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  over.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  over.start = 11000;
  over.end = 11500;

  const auto m_start = marker(77, CUPTI_ACTIVITY_FLAG_MARKER_START, 4900, "w/v n=1: compute", "speedlab");
  const auto m_end = marker(77, CUPTI_ACTIVITY_FLAG_MARKER_END, 10500, nullptr, nullptr);
  const auto m_lonely = marker(78, CUPTI_ACTIVITY_FLAG_MARKER_END, 10600, nullptr, nullptr);

  auto incomplete = kernel(0, 0, 9, "_Z4lostv");
  auto device = zeroed<CUpti_ActivityDevice5>();
  device.kind = CUPTI_ACTIVITY_KIND_DEVICE;

  for (const void* r : std::initializer_list<const void*>{&launch, &drv, &k, &sync_call, &memcpy_call, &h2d, &orphan, &ms,
                                                          &p2p, &sync, &over, &m_start, &m_end, &m_lonely, &incomplete,
                                                          &device})
    cp::parse_record(as_activity(r), offset, parsed);
  CHECK(parsed.incomplete == 1);
  CHECK(parsed.ignored == 1);
  CHECK(parsed.markers.size() == 3);

  trace::device_trace t;
  std::uint64_t unpaired = 0;
  cp::finalize(std::move(parsed), &fake_names, t, &unpaired);
  CHECK(unpaired == 1);

  REQUIRE(t.kernels.size() == 1);
  const auto& kr = t.kernels[0];
  CHECK(kr.start == 5000);
  CHECK(kr.end == 8000);
  CHECK(kr.name == "spin_kernel(unsigned long, int*)");
  CHECK(kr.mangled_name == "_Z11spin_kernelmPi");
  CHECK(kr.grid == std::array<std::int32_t, 3>{1024, 1, 1});
  CHECK(kr.block == std::array<std::int32_t, 3>{256, 1, 1});
  CHECK(kr.registers_per_thread == 40);
  CHECK(kr.static_shared_bytes == 128);
  CHECK(kr.dynamic_shared_bytes == 2048);
  CHECK(kr.local_bytes_per_thread == 16);
  CHECK(kr.stream == 13);

  REQUIRE(t.api_calls.size() == 4);
  std::map<std::string, const trace::api_record*> by_name;
  for (const auto& a : t.api_calls) by_name[a.name] = &a;
  REQUIRE(by_name.count("cudaLaunchKernel_v7000"));
  CHECK(by_name["cudaLaunchKernel_v7000"]->correlation == kr.correlation); // launch -> kernel
  CHECK(by_name["cudaLaunchKernel_v7000"]->start == 4000);
  CHECK(by_name["cudaLaunchKernel_v7000"]->thread == 501);
  CHECK(by_name["cudaLaunchKernel_v7000"]->process == 500);
  REQUIRE(by_name.count("cuLaunchKernel"));
  CHECK(by_name["cuLaunchKernel"]->driver);

  REQUIRE(t.memcpys.size() == 3);
  CHECK(t.memcpys[0].correlation == 3); // the runtime correlation id, not the driver's 33
  CHECK_FALSE(t.memcpys[0].async);      // cudaMemcpy: synchronous whatever the flag says
  CHECK(t.memcpys[0].copy_kind == trace::copy_htod);
  CHECK(t.memcpys[0].src_kind == trace::mem_pageable);
  CHECK(t.memcpys[0].dst_kind == trace::mem_device);
  CHECK(t.memcpys[1].correlation == 44);
  CHECK(t.memcpys[1].async);
  CHECK(t.memcpys[2].copy_kind == trace::copy_ptop);

  REQUIRE(t.memsets.size() == 1);
  CHECK(t.memsets[0].value == 7);
  CHECK(t.memsets[0].bytes == 4096);
  CHECK(t.memsets[0].memory_kind == trace::mem_device);
  CHECK(t.memsets[0].start == 9000);

  REQUIRE(t.syncs.size() == 1);
  CHECK(t.syncs[0].type == 4);
  CHECK(t.syncs[0].correlation == 2);

  REQUIRE(t.overheads.size() == 1);
  CHECK(t.overheads[0].kind == "cupti_buffer_flush");

  REQUIRE(t.ranges.size() == 1);
  CHECK(t.ranges[0].name == "w/v n=1: compute");
  CHECK(t.ranges[0].domain == "speedlab");
  CHECK(t.ranges[0].start == 3900);
  CHECK(t.ranges[0].end == 9500);
  CHECK(t.ranges[0].thread == 501);

  // The replayed trace feeds the time split: launch is api, the synchronize waits for the kernel.
  t.process = 500;
  t.repetitions.push_back({3900, 9500, 0, 0});
  const auto splits = analysis::compute_time_splits(t);
  REQUIRE(splits.size() == 1);
  CHECK(splits[0].kernel == 3000);
  // The pageable cudaMemcpy 8200-8800 is H2D time throughout: 400 copying + 200 staging.
  CHECK(splits[0].h2d == 600);
  CHECK(splits[0].api == 100);       // cudaLaunchKernel 4000-4100
  CHECK(splits[0].d2h == 50);
  CHECK(splits[0].memset == 100);
  CHECK(splits[0].copy_other == 100);
  // cudaDeviceSynchronize 4200-8100 around the kernel
  CHECK(splits[0].sync == 900);
  CHECK(splits[0].host == 750);
  CHECK(splits[0].gpu_busy() + splits[0].gpu_idle() == splits[0].wall_ns);
}

TEST_CASE("cupti replay: batches append and keep their counts", "[cupti_replay]") {
  cp::parsed_records a, b;
  const auto k1 = kernel(100, 200, 1, "plain_c_kernel");
  const auto k2 = kernel(50, 60, 2, "plain_c_kernel");
  cp::parse_record(as_activity(&k1), 0, a);
  cp::parse_record(as_activity(&k2), 0, b);
  b.incomplete = 3;
  a.append(std::move(b));
  CHECK(a.incomplete == 3);
  trace::device_trace t;
  cp::finalize(std::move(a), nullptr, t);
  REQUIRE(t.kernels.size() == 2);
  CHECK(t.kernels[0].start == 50); // sorted by start
  CHECK(t.kernels[0].name == "plain_c_kernel"); // not mangled: kept as is
}

TEST_CASE("cupti replay: only _Z names are demangled, a one-letter C kernel keeps its name", "[cupti_replay]") {
  // The ABI demangler alone reads a bare `d` as the type "double" and `f` as "float".
  cp::parsed_records a;
  const auto k1 = kernel(100, 200, 1, "d");
  const auto k2 = kernel(300, 400, 2, "f");
  const auto k3 = kernel(500, 600, 3, "_Z6kernelPf");
  for (const auto* k : std::initializer_list<const cp::kernel_activity*>{&k1, &k2, &k3}) cp::parse_record(as_activity(k), 0, a);
  trace::device_trace t;
  cp::finalize(std::move(a), nullptr, t);
  REQUIRE(t.kernels.size() == 3);
  CHECK(t.kernels[0].name == "d");
  CHECK(t.kernels[1].name == "f");
  CHECK(t.kernels[2].name == "kernel(float*)");
  CHECK(t.kernels[2].mangled_name == "_Z6kernelPf");
}

TEST_CASE("cupti replay: CUPTI's own callback names", "[cupti_replay]") {
  CHECK(cp::cupti_api_name(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) ==
        "cudaLaunchKernel_v7000");
  CHECK(cp::cupti_api_name(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) == "cudaMemcpy_v3020");
  CHECK(cp::overhead_kind_name(CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER) == "driver_compiler");
}

TEST_CASE("cupti backend degrades without a GPU driver", "[cupti_replay]") {
  auto prof = profiling::make_profiler("cupti");
  REQUIRE(prof);
  const std::string why = prof->unavailable_reason();
  if (why.empty()) {
    WARN("a driver is present: the no-driver path is not exercised here");
    return;
  }
  WARN("unavailable_reason: " << why);
  CHECK(why.find("driver") != std::string::npos);
  // The runner would stop here; a session anyway must not crash and must say why.
  std::unique_ptr<profiling::session> s;
  try {
    s = prof->create_session({});
  } catch (const std::exception& e) {
    WARN("create_session: " << e.what());
    CHECK(std::string(e.what()).size() > 10);
    return;
  }
  s->start();
  s->repetition_begin();
  s->repetition_end();
  s->stop();
  profiling::profile_data data;
  s->collect(data);
  CHECK(data.device.backend == "cupti");
  CHECK_FALSE(data.device.note.empty());
  CHECK(data.device.kernels.empty());
  INFO(data.device.note);
  CHECK(data.device.note.find("unavailable") != std::string::npos);
}

TEST_CASE("cupti clock map: offset and rate from two (CUPTI, steady) pairs", "[cupti]") {
  // CUPTI's clock 1000 ns behind steady at the first pair and running 100 ppm slow.
  const auto m = cp::clock_map::from_pairs(5'000'000, 5'001'000, 1'005'000'000, 1'005'101'000);
  CHECK(m.rate == Approx(1.0001).epsilon(1e-9));
  CHECK(m(5'000'000) == 5'001'000);
  CHECK(m(1'005'000'000) == 1'005'101'000);
  CHECK(m(505'000'000) == 505'051'000); // halfway: half the drift
  CHECK(m(0) == 0);                      // "no timestamp" stays so

  // A bad read (rate far from 1) or pairs too close together: the offset alone.
  CHECK(cp::clock_map::from_pairs(0, 100, 2'000'000, 4'000'100).rate == 1.0);
  CHECK(cp::clock_map::from_pairs(1000, 2000, 1500, 2600).rate == 1.0);

  cp::parsed_records parsed;
  auto& t = parsed.trace;
  t.kernels.push_back({});
  t.kernels[0].start = 5'000'000;
  t.kernels[0].end = 1'005'000'000;
  t.api_calls.push_back({});
  t.api_calls[0].start = 505'000'000;
  t.api_calls[0].end = 505'000'100;
  parsed.markers.push_back({});
  parsed.markers[0].timestamp = 5'000'000;
  cp::map_clock(parsed, m);
  CHECK(parsed.markers[0].timestamp == 5'001'000);
  CHECK(t.kernels[0].start == 5'001'000);
  CHECK(t.kernels[0].end == 1'005'101'000);
  CHECK(t.api_calls[0].start == 505'051'000);
  CHECK(t.api_calls[0].end == 505'051'100);
}

#endif
