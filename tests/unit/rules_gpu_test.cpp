// launch-bound, synchronization-heavy, host-bound, kernel-below-roofline, low-occupancy,
// too-few-blocks: each fires and stays quiet.
#include "speedlab_catch.hpp"

#include "analysis_test_support.hpp"
#include "model/counters.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {
constexpr std::uint64_t us = 1000;

// n kernels of `dur` ns, one every `gap` ns, in one repetition window.
trace::device_trace kernel_train(int n, std::uint64_t dur, std::uint64_t gap, int blocks = 4096, int threads = 256,
                                 int regs = 32, int smem = 0, const std::string& name = "step") {
  trace::device_trace t;
  t.repetitions.push_back(window(0, static_cast<std::uint64_t>(n) * gap + 1000 * us));
  for (int i = 0; i < n; ++i) {
    const std::uint64_t s = static_cast<std::uint64_t>(i) * gap + 1;
    t.kernels.push_back(kernel(name, s, s + dur, blocks, threads, regs, smem));
  }
  return t;
}

// A point whose only kernel runs `kernel_ns` per repetition and declares `bytes` of work.
point_result work_point(const std::string& variant, double kernel_ns, double bytes, double host_ns = 0.2e6) {
  auto p = cuda_point("transpose", variant, {{"n", "4096"}}, make_split(kernel_ns, 0, 0, 0, 0, host_ns));
  p.work.bytes_read = bytes / 2;
  p.work.bytes_written = bytes / 2;
  return p;
}
} // namespace

TEST_CASE("launch-bound fires for many kernels shorter than the launch latency", "[rules][gpu]") {
  const auto p = cuda_point("reduce", "cuda_many", {{"n", "1024"}}, make_split(0.2e6, 0, 0, 0, 0.6e6, 0.2e6));
  const auto f = findings_of(run({p}, h100(), {{p.id, kernel_train(100, 2 * us, 6 * us)}}), "launch-bound");
  REQUIRE(f.size() == 1);
  // Each 2 us kernel leaves 3 us of a 5 us launch: 0.3 ms of 1 ms.
  CHECK(f[0].estimated_gain == Approx(1.0 / 0.7));
  CHECK(evidence(f[0], "launch latency").find("measured") != std::string::npos);
}

TEST_CASE("launch-bound stays quiet for few or long kernels", "[rules][gpu]") {
  const auto p = cuda_point("reduce", "cuda_few", {{"n", "1024"}}, make_split(0.2e6, 0, 0, 0, 0.6e6, 0.2e6));
  CHECK(findings_of(run({p}, h100(), {{p.id, kernel_train(5, 2 * us, 6 * us)}}), "launch-bound").empty());
  CHECK(findings_of(run({p}, h100(), {{p.id, kernel_train(100, 50 * us, 60 * us)}}), "launch-bound").empty());
  CHECK(findings_of(run({p}, h100()), "launch-bound").empty()); // no trace
}

TEST_CASE("synchronization-heavy fires when the GPU idles in synchronizing calls", "[rules][gpu]") {
  const auto p = cuda_point("mc", "cuda_sync_each", {{"M", "1000"}}, make_split(5e6, 0, 0, 3e6, 0, 2e6));
  const auto f = findings_of(run({p}, h100()), "synchronization-heavy");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(10.0 / 7.0));
  const auto q = cuda_point("mc", "cuda_sync_once", {{"M", "1000"}}, make_split(5e6, 0, 0, 0.5e6, 0, 4.5e6));
  CHECK(findings_of(run({q}, h100()), "synchronization-heavy").empty());
}

TEST_CASE("synchronization-heavy: one synchronization per repetition idling a launch latency is not removable",
          "[rules][gpu]") {
  // A resident variant at a tiny size: launch + stream synchronize, 4 us idle in the sync of
  // a 20 us repetition (launch latency 5 us).
  auto one_sync = [](std::uint64_t idle_ns) {
    trace::device_trace t;
    for (std::uint64_t r = 0; r < 4; ++r) {
      const std::uint64_t s = r * 100 * us;
      t.repetitions.push_back(window(s, s + 20 * us));
      trace::api_record a;
      a.start = s + 5 * us;
      a.end = a.start + idle_ns + 10 * us;
      a.name = "cudaStreamSynchronize_v3020";
      t.api_calls.push_back(a);
    }
    return t;
  };
  const auto p = cuda_point("vector", "cuda", {{"n", "4096"}}, make_split(10e3, 0, 0, 4e3, 3e3, 3e3));
  auto f = findings_of(run({p}, h100(), {{p.id, one_sync(4 * us)}}), "synchronization-heavy");
  REQUIRE(f.size() == 1);
  CHECK(evidence(f[0], "synchronizations per repetition") == "1");
  CHECK(evidence(f[0], "launch latency").find("5") != std::string::npos);
  CHECK(f[0].explanation.find("launch latency") != std::string::npos);
  CHECK(f[0].next_experiment.find("more work") != std::string::npos);

  // Several synchronizations per repetition keep the drain-the-queue advice.
  auto t = one_sync(4 * us);
  for (std::uint64_t r = 0; r < 4; ++r) {
    trace::api_record a = t.api_calls[r];
    a.start += 1 * us;
    t.api_calls.push_back(a);
    t.api_calls.push_back(a);
  }
  f = findings_of(run({p}, h100(), {{p.id, t}}), "synchronization-heavy");
  REQUIRE(f.size() == 1);
  CHECK(f[0].next_experiment.find("Remove synchronizations") != std::string::npos);
}

