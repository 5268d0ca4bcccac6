// What analysis reads from a device trace: windows, kernels, copies, overlap, syncs.
#include "speedlab_catch.hpp"

#include "analysis_test_support.hpp"
#include "analysis/trace_summary.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

TEST_CASE("only records inside repetition windows count", "[analysis][trace]") {
  trace::device_trace t;
  t.repetitions = {window(1000, 2000, 1200, 1800), window(3000, 4000, 3200, 3800)};
  t.kernels.push_back(kernel("warmup", 100, 200, 1, 32));   // before the first window
  t.kernels.push_back(kernel("k", 1300, 1500, 64, 256));
  t.kernels.push_back(kernel("k", 3300, 3400, 64, 256));
  t.kernels.push_back(kernel("check", 3850, 3900, 1, 32));  // after the compute phase
  t.memcpys.push_back(copy(trace::copy_htod, 1000, 1200, 4096, trace::mem_pageable));
  t.memcpys.push_back(copy(trace::copy_htod, 3000, 3200, 4096, trace::mem_pinned, true));
  t.memcpys.push_back(copy(trace::copy_dtoh, 2500, 2600, 4096, trace::mem_pageable)); // between windows
  const auto s = analysis::summarize_trace(t);
  CHECK(s.repetitions == 2);
  CHECK(s.kernel_launches == 3);
  CHECK(s.kernel_ns == 350);
  REQUIRE(s.kernels.size() == 2);
  CHECK(s.kernels[0].name == "k");        // longest total first
  CHECK(s.kernels[0].launches == 2);
  CHECK(s.kernels[0].median_ns == 150);
  CHECK(s.kernels[0].compute_phase_launches == 2);
  CHECK(s.kernels[1].compute_phase_launches == 0);
  CHECK(s.h2d.count == 2);
  CHECK(s.h2d.pageable_count == 1);
  CHECK(s.h2d.pinned_ns == 200);
  CHECK(s.h2d.async_count == 1);
  CHECK(s.d2h.count == 0);
  CHECK(s.per_rep(s.kernel_ns) == 175);
}

TEST_CASE("copy/kernel overlap and synchronization counts", "[analysis][trace]") {
  trace::device_trace t;
  t.kernels.push_back(kernel("a", 0, 100, 1, 32));
  t.kernels.push_back(kernel("b", 50, 150, 1, 32)); // overlaps a: union 0-150
  t.memcpys.push_back(copy(trace::copy_htod, 120, 220, 10, trace::mem_pinned, true));
  t.memcpys.push_back(copy(trace::copy_dtoh, 300, 400, 10, trace::mem_pinned, true));
  trace::sync_record y;
  y.start = 400;
  y.end = 450;
  t.syncs = {y, y};
  trace::api_record a;
  a.name = "cudaDeviceSynchronize_v3020";
  a.start = 400;
  a.end = 460;
  t.api_calls.push_back(a);
  a.name = "cudaLaunchKernel_v7000";
  t.api_calls.push_back(a);
  const auto s = analysis::summarize_trace(t);
  CHECK(s.repetitions == 1);
  CHECK_FALSE(s.has_windows);
  CHECK(s.copy_kernel_overlap_ns == 30);
  CHECK(s.sync_count == 2);  // records and API calls describe the same waits: the larger count
  CHECK(s.sync_ns == 100);
  CHECK(s.launch_calls == 1);
}
