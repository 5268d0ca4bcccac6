// Counter metric sets, figures derived from raw metric values, the per-kernel summary and
// the JSON round trip (model/counters.hpp); with CUPTI, the metric sets checked against
// the H100's chip by CUPTI's host API (no GPU needed) and the backend's degrade path.
#include "speedlab_catch.hpp"

#include <stdexcept>

#include "model/counters.hpp"
#include "model/results.hpp"
#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_CUPTI
#include <cupti.h>

#include "profilers/counters/counter_collector.hpp"
#include "profilers/counters/counters_options.hpp"
#include "profilers/profiler.hpp"
#endif

using namespace speedlab;
namespace m = speedlab::counters::metric;

TEST_CASE("counter metric sets: named sets, metric lists, unknown names", "[counters]") {
  const auto def = counters::metric_set("default");
  CHECK(std::find(def.begin(), def.end(), m::dram_read) != def.end());
  CHECK(std::find(def.begin(), def.end(), m::l2_bytes) == def.end()); // costs replays: full only
  for (const auto& b : counters::bound_metrics()) CHECK(std::find(def.begin(), def.end(), b) != def.end());
  const auto full = counters::metric_set("full");
  CHECK(full.size() > def.size());
  CHECK(std::find(full.begin(), full.end(), m::ld_sectors) != full.end());
  const auto list = counters::metric_set("dram__bytes_read.sum, gpu__time_duration.sum,dram__bytes_read.sum");
  REQUIRE(list.size() == 2); // trimmed, duplicates dropped
  CHECK(list[1] == "gpu__time_duration.sum");
  CHECK_THROWS_WITH(counters::metric_set("fast"), Catch::Matchers::Contains("unknown metric set 'fast'"));
  CHECK_THROWS_WITH(counters::metric_set("dram__bytes_read.sum,,x"), Catch::Matchers::Contains("not a metric name"));
}

TEST_CASE("kernel names: mangled names demangled, other names kept", "[counters]") {
  // A name the counters pass recorded on the H100 (tests/fixtures/counters/h100-full-set).
  CHECK(counters::demangled_name("_ZN8speedlab7plugins10montecarlo54_GLOBAL__N__5e47def7_21_montecarlo_kernels_cu_"
                                 "e07b774816pi_philox_kernelEmPyPjS3_") ==
        "speedlab::plugins::montecarlo::(anonymous namespace)::pi_philox_kernel(unsigned long, unsigned long long*, "
        "unsigned int*, unsigned long long*)");
  CHECK(counters::demangled_name("_Z6kernelPf") == "kernel(float*)");
  CHECK(counters::demangled_name("cupy_multiply__float32_float32_float32") == "cupy_multiply__float32_float32_float32");
  CHECK(counters::demangled_name("_Zbroken") == "_Zbroken"); // not demangled: kept as it is
  CHECK(counters::demangled_name("") == "");
  CHECK(counters::demangled_name("d") == "d"); // an extern "C" kernel, not the type "double"
}

