// Speedups across variants: ratio, interval and verdict from the measured spread.
#include "speedlab_catch.hpp"

#include "analysis_test_support.hpp"
#include "analysis/analysis_stats.hpp"
#include "analysis/comparisons.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {
const analysis::speedup* find(const analysis::analysis_result& r, const std::string& variant, const std::string& baseline) {
  for (const auto& s : r.speedups)
    if (s.variant == variant && s.baseline == baseline) return &s;
  return nullptr;
}
} // namespace

TEST_CASE("verdict_for reads the interval, not the point estimate", "[analysis][speedup]") {
  using analysis::verdict_for;
  CHECK(verdict_for(1.2, 1.5, 0.03) == speedlab::verdict::faster);
  CHECK(verdict_for(0.5, 0.8, 0.03) == speedlab::verdict::slower);
  CHECK(verdict_for(0.99, 1.02, 0.03) == speedlab::verdict::same);
  CHECK(verdict_for(1.001, 1.02, 0.03) == speedlab::verdict::same); // above 1 but practically equal
  CHECK(verdict_for(0.8, 1.3, 0.03) == speedlab::verdict::unclear);
  CHECK(verdict_for(0, 0, 0.03) == speedlab::verdict::unclear);
}

TEST_CASE("speedups over serial and threads with bootstrap intervals", "[analysis][speedup]") {
  const std::map<std::string, std::string> n = {{"n", "1048576"}};
  const auto s = make_point("vector", "serial", "serial", n, spread(10e6, 0.02));
  const auto t = make_point("vector", "threads", "threads", n, spread(2.5e6, 0.02), 4);
  const auto g = make_point("vector", "cuda", "cuda", n, spread(0.5e6, 0.02));
  const auto same = make_point("vector", "serial_copy", "cuda", n, spread(10.02e6, 0.02));
  const auto r = run({s, t, g, same}, h100());

  const auto* ts = find(r, "threads", "serial");
  REQUIRE(ts);
  CHECK(ts->ratio == Approx(4.0));
  CHECK(ts->method == "bootstrap");
  CHECK(ts->ci_low < ts->ratio);
  CHECK(ts->ci_high > ts->ratio);
  CHECK(ts->verdict == speedlab::verdict::faster);

  const auto* gs = find(r, "cuda", "serial");
  REQUIRE(gs);
  CHECK(gs->ratio == Approx(20.0));
  CHECK(gs->verdict == speedlab::verdict::faster);
  const auto* gt = find(r, "cuda", "threads");
  REQUIRE(gt);
  CHECK(gt->ratio == Approx(5.0));

  const auto* eq = find(r, "serial_copy", "serial");
  REQUIRE(eq);
  CHECK(eq->verdict == speedlab::verdict::same);

  // threads over threads and serial over threads are not reported.
  CHECK(find(r, "threads", "threads") == nullptr);
  CHECK(find(r, "serial", "threads") == nullptr);
}

TEST_CASE("overlapping noise gives unclear, never a verdict from two medians", "[analysis][speedup]") {
  const std::map<std::string, std::string> n = {{"n", "1000"}};
  const auto s = make_point("hist", "serial", "serial", n, spread(1.0e6, 0.3));
  const auto g = make_point("hist", "cuda", "cuda", n, spread(0.9e6, 0.3));
  const auto r = run({s, g}, h100());
  const auto* gs = find(r, "cuda", "serial");
  REQUIRE(gs);
  CHECK(gs->ratio > 1.0);        // the medians alone would say "faster"
  CHECK(gs->verdict == speedlab::verdict::unclear);

  // A single sample each: no spread, no verdict.
  const auto s1 = make_point("hist", "serial", "serial", {{"n", "2000"}}, {1e6});
  const auto g1 = make_point("hist", "cuda", "cuda", {{"n", "2000"}}, {0.1e6});
  const auto r1 = run({s1, g1}, h100());
  const auto* one = find(r1, "cuda", "serial");
  REQUIRE(one);
  CHECK(one->method == "none");
  CHECK(one->verdict == speedlab::verdict::unclear);
}

TEST_CASE("few samples use the medians' intervals", "[analysis][speedup]") {
  const auto s = make_point("hist", "serial", "serial", {{"n", "3000"}}, spread(1e6, 0.01, 4));
  const auto g = make_point("hist", "cuda", "cuda", {{"n", "3000"}}, spread(0.5e6, 0.01, 4));
  const auto r = run({s, g}, h100());
  const auto* gs = find(r, "cuda", "serial");
  REQUIRE(gs);
  CHECK(gs->method == "median-ci");
  CHECK(gs->ci_low < 2.0);
  CHECK(gs->ci_high > 2.0);
  CHECK(gs->verdict == speedlab::verdict::faster);
}

