// poor-scaling, parallel-efficiency, threads-crossover, cpu-roof, problem-too-small,
// noisy-measurement, dropped-records: each fires and stays quiet; plus the registry itself.
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
  CHECK(f[0].severity == speedlab::severity::info);
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

TEST_CASE("parallel-efficiency: near-linear threads get an answer and no gain", "[rules][host][cpu-answers]") {
  const auto s = make_point("mandel", "serial", "serial", {{"n", "512"}}, spread(100e6, 0.01));
  const auto t = make_point("mandel", "threads", "threads", {{"n", "512"}}, spread(14e6, 0.01), 8);
  const auto f = findings_of(run({s, t}, h100()), "parallel-efficiency");
  REQUIRE(f.size() == 1);
  CHECK(f[0].point_id == t.id);
  CHECK(f[0].estimated_gain == 1.0);
  CHECK(f[0].title.find("89.3% efficiency") != std::string::npos);
  CHECK(f[0].explanation.find("nearly a full core") != std::string::npos);
  CHECK(evidence(f[0], "parallel efficiency (speedup / threads)").find('[') != std::string::npos);
}

TEST_CASE("parallel-efficiency: 50-80% names the limit, gain from the interval's high end", "[rules][host][cpu-answers]") {
  const auto s = make_point("mandel", "serial", "serial", {{"n", "512"}}, spread(100e6, 0.01));
  auto t = make_point("mandel", "threads", "threads", {{"n", "512"}}, spread(20.8e6, 0.01), 8); // 60%
  t.cpu_utilization = 7.8;
  const auto r = run({s, t}, h100());
  CHECK(findings_of(r, "poor-scaling").empty());
  const auto f = findings_of(r, "parallel-efficiency");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain > 1.2);
  CHECK(f[0].estimated_gain < 0.8 / 0.6); // the high end of the interval is above the median
  CHECK(f[0].severity == speedlab::severity::warning);
  CHECK(!evidence(f[0], "Karp-Flatt serial fraction").empty());
  CHECK(f[0].explanation.find("contention") != std::string::npos);
}

TEST_CASE("parallel-efficiency: a speedup interval holding 1 is no gain; too few samples, no verdict",
          "[rules][host][cpu-answers]") {
  const auto s = make_point("hist", "serial", "serial", {{"n", "1000"}}, spread(1e6, 0.3));
  const auto t = make_point("hist", "threads", "threads", {{"n", "1000"}}, spread(1e6, 0.3), 2);
  const auto f = findings_of(run({s, t}, h100()), "parallel-efficiency");
  REQUIRE(f.size() == 1);
  CHECK(f[0].title.find("no clear gain") != std::string::npos);
  CHECK(f[0].estimated_gain == 1.0);
  // Two samples each: the speedup has no interval, so no verdict at all.
  const auto s2 = make_point("hist", "serial", "serial", {{"n", "1000"}}, spread(1e6, 0.01, 2));
  const auto t2 = make_point("hist", "threads", "threads", {{"n", "1000"}}, spread(0.6e6, 0.01, 2), 2);
  CHECK(findings_of(run({s2, t2}, h100()), "parallel-efficiency").empty());
}

namespace {
// serial = 10 ns x n, threads = 20 us + 5 ns x n: threads win above n = 4000.
std::vector<point_result> crossing_sweep() {
  std::vector<point_result> out;
  for (double n : {1e3, 1e4, 1e5, 1e6}) {
    const std::string size = std::to_string(static_cast<long>(n));
    out.push_back(make_point("vector", "serial", "serial", {{"n", size}}, spread(10 * n, 0.01)));
    out.push_back(make_point("vector", "threads", "threads", {{"n", size}}, spread(20e3 + 5 * n, 0.01), 2));
  }
  return out;
}
} // namespace

TEST_CASE("threads-crossover: one finding per sweep, on its largest size, with the size", "[rules][host][cpu-answers]") {
  const auto r = run(crossing_sweep(), h100());
  const auto f = findings_of(r, "threads-crossover");
  REQUIRE(f.size() == 1);
  CHECK(f[0].point_id == "vector/threads/n=1000000");
  CHECK(f[0].title.find("threads beat serial above n ≈ ") == 0);
  const double at = std::stod(f[0].title.substr(std::string("threads beat serial above n ≈ ").size()));
  CHECK(at > 3000);
  CHECK(at < 5500);
  CHECK(f[0].next_experiment.find("Choose by size") != std::string::npos);
  // The small size's poor-scaling finding says where to switch, not "sweep the size".
  const auto small = findings_of(r, "poor-scaling", "vector/threads/n=1000");
  REQUIRE(small.size() == 1);
  CHECK(small[0].next_experiment.find("Run serially below n ≈ ") == 0);
  CHECK(!evidence(small[0], "crossover threads vs serial").empty());
}