TEST_CASE("counter figures: FLOPs count an FMA twice, sectors per request, occupancy, busiest pipe", "[counters]") {
  std::map<std::string, double> v{{m::duration, 1000},  {m::dram_read, 4e6},   {m::dram_write, 1e6},
                                  {m::ffma, 100},       {m::fadd, 10},         {m::fmul, 5},
                                  {m::dfma, 1},         {m::warps_active, 62.5}, {m::ld_sectors, 3200},
                                  {m::ld_requests, 100}, {m::st_sectors, 400},  {m::st_requests, 100}};
  v["sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active"] = 40;
  v["sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active"] = 85;
  const auto f = counters::derive(v);
  CHECK(*f.flops_fp32 == Approx(215));
  CHECK(*f.flops_fp64 == Approx(2));
  CHECK_FALSE(f.flops_fp16.has_value()); // none of its counters read
  CHECK_FALSE(f.fp64_dominant());
  CHECK(*f.flops() == Approx(215));
  CHECK(*f.dram_bytes() == Approx(5e6));
  CHECK(*f.load_sectors_per_request == Approx(32));
  CHECK(*f.store_sectors_per_request == Approx(4));
  CHECK(*f.achieved_occupancy == Approx(0.625));
  CHECK(f.busiest_pipe == "FP64");
  CHECK(*f.busiest_pipe_pct == Approx(85));
  // The bound: the busiest unit read (ALU and FP64 pipes here), busiest first.
  REQUIRE(f.bound());
  CHECK(f.bound()->unit == "FP64 pipe");
  CHECK_FALSE(f.bound()->memory);
  REQUIRE(f.units.size() == 2);
  CHECK(f.units[1].unit == "ALU pipe");
  CHECK_FALSE(f.l2_bytes.has_value());

  v[m::ld_requests] = 0; // no loads: no ratio rather than infinity
  CHECK_FALSE(counters::derive(v).load_sectors_per_request.has_value());
  v[m::dram_throughput] = 91;
  v[m::l2_throughput] = 40;
  v[m::l1_throughput] = 93;
  v[m::issue_active] = 60;
  const auto mem = counters::derive(v);
  REQUIRE(mem.bound());
  CHECK(mem.bound()->unit == "L1/shared");
  CHECK(mem.bound()->memory);
  CHECK(mem.bound()->metric == m::l1_throughput);
  REQUIRE(mem.units.size() == 6);
  CHECK(mem.units[1].unit == "DRAM");
  CHECK(mem.units[4].unit == "L2"); // a tie with the ALU pipe (40%): bound_units() order
  const auto empty = counters::derive({});
  CHECK(empty.bound() == nullptr);
  CHECK_FALSE(empty.dram_bytes().has_value());
  CHECK(empty.busiest_pipe.empty());
}

TEST_CASE("per distinct kernel: the median over launches of one (kernel, grid, block)", "[counters]") {
  auto launch = [](std::string k, std::uint32_t grid, double bytes) {
    counters::kernel_counters c;
    c.kernel = std::move(k);
    c.grid = {grid, 1, 1};
    c.block = {256, 1, 1};
    c.metrics[m::dram_read] = bytes;
    return c;
  };
  const auto out = counters::per_distinct_kernel(
      {launch("a", 10, 1), launch("b", 10, 5), launch("a", 10, 3), launch("a", 20, 7), launch("a", 10, 2)});
  REQUIRE(out.size() == 3);
  CHECK(out[0].kernel == "a");
  CHECK(out[0].metrics.at(m::dram_read) == Approx(2)); // median of 1, 3, 2
  CHECK(out[1].kernel == "b");
  CHECK(out[2].grid[0] == 20);
}

TEST_CASE("counters round-trip through the results JSON", "[counters]") {
  point_result p;
  p.id = "vector/cuda/n=1";
  counters::counter_pass c;
  c.metric_set = "default";
  c.metrics = {m::dram_read};
  c.chip = "GH100";
  c.passes = 1;
  c.per_kernel_limit = 2;
  c.launches = 5;
  c.skipped = 3;
  c.pass_wall_ns = 1234.5;
  counters::kernel_counters k;
  k.kernel = "vector_add";
  k.grid = {65536, 1, 1};
  k.block = {256, 1, 1};
  k.metrics[m::dram_read] = 1.5e8;
  c.kernels.push_back(k);
  p.sections.set<counters::counter_pass>(c);
  const point_result back = nlohmann::json(p).get<point_result>();
  REQUIRE(back.sections.has<counters::counter_pass>());
  CHECK(back.sections.get<counters::counter_pass>()->chip == "GH100");
  CHECK(back.sections.get<counters::counter_pass>()->skipped == 3);
  REQUIRE(back.sections.get<counters::counter_pass>()->kernels.size() == 1);
  CHECK(back.sections.get<counters::counter_pass>()->kernels[0].grid == std::vector<std::uint32_t>{65536, 1, 1});
  CHECK(back.sections.get<counters::counter_pass>()->kernels[0].metrics.at(m::dram_read) == Approx(1.5e8));
  // A point without counters writes none and reads back none.
  point_result plain;
  CHECK_FALSE(nlohmann::json(plain).contains("counters"));
  CHECK_FALSE(nlohmann::json(plain).get<point_result>().sections.has<counters::counter_pass>());
}

