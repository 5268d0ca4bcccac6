// transfer-bound, pageable-memory, copies-not-overlapped: each fires and stays quiet.
#include "speedlab_catch.hpp"

#include "analysis_test_support.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {
constexpr std::uint64_t ms = 1000000;

// One repetition: H2D 0-6 ms, kernel 6-6.5 ms, D2H 6.5-8.5 ms, host until 10 ms.
trace::device_trace lesson_trace(std::uint8_t host_memory) {
  trace::device_trace t;
  t.backend = "test";
  t.repetitions.push_back(window(0, 10 * ms, 6 * ms, 6 * ms + ms / 2));
  t.memcpys.push_back(copy(trace::copy_htod, 0, 6 * ms, 128u << 20, host_memory));
  t.kernels.push_back(kernel("vector_add", 6 * ms, 6 * ms + ms / 2, 65536, 256));
  t.memcpys.push_back(copy(trace::copy_dtoh, 6 * ms + ms / 2, 8 * ms + ms / 2, 64u << 20, host_memory));
  return t;
}
} // namespace

TEST_CASE("transfer-bound fires when copies dominate and says what removing them gains", "[rules][transfer]") {
  const auto p = cuda_point("vector", "cuda_lesson", {{"n", "16777216"}}, make_split(0.5e6, 6e6, 2e6, 0, 0, 1.5e6));
  const auto r = run({p}, h100());
  const auto f = findings_of(r, "transfer-bound");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(10.0 / 2.0));
  CHECK(f[0].severity == speedlab::severity::critical);
  CHECK(!f[0].threshold.empty());
  CHECK(!f[0].explanation.empty());
  CHECK(!f[0].next_experiment.empty());
  CHECK(evidence(f[0], "copy share").find("80.0%") != std::string::npos);
}

TEST_CASE("transfer-bound and pageable-memory show the copy calls' bandwidth when staging is a real part",
          "[rules][transfer]") {
  // The split (GPU-idle time in the synchronous copy calls included) says 8 ms of copies; the
  // GPU's DMA took 6 + 2 ms in lesson_trace. Make the calls twice as long: 12 + 4 ms.
  auto p = cuda_point("vector", "cuda_lesson", {{"n", "16777216"}}, make_split(0.5e6, 12e6, 4e6, 0, 0, 1.5e6));
  auto t = lesson_trace(trace::mem_pageable);
  t.repetitions[0].end = 18 * ms;
  auto r = run({p}, h100(), {{p.id, t}});
  auto f = findings_of(r, "transfer-bound");
  REQUIRE(f.size() == 1);
  // 128 MiB in 12 ms: 11.2 GB/s; the GPU copied for 6 ms of them.
  CHECK(evidence(f[0], "H2D bandwidth of the copy calls").find("11.2 GB/s") != std::string::npos);
  CHECK(evidence(f[0], "H2D bandwidth of the copy calls").find("6.00 ms of the 12.0 ms") != std::string::npos);
  auto g = findings_of(r, "pageable-memory");
  REQUIRE(g.size() == 1);
  CHECK(evidence(g[0], "pageable copy calls per repetition").find("16.0 ms") != std::string::npos);

  // Split and DMA agree: no extra line.
  p = cuda_point("vector", "cuda_lesson", {{"n", "16777216"}}, make_split(0.5e6, 6e6, 2e6, 0, 0, 1.5e6));
  t = lesson_trace(trace::mem_pageable);
  r = run({p}, h100(), {{p.id, t}});
  f = findings_of(r, "transfer-bound");
  REQUIRE(f.size() == 1);
  CHECK(evidence(f[0], "H2D bandwidth of the copy calls").empty());
}

TEST_CASE("transfer-bound stays quiet for device-resident data", "[rules][transfer]") {
  const auto p = cuda_point("vector", "cuda_resident", {{"n", "16777216"}}, make_split(9e6, 0, 0, 0, 0, 1e6));
  CHECK(findings_of(run({p}, h100()), "transfer-bound").empty());
  // Copies present but under half the time.
  const auto q = cuda_point("vector", "cuda_half", {{"n", "16777216"}}, make_split(6e6, 2e6, 1e6, 0, 0, 1e6));
  CHECK(findings_of(run({q}, h100()), "transfer-bound").empty());
}