TEST_CASE("host-bound fires with the Amdahl limit when the GPU waits for the host", "[rules][gpu]") {
  const auto p = cuda_point("hist", "cuda_host_prep", {{"n", "1000000"}}, make_split(2e6, 1e6, 0, 0, 1e6, 6e6));
  const auto f = findings_of(run({p}, h100()), "host-bound");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(10.0 / 7.0));
  CHECK(evidence(f[0], "Amdahl limit of GPU-side improvements").find("1.43x") != std::string::npos);
  const auto q = cuda_point("hist", "cuda_busy", {{"n", "1000000"}}, make_split(8e6, 1e6, 0, 0, 0, 1e6));
  CHECK(findings_of(run({q}, h100()), "host-bound").empty());
  // CPU variants are never host-bound in this sense.
  auto s = make_point("hist", "serial", "serial", {{"n", "1000000"}}, spread(1e7, 0.01));
  s.split_median = make_split(0, 0, 0, 0, 0, 1e7);
  CHECK(findings_of(run({s}, h100()), "host-bound").empty());
}

TEST_CASE("kernel-below-roofline fires for a kernel far below its memory roof", "[rules][gpu]") {
  // 1 ms kernel at 3000 GB/s could move 3 GB; it declares 0.3 GB: 10% of the bound.
  const auto p = work_point("cuda_naive", 1e6, 0.3e9);
  const auto f = findings_of(run({p}, h100(), {{p.id, kernel_train(1, 1000 * us, 2000 * us)}}), "kernel-below-roofline");
  REQUIRE(f.size() == 1);
  CHECK(evidence(f[0], "bound") == "memory");
  CHECK(evidence(f[0], "percent of bound") == "10.0%");
  // Reaching 60% of the bound saves 1 ms x (1 - 10/60) of a 1.2 ms repetition.
  CHECK(f[0].estimated_gain == Approx(1.2 / (1.2 - (1 - 10.0 / 60))));
}

TEST_CASE("kernel-below-roofline stays quiet near the roof", "[rules][gpu]") {
  const auto p = work_point("cuda_tiled", 1e6, 2.4e9); // 80% of the bound
  CHECK(findings_of(run({p}, h100(), {{p.id, kernel_train(1, 1000 * us, 2000 * us)}}), "kernel-below-roofline").empty());
  // Unknown roofs: nothing to compare with.
  auto d = h100();
  d.gpu.clear();
  const auto q = work_point("cuda_naive", 1e6, 0.3e9);
  CHECK(findings_of(run({q}, d, {{q.id, kernel_train(1, 1000 * us, 2000 * us)}}), "kernel-below-roofline").empty());
}

namespace {
// A counters pass of one launch of `name` (1 ms) with the given utilizations (% of peak).
counters::counter_pass counted(const std::string& name, double sm, double memory, double dram, double alu) {
  counters::kernel_counters k;
  k.kernel = name;
  k.grid = {4096, 1, 1};
  k.block = {256, 1, 1};
  k.metrics = {{counters::metric::duration, 1e6},
               {counters::metric::sm_throughput, sm},
               {counters::metric::memory_throughput, memory},
               {counters::metric::dram_throughput, dram},
               {"sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", alu}};
  counters::counter_pass c;
  c.metric_set = "full";
  c.launches = 1;
  c.kernels = {k};
  return c;
}
} // namespace

