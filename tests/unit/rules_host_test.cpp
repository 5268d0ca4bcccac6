// poor-scaling, problem-too-small, noisy-measurement, dropped-records: each fires and
// stays quiet; plus the registry itself.
#include "speedlab_catch.hpp"

#include "analysis_test_support.hpp"
#include "analysis/rules.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

TEST_CASE("poor-scaling fires below 50% parallel efficiency, with Karp-Flatt", "[rules][host]") {
  const auto s = make_point("mandel", "serial", "serial", {{"n", "512"}}, spread(100e6, 0.01));
  auto t = make_point("mandel", "threads", "threads", {{"n", "512"}}, spread(50e6, 0.01), 8);
  t.cpu_utilization = 7.5;
  const auto f = findings_of(run({s, t}, h100()), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].point_id == t.id);
  CHECK(f[0].estimated_gain == Approx(0.8 / 0.25));
  CHECK(evidence(f[0], "Karp-Flatt serial fraction") == "0.429");
  CHECK(evidence(f[0], "speedup over serial").find("faster") != std::string::npos);
}

TEST_CASE("poor-scaling stays quiet for good scaling and without a serial baseline", "[rules][host]") {
  const auto s = make_point("mandel", "serial", "serial", {{"n", "512"}}, spread(100e6, 0.01));
  const auto t = make_point("mandel", "threads", "threads", {{"n", "512"}}, spread(14e6, 0.01), 8);
  CHECK(findings_of(run({s, t}, h100()), "poor-scaling").empty());
  const auto slow = make_point("mandel", "threads", "threads", {{"n", "512"}}, spread(50e6, 0.01), 8);
  CHECK(findings_of(run({slow}, h100()), "poor-scaling").empty());
}

TEST_CASE("poor-scaling on a memory-bound loop claims no gain", "[rules][host]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "268435456"}}, spread(100e6, 0.01));
  auto t = make_point("vector", "threads", "threads", {{"n", "268435456"}}, spread(50e6, 0.01), 8);
  t.work.bytes_read = 3e9;
  t.work.bytes_written = 1e9; // 4 GB in 50 ms = 80 GB/s of the 100 GB/s measured
  const auto f = findings_of(run({s, t}, h100()), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == 1.0);
  CHECK(f[0].severity == "info");
  CHECK(f[0].explanation.find("memory") != std::string::npos);
}

TEST_CASE("poor-scaling: threads slower than serial means run serially, no Karp-Flatt", "[rules][host]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "1024"}}, spread(0.6e3, 0.01));
  const auto t = make_point("vector", "threads", "threads", {{"n", "1024"}}, spread(18e3, 0.01), 2);
  const auto f = findings_of(run({s, t}, h100()), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(30.0));
  CHECK(f[0].title.find("slower than serial") != std::string::npos);
  CHECK(evidence(f[0], "Karp-Flatt serial fraction").empty());
}

TEST_CASE("poor-scaling: cache-resident data is not called memory-bound", "[rules][host]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "65536"}}, spread(10e3, 0.01));
  auto t = make_point("vector", "threads", "threads", {{"n", "65536"}}, spread(8e3, 0.01), 8);
  t.work.bytes_read = 524288;
  t.work.bytes_written = 262144; // 786 KiB in 8 us: "98 GB/s", from cache
  auto d = h100();
  d.properties["llc_bytes"] = std::to_string(32u << 20);
  const auto f = findings_of(run({s, t}, d), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain > 1.0);
  CHECK(f[0].explanation.find("memory bandwidth") == std::string::npos);
  CHECK(evidence(f[0], "working set").find("last-level cache") != std::string::npos);
}

TEST_CASE("poor-scaling stays quiet when the interval allows good efficiency", "[rules][host]") {
  // Medians say 45% efficiency, but the noise allows far more.
  const auto s = make_point("mc", "serial", "serial", {{"M", "1000"}}, spread(3.6e6, 0.3));
  const auto t = make_point("mc", "threads", "threads", {{"M", "1000"}}, spread(1e6, 0.3), 8);
  CHECK(findings_of(run({s, t}, h100()), "poor-scaling").empty());
}