#if SPEEDLAB_HAS_CUPTI

TEST_CASE("counter metric sets are valid for the H100 chip, each default metric in one pass", "[counters][cupti]") {
  namespace core = speedlab::profiling::counters_core;
  try {
    core::passes_for_chip("GH100", {m::duration});
  } catch (const std::invalid_argument& e) {
    // CUPTI's host library could not run here (e.g. a toolkit without it): say so, visibly.
    WARN("CUPTI host API unavailable: " << e.what());
    return;
  }
  // Each of the old default's metrics (time, DRAM bytes, occupancy, instruction counts) in one
  // pass; the bound's utilization metrics cost replays of their own.
  const auto dram = counters::metric_set("dram");
  for (const char* metric : {m::duration, m::dram_read, m::dram_write, m::warps_active, m::ffma, m::dfma}) {
    INFO(metric);
    CHECK(core::passes_for_chip("GH100", {metric}) == 1);
  }
  const auto def = counters::metric_set("default");
  const std::size_t together = core::passes_for_chip("GH100", def);
  const std::size_t bound = core::passes_for_chip("GH100", counters::bound_metrics());
  const std::size_t full = core::passes_for_chip("GH100", counters::metric_set("full"));
  WARN("GH100 passes: bound metrics " << bound << ", default " << together << ", full " << full);
  CHECK(core::passes_for_chip("GH100", {m::sm_throughput}) > 1); // the SM summary costs replays: full only
  CHECK(full >= together);
  CHECK(together >= bound);
  CHECK(core::passes_for_chip("GH100", counters::metric_set("dram")) == 1);
  // The set configured in one call shares passes; one call per metric (the collector before
  // the fix) gave every metric replays of its own.
  CHECK(together < def.size());
  CHECK(core::passes_for_chip("GH100", def, true) >= def.size());
  CHECK_THROWS_WITH(core::passes_for_chip("GH100", {"dram__bytes_raed.sum"}),
                    Catch::Matchers::Contains("dram__bytes_raed.sum"));
}

TEST_CASE("counters backend: a clear note and no crash without a GPU", "[counters][cupti]") {
  auto prof = profiling::make_profiler("counters");
  REQUIRE(prof);
  CHECK(prof->name() == "counters");
  const std::string why = prof->unavailable_reason();
  if (why.empty()) {
    WARN("a driver is present here; the no-GPU path is not exercised");
    return;
  }
  CHECK_THAT(why, Catch::Matchers::Contains("no NVIDIA driver"));
  // Even when asked to run, the session neither throws nor records anything.
  profiling::profiler_options o;
  auto s = prof->create_session(o);
  CHECK(s->own_pass());
  s->start();
  s->stop();
  profiling::profile_data d;
  s->collect(d);
  CHECK_FALSE(d.sections.has<counters::counter_pass>());
  o.block<profiling::counters_options>().metric_set = "no-such-set";
  CHECK_THROWS_AS(prof->create_session(o), std::invalid_argument);
}

TEST_CASE("counters unavailable: each cause CUPTI reports becomes one sentence naming it", "[counters][cupti]") {
  namespace core = speedlab::profiling::counters_core;
  using Catch::Matchers::Contains;
  CHECK_THAT(core::describe_cupti_result(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
             Contains("insufficient privileges") && Contains("NVreg_RestrictProfilingToAdminUsers=0"));
  CHECK_THAT(core::describe_cupti_result(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED), Contains("virtualized GPU"));
  CHECK_THAT(core::describe_cupti_result(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), Contains("another profiler"));
  CHECK_THAT(core::describe_cupti_result(CUPTI_ERROR_HARDWARE_BUSY), Contains("another profiler"));
  CHECK_THAT(core::describe_cupti_result(CUPTI_ERROR_NOT_SUPPORTED), Contains("unsupported GPU"));
  CHECK_THAT(core::describe_cupti_result(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED), Contains("MIG"));
  CHECK_FALSE(core::describe_cupti_result(CUPTI_ERROR_UNKNOWN).empty()); // CUPTI's own words otherwise
}

#endif