TEST_CASE("threads-crossover stays quiet when threads win at every size", "[rules][host][cpu-answers]") {
  std::vector<point_result> pts;
  for (double n : {1e4, 1e5, 1e6}) {
    const std::string size = std::to_string(static_cast<long>(n));
    pts.push_back(make_point("vector", "serial", "serial", {{"n", size}}, spread(10 * n, 0.01)));
    pts.push_back(make_point("vector", "threads", "threads", {{"n", size}}, spread(5 * n, 0.01), 2));
  }
  CHECK(findings_of(run(pts, h100()), "threads-crossover").empty());
}

namespace {
// A serial loop moving `bytes` in 100 ms (the test host: 15 GB/s for one thread, measured;
// a 32 MiB last-level cache).
point_result serial_moving(double bytes, double rel = 0.01) {
  auto p = make_point("vector", "serial", "serial", {{"n", "1"}}, spread(100e6, rel));
  p.work.bytes_read = bytes;
  return p;
}
analysis::device_model host_with_cache() {
  auto d = h100();
  d.properties["llc_bytes"] = std::to_string(32u << 20);
  return d;
}
} // namespace

TEST_CASE("cpu-roof: a memory-bound loop at the roof, below it, from cache, undecided", "[rules][host][cpu-answers]") {
  const auto d = host_with_cache();
  SECTION("at the roof: 12 of 15 GB/s, fewer bytes is the lever, no gain") {
    const auto f = findings_of(run({serial_moving(1.2e9)}, d), "cpu-roof");
    REQUIRE(f.size() == 1);
    CHECK(f[0].title == "80.0% of the memory roof: at the roof");
    CHECK(f[0].estimated_gain == 1.0);
    CHECK(f[0].explanation.find("All cores together reach 100 GB/s") != std::string::npos);
    CHECK(evidence(f[0], "percent of roof").find("95% interval") != std::string::npos);
  }
  SECTION("far below a measured roof out of cache: a gain to 60%") {
    const auto f = findings_of(run({serial_moving(0.3e9)}, d), "cpu-roof");
    REQUIRE(f.size() == 1);
    CHECK(f[0].title == "20.0% of the memory roof: far below it");
    CHECK(f[0].estimated_gain > 2.5);
    CHECK(f[0].estimated_gain < 3.0); // 60 / 20.2 (the interval's high end)
    CHECK(f[0].next_experiment.find("Vectorize") != std::string::npos);
  }
  SECTION("far below an estimated roof: no gain claimed") {
    auto est = d;
    est.host[keys::memory_bw_1thread].measured = false;
    const auto f = findings_of(run({serial_moving(0.3e9)}, est), "cpu-roof");
    REQUIRE(f.size() == 1);
    CHECK(f[0].estimated_gain == 1.0);
  }
  SECTION("a working set in cache is not judged against DRAM") {
    const auto f = findings_of(run({serial_moving(1e6)}, d), "cpu-roof");
    REQUIRE(f.size() == 1);
    CHECK(f[0].title.find("from cache") != std::string::npos);
    CHECK(f[0].estimated_gain == 1.0);
  }
  SECTION("an interval across 60%: undecided") {
    const auto f = findings_of(run({serial_moving(0.9e9, 0.3)}, d), "cpu-roof");
    REQUIRE(f.size() == 1);
    CHECK(f[0].title.find("undecided") != std::string::npos);
  }
  SECTION("without declared work or with too few samples: nothing") {
    CHECK(findings_of(run({make_point("vector", "serial", "serial", {{"n", "1"}}, spread(1e6, 0.01))}, d), "cpu-roof").empty());
    auto two = make_point("vector", "serial", "serial", {{"n", "1"}}, spread(100e6, 0.01, 2));
    two.work.bytes_read = 1.2e9;
    CHECK(findings_of(run({two}, d), "cpu-roof").empty());
  }
}

TEST_CASE("cpu-roof: a compute-bound loop against the estimated peak claims no gain", "[rules][host][cpu-answers]") {
  auto p = make_point("mandel", "serial", "serial", {{"n", "1"}}, spread(100e6, 0.01));
  p.work.bytes_written = 1e6;
  p.work.flops = 1e9; // 10 GFLOP/s of one core's 125: 8%
  const auto f = findings_of(run({p}, host_with_cache()), "cpu-roof");
  REQUIRE(f.size() == 1);
  CHECK(f[0].title == "8.00% of the compute peak: far below it");
  CHECK(f[0].estimated_gain == 1.0);
  CHECK(f[0].explanation.find("SIMD") != std::string::npos);
}

TEST_CASE("problem-too-small fires when the GPU variant is measurably slower than serial", "[rules][host]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "1024"}}, spread(1e6, 0.01));
  const auto g = cuda_point("vector", "cuda", {{"n", "1024"}}, make_split(0.01e6, 0.9e6, 0.5e6, 0.1e6, 0.2e6, 0.3e6));
  const auto f = findings_of(run({s, g}, h100()), "problem-too-small");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(2.0).epsilon(0.02));
  CHECK(f[0].severity == speedlab::severity::critical);
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