TEST_CASE("problem-too-small fires when the GPU variant is measurably slower than serial", "[rules][host]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "1024"}}, spread(1e6, 0.01));
  const auto g = cuda_point("vector", "cuda", {{"n", "1024"}}, make_split(0.01e6, 0.9e6, 0.5e6, 0.1e6, 0.2e6, 0.3e6));
  const auto f = findings_of(run({s, g}, h100()), "problem-too-small");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(2.0).epsilon(0.02));
  CHECK(f[0].severity == "critical");
}

TEST_CASE("problem-too-small stays quiet when the GPU wins or the difference is unclear", "[rules][host]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "1048576"}}, spread(1e6, 0.01));
  const auto g = cuda_point("vector", "cuda", {{"n", "1048576"}}, make_split(0.05e6, 0.03e6, 0.02e6));
  CHECK(findings_of(run({s, g}, h100()), "problem-too-small").empty());
  // 10% slower but with +-40% noise: unclear, so no finding.
  const auto noisy_s = make_point("vector", "serial", "serial", {{"n", "2048"}}, spread(1e6, 0.4));
  const auto noisy_g = make_point("vector", "cuda", "cuda", {{"n", "2048"}}, spread(1.1e6, 0.4));
  CHECK(findings_of(run({noisy_s, noisy_g}, h100()), "problem-too-small").empty());
}

TEST_CASE("noisy-measurement fires for wide intervals only", "[rules][host]") {
  const auto p = make_point("hist", "serial", "serial", {{"n", "1000"}}, spread(1e6, 0.3));
  const auto f = findings_of(run({p}, h100()), "noisy-measurement");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == 1.0);
  const auto q = make_point("hist", "serial", "serial", {{"n", "1000"}}, spread(1e6, 0.01));
  CHECK(findings_of(run({q}, h100()), "noisy-measurement").empty());
}

TEST_CASE("dropped-records fires when the profiler lost records", "[rules][host]") {
  auto p = cuda_point("vector", "cuda", {{"n", "1024"}}, make_split(1e6, 0, 0));
  p.dropped_records = 12;
  const auto f = findings_of(run({p}, h100()), "dropped-records");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == "warning");
  p.dropped_records = 0;
  CHECK(findings_of(run({p}, h100()), "dropped-records").empty());
}

TEST_CASE("the rule registry holds every documented rule with a threshold", "[rules]") {
  const std::vector<std::string> expected = {
      "copies-not-overlapped", "dropped-records",       "host-bound",    "kernel-below-roofline",
      "launch-bound",          "low-occupancy",         "noisy-measurement", "pageable-memory",
      "poor-scaling",          "problem-too-small",     "synchronization-heavy", "too-few-blocks",
      "transfer-bound",
      // Hardware-counter rules (analysis/rules_counters.cpp).
      "achieved-occupancy", "excess-traffic", "l2-thrashing", "latency-bound", "saturated-pipe", "uncoalesced-access"};
  for (const auto& name : expected) {
    const auto* r = analysis::find_rule(name);
    REQUIRE(r != nullptr);
    CHECK(r->name() == name);
    CHECK(!r->threshold().empty());
    CHECK(!r->summary().empty());
  }
  CHECK(analysis::rule_names().size() == expected.size());
  CHECK(analysis::find_rule("no-such-rule") == nullptr);
}

TEST_CASE("disabled rules do not run", "[rules]") {
  const auto p = cuda_point("vector", "cuda_lesson", {{"n", "16777216"}}, make_split(0.5e6, 6e6, 2e6, 0, 0, 1.5e6));
  analysis::analysis_options o;
  o.disabled_rules = {"transfer-bound"};
  const auto r = analysis::analyze({p}, h100(), nullptr, o);
  CHECK(findings_of(r, "transfer-bound").empty());
  CHECK(!findings_of(run({p}, h100()), "transfer-bound").empty());
}
