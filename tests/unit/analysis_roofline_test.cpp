// Roofline placement: bound, percent of bound, which roof, measured or not.
#include "speedlab_catch.hpp"

#include "analysis_test_support.hpp"
#include "analysis/roofline.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

TEST_CASE("placement picks the lower roof at the point's intensity", "[analysis][roofline]") {
  const analysis::ceiling bw{3000, "GB/s", true, "cal"}, fl{60000, "GFLOP/s", false, "est"};
  analysis::roofline_point r;
  // 1 GB and 0.25 GFLOP in 1 ms: intensity 0.25 < ridge 20: memory-bound at 1000/3000.
  analysis::place(r, 1e9, 0.25e9, 1e6, &bw, &fl);
  CHECK(r.bound == "memory");
  CHECK(r.achieved_gbps == Approx(1000));
  CHECK(r.achieved_gflops == Approx(250));
  CHECK(r.percent_of_bound == Approx(100.0 / 3));
  CHECK(r.roof_measured);
  CHECK(r.roof_source == "cal");
  // 1 MB and 30 GFLOP in 1 ms: compute-bound at 30000/60000, an estimated roof.
  analysis::place(r, 1e6, 30e9, 1e6, &bw, &fl);
  CHECK(r.bound == "compute");
  CHECK(r.percent_of_bound == Approx(50));
  CHECK_FALSE(r.roof_measured);
  // No flops declared (a transpose): memory-bound.
  analysis::place(r, 1e9, 0, 1e6, &bw, &fl);
  CHECK(r.bound == "memory");
  // No roofs: unknown.
  analysis::place(r, 1e9, 1e9, 1e6, nullptr, nullptr);
  CHECK(r.bound == "unknown");
  CHECK(r.percent_of_bound == 0);
}

TEST_CASE("GPU points: the phase from kernel time, kernels sharing its work", "[analysis][roofline]") {
  auto p = cuda_point("reduce", "cuda_tree", {{"n", "1000"}}, make_split(1e6, 0, 0, 0, 0, 1e6));
  p.work.bytes_read = 1.5e9;
  trace::device_trace t;
  t.kernels.push_back(kernel("partial", 0, 900000, 4096, 256));
  t.kernels.push_back(kernel("final", 900000, 1000000, 1, 256));
  const auto s = analysis::summarize_trace(t);
  const auto rows = analysis::roofline_for_point(p, &s, h100());
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].kernel.empty());
  CHECK(rows[0].achieved_gbps == Approx(1500));
  CHECK(rows[0].percent_of_bound == Approx(50));
  CHECK(rows[1].kernel == "partial");
  CHECK(rows[1].time_ns == 900000);
  CHECK(rows[1].achieved_gbps == Approx(1500)); // 90% of the work in 90% of the time
  CHECK(rows[1].note.find("shared among 2 kernels") != std::string::npos);
  CHECK(rows[2].kernel == "final");
}

TEST_CASE("CPU points: serial against one thread's bandwidth and one core", "[analysis][roofline]") {
  auto s = make_point("vector", "serial", "serial", {{"n", "1000"}}, spread(100e6, 0.01));
  s.work.bytes_read = 1e9; // 10 GB/s of the 15 GB/s one thread reaches
  const auto rs = analysis::roofline_for_point(s, nullptr, h100());
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].processor == "cpu");
  CHECK(rs[0].roof_gbps == 15);
  CHECK(rs[0].roof_gflops == Approx(2000.0 / 16));
  CHECK(rs[0].percent_of_bound == Approx(100 * 10.0 / 15));

  auto t = make_point("vector", "threads", "threads", {{"n", "1000"}}, spread(20e6, 0.01), 8);
  t.work.bytes_read = 1e9; // 50 GB/s of 100
  const auto rt = analysis::roofline_for_point(t, nullptr, h100());
  REQUIRE(rt.size() == 1);
  CHECK(rt[0].roof_gbps == 100);
  CHECK(rt[0].roof_gflops == Approx(1000));
  CHECK(rt[0].percent_of_bound == Approx(50));

  auto none = make_point("vector", "serial", "serial", {{"n", "1000"}}, spread(1e6, 0.01));
  CHECK(analysis::roofline_for_point(none, nullptr, h100()).empty()); // no work declared
}