TEST_CASE("kernel-below-roofline with counters: the busiest unit caps the gain or names what bounds the kernel",
          "[rules][gpu][counters]") {
  const auto train = kernel_train(1, 1000 * us, 2000 * us);
  // 10% of the memory bound on declared bytes; the counters show nothing busy (SM 20%): the
  // finding stays, and the kernel can gain 60 / 20 = 3x, not 60 / 10 = 6x.
  auto idle = work_point("cuda_naive", 1e6, 0.3e9);
  idle.sections.set<counters::counter_pass>(counted("step", 20, 15, 12, 10));
  auto f = findings_of(run({idle}, h100(), {{idle.id, train}}), "kernel-below-roofline");
  REQUIRE(f.size() == 1);
  CHECK(evidence(f[0], "percent of bound") == "10.0%");
  CHECK(evidence(f[0], "busiest unit (counters)") == "SM throughput at 20.0% of peak");
  CHECK(evidence(f[0], "busiest pipe") == "ALU (integer, logic) at 10.0% of peak");
  CHECK(f[0].estimated_gain == Approx(1.2 / (1.2 - (1 - 1.0 / 3))));
  CHECK(f[0].title == "kernel step reaches 10.0% of its memory bound");

  // DRAM 85% busy while the declared bytes reach 10%: the kernel moves more than it declares;
  // no gain to promise from the roofline.
  auto dram = work_point("cuda_strided", 1e6, 0.3e9);
  dram.sections.set<counters::counter_pass>(counted("step", 10, 85, 85, 5));
  f = findings_of(run({dram}, h100(), {{dram.id, train}}), "kernel-below-roofline");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == speedlab::severity::info);
  CHECK(f[0].estimated_gain == Approx(1));
  CHECK(evidence(f[0], "busiest unit (counters)") == "DRAM at 85.0% of peak"); // the bound's unit
  CHECK(f[0].explanation.find("more bytes than declared") != std::string::npos);

  // An integer-bound kernel: the ALU pipe at 70%.
  auto alu = work_point("cuda_int", 1e6, 0.3e9);
  alu.sections.set<counters::counter_pass>(counted("step", 65, 3, 1, 70));
  f = findings_of(run({alu}, h100(), {{alu.id, train}}), "kernel-below-roofline");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == speedlab::severity::info);
  CHECK(evidence(f[0], "busiest unit (counters)") == "ALU pipe at 70.0% of peak");

  // The trace names kernels demangled, the counters pass by the launch's mangled name.
  auto mangled = work_point("cuda_int2", 1e6, 0.3e9);
  mangled.sections.set<counters::counter_pass>(counted("_Z4stepPf", 65, 3, 1, 70));
  const auto named = kernel_train(1, 1000 * us, 2000 * us, 4096, 256, 32, 0, "step(float*)");
  f = findings_of(run({mangled}, h100(), {{mangled.id, named}}), "kernel-below-roofline");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == speedlab::severity::info);
  CHECK(evidence(f[0], "kernel") == "step(float*)");

  // Counters of another kernel say nothing about this one: the finding as without counters.
  auto other = work_point("cuda_other", 1e6, 0.3e9);
  other.sections.set<counters::counter_pass>(counted("unrelated", 90, 90, 90, 90));
  f = findings_of(run({other}, h100(), {{other.id, train}}), "kernel-below-roofline");
  REQUIRE(f.size() == 1);
  CHECK(f[0].estimated_gain == Approx(1.2 / (1.2 - (1 - 10.0 / 60))));
  CHECK(evidence(f[0], "busiest unit (counters)").empty());
}

TEST_CASE("low-occupancy fires for register-limited kernels below their roof", "[rules][gpu]") {
  // 256 threads x 128 registers: 4096 registers per warp, 4 warps per sub-partition, 16 of 64 warps.
  const auto p = work_point("conv", 1e6, 0.3e9);
  const auto f =
      findings_of(run({p}, h100(), {{p.id, kernel_train(1, 1000 * us, 2000 * us, 8192, 256, 128)}}), "low-occupancy");
  REQUIRE(f.size() == 1);
  CHECK(f[0].title.find("25.0%") != std::string::npos);
  CHECK(f[0].title.find("registers") != std::string::npos);
  CHECK(f[0].estimated_gain > 1.0);
}

TEST_CASE("low-occupancy stays quiet at full occupancy or near the roof", "[rules][gpu]") {
  const auto p = work_point("conv", 1e6, 0.3e9);
  CHECK(findings_of(run({p}, h100(), {{p.id, kernel_train(1, 1000 * us, 2000 * us, 8192, 256, 32)}}), "low-occupancy").empty());
  const auto q = work_point("conv", 1e6, 2.4e9); // 80% of its bound: occupancy is not the problem
  CHECK(findings_of(run({q}, h100(), {{q.id, kernel_train(1, 1000 * us, 2000 * us, 8192, 256, 128)}}), "low-occupancy").empty());
}

TEST_CASE("too-few-blocks fires for a grid smaller than one wave", "[rules][gpu]") {
  const auto p = work_point("reduce", 1e6, 0.3e9);
  const auto f = findings_of(run({p}, h100(), {{p.id, kernel_train(1, 1000 * us, 2000 * us, 40, 256)}}), "too-few-blocks");
  REQUIRE(f.size() == 1);
  CHECK(evidence(f[0], "idle SMs") == "92");
  CHECK(evidence(f[0], "waves").find("40 / (132 x 8)") != std::string::npos);
}

TEST_CASE("too-few-blocks stays quiet for a full grid", "[rules][gpu]") {
  const auto p = work_point("reduce", 1e6, 0.3e9);
  CHECK(findings_of(run({p}, h100(), {{p.id, kernel_train(1, 1000 * us, 2000 * us, 132 * 8 * 4, 256)}}), "too-few-blocks").empty());
}