TEST_CASE("too-few-repetitions: under 3 repetitions, no verdict and how long to measure", "[rules][host][cpu-answers]") {
  const auto p = make_point("mc", "serial", "serial", {{"M", "5120000"}}, spread(300e6, 0.01, 2));
  const auto f = findings_of(run({p}, h100()), "too-few-repetitions");
  REQUIRE(f.size() == 1);
  CHECK(f[0].title == "2 repetitions: no interval, no verdict");
  CHECK(f[0].estimated_gain == 1.0);
  CHECK(f[0].next_experiment.find("--max-time of at least 1.") != std::string::npos);
  const auto q = make_point("mc", "serial", "serial", {{"M", "5120000"}}, spread(300e6, 0.01, 3));
  CHECK(findings_of(run({q}, h100()), "too-few-repetitions").empty());
}

TEST_CASE("dropped-records fires when the profiler lost records", "[rules][host]") {
  auto p = cuda_point("vector", "cuda", {{"n", "1024"}}, make_split(1e6, 0, 0));
  p.dropped_records = 12;
  const auto f = findings_of(run({p}, h100()), "dropped-records");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == speedlab::severity::warning);
  p.dropped_records = 0;
  CHECK(findings_of(run({p}, h100()), "dropped-records").empty());
}

TEST_CASE("the rule registry holds every documented rule with a threshold", "[rules]") {
  const std::vector<std::string> expected = {
      "copies-not-overlapped", "dropped-records",       "host-bound",    "kernel-below-roofline",
      "launch-bound",          "low-occupancy",         "noisy-measurement", "pageable-memory",
      "poor-scaling",          "problem-too-small",     "synchronization-heavy", "too-few-blocks",
      "transfer-bound",
      // The answers a CPU-only run gets (analysis/rules_host.cpp).
      "cpu-roof", "parallel-efficiency", "threads-crossover", "too-few-repetitions",
      // Hardware-counter rules (analysis/rules_counters.cpp).
      "achieved-occupancy", "excess-traffic", "l2-thrashing", "latency-bound", "saturated-pipe", "uncoalesced-access",
      // A recorded process's activity (analysis/rules_activity.cpp).
      "alloc-in-loop", "gpu-idle-gaps", "start-up", "sync-pageable-copies", "tiny-kernels",
      // Across the ranks of a job (analysis/rules_ranks.cpp).
      "exposed-communication", "rank-gpu-idle", "straggler",
      // The lines of a Python program (analysis/rules_python.cpp).
      "python-line-sync"};
  for (const auto& name : expected) {
    const auto* r = analysis::find_rule(name);
    REQUIRE(r != nullptr);
    CHECK(r->name() == name);
    CHECK(!r->threshold().empty());
    CHECK(!r->summary().empty());
  }
  // Rules a test registers from outside (extension_points_test.cpp) are named test-*.
  std::size_t built_in = 0;
  for (const auto& n : analysis::rule_names()) built_in += n.rfind("test-", 0) == 0 ? 0 : 1;
  CHECK(built_in == expected.size());
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

TEST_CASE("poor-scaling on a machine other programs kept busy blames the machine, not the code", "[rules][host]") {
  const auto s = make_point("vector", "serial", "serial", {{"n", "65536"}}, spread(100e3, 0.01));
  auto t = make_point("vector", "threads", "threads", {{"n", "65536"}}, spread(2e6, 0.01), 2);
  t.cpu_utilization = 0.3;
  auto d = h100();
  d.host[keys::cores] = ceiling{2, "cores", true, "test"};
  t.other_busy_cores = 1.4; // of 2 cores: the 2 threads had 0.6 between them
  t.other_busy_span_s = 1.0;
  auto f = findings_of(run({s, t}, d), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == severity::warning);
  CHECK(f[0].estimated_gain == 1.0);
  CHECK(f[0].title.find("while other programs held 1.4 of 2 cores") != std::string::npos);
  CHECK(f[0].next_experiment.find("--threads 1") != std::string::npos);
  // A quiet machine: the code is judged.
  t.other_busy_cores = 0.2;
  f = findings_of(run({s, t}, d), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == severity::critical);
  CHECK(f[0].title.find("other programs") == std::string::npos);
  // Rounds too short to read /proc/stat's ticks: the run's pooled load decides.
  auto quiet_serial = s;
  quiet_serial.other_busy_cores = 0.1, quiet_serial.other_busy_span_s = 2.0;
  t.other_busy_cores = 1.9, t.other_busy_span_s = 0.05; // (0.2 + 0.095) / 2.05: a quiet run
  f = findings_of(run({quiet_serial, t}, d), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == severity::critical);
  auto busy_serial = quiet_serial;
  busy_serial.other_busy_cores = 1.6; // a busy run
  f = findings_of(run({busy_serial, t}, d), "poor-scaling");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == severity::warning);
  CHECK(evidence(f[0], "other programs' busy cores").find("over the whole run") != std::string::npos);
}