TEST_CASE("pageable-memory projects the gain from measured pinned vs pageable bandwidth", "[rules][transfer]") {
  const auto p = cuda_point("vector", "cuda_lesson", {{"n", "16777216"}}, make_split(0.5e6, 6e6, 2e6, 0, 0, 1.5e6));
  const auto r = run({p}, h100(), {{p.id, lesson_trace(trace::mem_pageable)}});
  const auto f = findings_of(r, "pageable-memory");
  REQUIRE(f.size() == 1);
  // H2D: 6 ms x (1 - 10/25) = 3.6 ms saved; D2H: 2 ms x (1 - 20/25) = 0.4 ms saved.
  CHECK(f[0].estimated_gain == Approx(10.0 / 6.0).epsilon(1e-6));
  CHECK(evidence(f[0], "caution").empty());

  // Without measured bandwidths the projection is marked as an estimate.
  auto est = h100(false);
  const auto fe = findings_of(run({p}, est, {{p.id, lesson_trace(trace::mem_pageable)}}), "pageable-memory");
  REQUIRE(fe.size() == 1);
  CHECK(!evidence(fe[0], "caution").empty());

  // Without the bandwidths at all: still reported, no gain claimed.
  auto none = h100();
  none.gpu.erase(keys::h2d_pageable_bw);
  none.gpu.erase(keys::d2h_pageable_bw);
  const auto fn = findings_of(run({p}, none, {{p.id, lesson_trace(trace::mem_pageable)}}), "pageable-memory");
  REQUIRE(fn.size() == 1);
  CHECK(fn[0].estimated_gain == 1.0);
}

TEST_CASE("pageable-memory stays quiet for pinned copies and without a trace", "[rules][transfer]") {
  const auto p = cuda_point("vector", "cuda_pinned", {{"n", "16777216"}}, make_split(0.5e6, 6e6, 2e6, 0, 0, 1.5e6));
  CHECK(findings_of(run({p}, h100(), {{p.id, lesson_trace(trace::mem_pinned)}}), "pageable-memory").empty());
  CHECK(findings_of(run({p}, h100()), "pageable-memory").empty());
}

TEST_CASE("copies-not-overlapped fires for sequential copies and kernels", "[rules][transfer]") {
  // 3 ms H2D, 4 ms kernel, 1 ms D2H, 2 ms host: overlapping hides min(4, 4) = 4 ms.
  const auto p = cuda_point("conv", "cuda_sync", {{"n", "4096"}}, make_split(4e6, 3e6, 1e6, 0, 0, 2e6));
  trace::device_trace t;
  t.repetitions.push_back(window(0, 10 * ms, 3 * ms, 7 * ms));
  t.memcpys.push_back(copy(trace::copy_htod, 0, 3 * ms, 64u << 20, trace::mem_pinned));
  t.kernels.push_back(kernel("conv2d", 3 * ms, 7 * ms, 4096, 256));
  t.memcpys.push_back(copy(trace::copy_dtoh, 7 * ms, 8 * ms, 16u << 20, trace::mem_pinned));
  const auto f = findings_of(run({p}, h100(), {{p.id, t}}), "copies-not-overlapped");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(10.0 / 6.0));
  CHECK(evidence(f[0], "asynchronous copies") == "0 of 2");
}

TEST_CASE("copies-not-overlapped stays quiet when copies already overlap kernels", "[rules][transfer]") {
  const auto p = cuda_point("conv", "cuda_streams", {{"n", "4096"}}, make_split(4e6, 3e6, 1e6, 0, 0, 2e6));
  trace::device_trace t;
  t.repetitions.push_back(window(0, 10 * ms));
  // Chunked pipeline: the copies run while kernels run (async, two streams).
  t.kernels.push_back(kernel("conv2d", 1 * ms, 5 * ms, 4096, 256));
  t.memcpys.push_back(copy(trace::copy_htod, 0, 3 * ms, 64u << 20, trace::mem_pinned, true));
  t.memcpys.push_back(copy(trace::copy_dtoh, 4 * ms, 6 * ms, 16u << 20, trace::mem_pinned, true));
  CHECK(findings_of(run({p}, h100(), {{p.id, t}}), "copies-not-overlapped").empty());
  // Small copies: below the 10% share.
  const auto q = cuda_point("conv", "cuda_small", {{"n", "4096"}}, make_split(8e6, 0.3e6, 0.2e6, 0, 0, 1.5e6));
  CHECK(findings_of(run({q}, h100()), "copies-not-overlapped").empty());
}