TEST_CASE("speedups are deterministic and match across the threads parameter", "[analysis][speedup]") {
  const auto s = make_point("mc", "serial", "serial", {{"M", "5000"}}, spread(4e6, 0.05));
  const auto t2 = make_point("mc", "threads", "threads", {{"M", "5000"}, {"threads", "2"}}, spread(2.1e6, 0.05), 2);
  const auto t8 = make_point("mc", "threads", "threads", {{"M", "5000"}, {"threads", "8"}}, spread(0.6e6, 0.05), 8);
  const auto g = make_point("mc", "cuda", "cuda", {{"M", "5000"}}, spread(0.3e6, 0.05));
  const auto a = run({s, t2, t8, g}, h100());
  const auto b = run({s, t2, t8, g}, h100());
  REQUIRE(a.speedups.size() == b.speedups.size());
  for (std::size_t i = 0; i < a.speedups.size(); ++i) {
    CHECK(a.speedups[i].ci_low == b.speedups[i].ci_low);
    CHECK(a.speedups[i].ci_high == b.speedups[i].ci_high);
  }
  // The threads baseline is the point with the most threads.
  const auto* gt = find(a, "cuda", "threads");
  REQUIRE(gt);
  CHECK(gt->baseline_point_id == t8.id);
  CHECK(gt->ratio == Approx(2.0));
  // Both thread counts are compared with serial.
  int vs_serial = 0;
  for (const auto& x : a.speedups) vs_serial += x.variant == "threads" && x.baseline == "serial";
  CHECK(vs_serial == 2);
}

TEST_CASE("failed points take part in nothing", "[analysis][speedup]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "1"}}, spread(1e6, 0.01));
  auto g = make_point("vector", "cuda", "cuda", {{"n", "1"}}, spread(0.5e6, 0.01));
  g.status = point_status::crashed;
  const auto r = run({s, g}, h100());
  CHECK(r.speedups.empty());
}

TEST_CASE("the exact bootstrap of the median matches small cases and resampling", "[analysis][speedup]") {
  namespace st = speedlab::analysis::stats;
  // n = 2: a resample's median is a, b or (a + b) / 2 with 1/4, 1/4, 1/2.
  auto d2 = st::median_bootstrap_distribution({1.0, 3.0});
  REQUIRE(d2.value == std::vector<double>{1.0, 2.0, 3.0});
  CHECK(d2.cumulative[0] == Approx(0.25));
  CHECK(d2.cumulative[1] == Approx(0.75));
  // n = 3: P(median = x1) = P(two or three draws of x1) = 7/27.
  auto d3 = st::median_bootstrap_distribution({5.0, 1.0, 3.0});
  REQUIRE(d3.value == std::vector<double>{1.0, 3.0, 5.0});
  CHECK(d3.cumulative[0] == Approx(7.0 / 27));
  CHECK(d3.cumulative[1] == Approx(20.0 / 27));
  CHECK(d3.cumulative[2] == 1.0);

  // Against 20000 resamples, for odd and even sample counts.
  for (int n : {15, 16, 20}) {
    std::vector<double> b, v;
    for (int i = 0; i < n; ++i) {
      b.push_back(100 + 7.0 * ((i * 37) % n) + (i % 3));
      v.push_back(50 + 5.0 * ((i * 11) % n) + (i % 2));
    }
    const auto exact = st::bootstrap_ratio_ci(b, v);
    const auto mc = st::bootstrap_ratio_ci_resampled(b, v, 20000, 42);
    INFO("n = " << n);
    CHECK(exact.low == Approx(mc.low).epsilon(0.02));
    CHECK(exact.high == Approx(mc.high).epsilon(0.02));
  }
}

TEST_CASE("best C++ over best Python: the fastest valid of each language per workload and parameters",
          "[analysis][speedup][python]") {
  const std::map<std::string, std::string> n = {{"n", "1048576"}};
  auto python = [&](const std::string& variant, const std::string& kind, double wall) {
    auto p = make_point("vector", variant, kind, n, spread(wall, 0.01));
    p.language = "python";
    return p;
  };
  const auto serial = make_point("vector", "serial", "serial", n, spread(10e6, 0.01));
  const auto cuda = make_point("vector", "cuda", "cuda", n, spread(0.5e6, 0.01));
  const auto numpy = python("py-numpy", "serial", 12e6);
  const auto cupy = python("py-cupy", "cuda", 2e6);
  auto fast_but_wrong = python("py-wrong", "cuda", 0.1e6);
  fast_but_wrong.status = point_status::invalid; // an invalid point never wins
  auto other_op = make_point("vector", "cuda", "cuda", {{"n", "1048576"}, {"op", "add"}}, spread(0.4e6, 0.01));
  const auto r = run({serial, cuda, numpy, cupy, fast_but_wrong, other_op}, h100());

  REQUIRE(r.cpp_over_python.size() == 1); // op=add has no Python point: no comparison
  const auto& s = r.cpp_over_python[0];
  CHECK(s.variant == "cuda");
  CHECK(s.baseline == "py-cupy");
  CHECK(s.ratio == Approx(4.0).epsilon(0.02));
  CHECK(s.ci_low <= s.ratio);
  CHECK(s.ci_high >= s.ratio);
  CHECK(s.verdict == speedlab::verdict::faster);
}
