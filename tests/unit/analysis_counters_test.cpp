// Counter data recorded on the H100 machine, evaluated without a GPU:
// - tests/fixtures/counters/results.jsonl (gpu-check.sh stage "counters", --metrics full, first
//   run): the roofline's memory levels and the rules. Its instruction counters and kernel
//   names ("0", "1") are those of the collector before the fix; nothing here reads them.
// - tests/fixtures/counters/h100-default-set/ (stage "counters-sass", default set, after the
//   fix): metric evaluation against Nsight Compute's values for the same kernels (ncu.json),
//   the roofline from counters alone, and the old one-call-per-metric configuration's values.
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <cmath>
#include <fstream>
#include <string>

#include "analysis/analyze.hpp"
#include "analysis/roofline.hpp"
#include "model/counters.hpp"
#include "model/results.hpp"

using namespace speedlab;

namespace {

std::string fixture(const std::string& name) { return (speedlab::testing::fixture_dir() / "counters" / name).string(); }

std::vector<point_result> points(const std::string& file = "results.jsonl") {
  std::vector<point_result> out;
  std::ifstream in(fixture(file));
  REQUIRE(in.good());
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line).get<point_result>());
  return out;
}

device_model device() {
  std::ifstream in(fixture("device.json"));
  return nlohmann::json::parse(in).get<device_model>();
}

const point_result& find(const std::vector<point_result>& ps, const std::string& id) {
  for (const auto& p : ps)
    if (p.id == id) return p;
  FAIL("no fixture point " << id);
  return ps.front();
}

bool fires(const analysis::analysis_result& a, const std::string& rule, const std::string& point) {
  for (const auto& f : a.findings)
    if (f.rule == rule && f.point_id == point) return true;
  return false;
}

} // namespace

TEST_CASE("counter roofline: DRAM, L2 and L1 levels from counters, DRAM roof for the read/write mix", "[counters][analysis]") {
  const auto ps = points();
  const auto d = device();
  const auto rows = analysis::counter_roofline_for_point(find(ps, "vector/cuda/n=16777216,op=mul"), d);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].level == "dram");
  CHECK(rows[1].level == "l2");
  CHECK(rows[2].level == "l1");
  CHECK(rows[0].work_source == "counters");
  // 2 reads, 1 write: the roof lies between the measured read-only and write-only figures.
  CHECK(rows[0].roof_gbps > 3113 * 0.999);
  CHECK(rows[0].roof_gbps < 3198 * 1.001);
  CHECK(rows[0].bound == "memory");
  CHECK(rows[0].percent_of_bound > 50);
  CHECK(rows[0].percent_of_bound < 100);
  // A read-only kernel meets the read-only roof, not the copy roof (3007 GB/s here).
  const auto dot = analysis::counter_roofline_for_point(find(ps, "reduction/cuda/n=16777216,op=dot"), d);
  REQUIRE(!dot.empty());
  CHECK(dot[0].roof_gbps == Approx(3113).epsilon(0.01));
  // Without counters: no rows.
  CHECK(analysis::counter_roofline_for_point(point_result{}, d).empty());
}

TEST_CASE("counter rules fire on the recorded kernels that show the cause, and not elsewhere", "[counters][analysis]") {
  analysis::analysis_options o;
  const auto a = analysis::analyze(points(), device(), analysis::trace_loader{}, o);
  // The naive transpose writes a column per warp: 32 sectors per store request.
  CHECK(fires(a, "uncoalesced-access", "transpose/cuda-naive/size=4096"));
  CHECK_FALSE(fires(a, "uncoalesced-access", "transpose/cuda/size=4096"));
  CHECK_FALSE(fires(a, "uncoalesced-access", "vector/cuda/n=16777216,op=mul")); // 16-byte loads: 16 is coalesced
  // Global atomics on ten bins: neither memory nor the SM is busy.
  CHECK(fires(a, "latency-bound", "histogram/cuda-global/bins=10,n=16777216"));
  CHECK_FALSE(fires(a, "latency-bound", "vector/cuda/n=16777216,op=mul"));
  // Streaming kernels are not thrashing L2, and no recorded pipe reaches 80%.
  CHECK_FALSE(fires(a, "l2-thrashing", "vector/cuda/n=16777216,op=mul"));
  CHECK_FALSE(fires(a, "saturated-pipe", "mandelbrot/cuda/iterations=4096,size=4096")); // FP64 pipe at 77.7%
}

namespace {

nlohmann::json ncu_values() {
  std::ifstream in(fixture("h100-default-set/ncu.json"));
  REQUIRE(in.good());
  return nlohmann::json::parse(in).at("kernels");
}

bool is_instruction_counter(const std::string& metric) { return metric.find("sass_thread_inst_executed") != std::string::npos; }

} // namespace

TEST_CASE("recorded H100 counters: every instruction counter equals Nsight Compute's for the same kernel",
          "[counters][analysis]") {
  const auto ps = points("h100-default-set/results.jsonl");
  const auto ncu = ncu_values();
  REQUIRE(ps.size() == 6);
  std::size_t compared = 0;
  for (const auto& p : ps) {
    INFO(p.id);
    REQUIRE(p.counters.has_value());
    CHECK(p.counters->passes == 2); // the set in one configuration: instruction counters + the rest
    REQUIRE(p.counters->kernels.size() == 1);
    const auto& k = p.counters->kernels[0];
    CHECK(k.kernel.rfind("_Z", 0) == 0); // the launch's (mangled) name, not CUPTI's range index
    REQUIRE(k.grid.size() == 3);
    REQUIRE(ncu.contains(k.kernel));
    for (const auto& [metric, value] : k.metrics) {
      if (!is_instruction_counter(metric) || !ncu.at(k.kernel).contains(metric)) continue;
      INFO(metric);
      CHECK(value == Approx(ncu.at(k.kernel).at(metric).get<double>()).margin(0.5));
      ++compared;
    }
  }
  CHECK(compared == 6 * 6);
  // c = a * b over 2^24 floats: one FMUL per element, nothing else.
  const auto& vec = find(ps, "vector/cuda/n=16777216,op=mul");
  const auto f = counters::derive(vec.counters->kernels[0].metrics);
  CHECK(*f.flops_fp32 == Approx(16777216.0).margin(0.5));
  CHECK(*f.flops_fp64 == 0);
  CHECK(*f.flops_fp32 == Approx(vec.work.flops)); // what the work model declares
  // Mandelbrot is FP64: 2 x DFMA + DADD + DMUL, as ncu counted them.
  const auto& man = find(ps, "mandelbrot/cuda/iterations=256,size=1024");
  const auto fm = counters::derive(man.counters->kernels[0].metrics);
  CHECK(fm.fp64_dominant());
  const auto& nm = ncu.at(man.counters->kernels[0].kernel);
  CHECK(*fm.flops() == Approx(2 * nm.at(counters::metric::dfma).get<double>() + nm.at(counters::metric::dadd).get<double>() +
                              nm.at(counters::metric::dmul).get<double>()));
}

TEST_CASE("recorded H100 counters: one CUPTI configuration call per metric misread the instruction counters",
          "[counters][analysis]") {
  // The collector before the fix, the same kernels in the same run: every metric its own
  // replay (10 for the default set) and the per-opcode counters wrong.
  const auto ps = points("h100-default-set/one-call-per-metric.jsonl");
  const auto ncu = ncu_values();
  std::size_t wrong = 0, compared = 0;
  for (const auto& p : ps) {
    REQUIRE(p.counters.has_value());
    CHECK(p.counters->passes == 10);
    const auto& k = p.counters->kernels.at(0);
    for (const auto& [metric, value] : k.metrics)
      if (is_instruction_counter(metric) && ncu.at(k.kernel).contains(metric)) {
        ++compared;
        wrong += std::abs(value - ncu.at(k.kernel).at(metric).get<double>()) > 0.5;
      }
  }
  CHECK(compared == 6 * 6);
  CHECK(wrong >= 10);
  const auto& vec = find(ps, "vector/cuda/n=16777216,op=mul");
  CHECK(vec.counters->kernels[0].metrics.at(counters::metric::fmul) == 0); // 2^24 FMULs executed
}

TEST_CASE("recorded H100 counters: the roofline from counters alone, FLOPs from instruction counts",
          "[counters][analysis]") {
  const auto ps = points("h100-default-set/results.jsonl");
  const auto d = device(); // the same machine's calibration (first run)
  // The streaming multiply: DRAM level only (the default set reads no L2/L1 bytes), memory-bound.
  const auto& vec = find(ps, "vector/cuda/n=16777216,op=mul");
  const auto rows = analysis::counter_roofline_for_point(vec, d);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].level == "dram");
  CHECK(rows[0].work_source == "counters");
  CHECK(rows[0].bound == "memory");
  const auto f = counters::derive(vec.counters->kernels[0].metrics);
  CHECK(rows[0].achieved_gbps == Approx(*f.dram_bytes() / *f.duration_ns));
  CHECK(rows[0].intensity == Approx(16777216.0 / *f.dram_bytes()));
  CHECK(rows[0].percent_of_bound > 50);
  CHECK(rows[0].percent_of_bound < 100);
  // Mandelbrot: FP64 FLOPs over next to no DRAM traffic: compute-bound against the FP64 roof.
  const auto man = analysis::counter_roofline_for_point(find(ps, "mandelbrot/cuda/iterations=256,size=1024"), d);
  REQUIRE(man.size() == 1);
  CHECK(man[0].bound == "compute");
  CHECK(man[0].roof_gflops == Approx(d.gpu.at("fp64_peak").value));
  CHECK(man[0].percent_of_bound > 1);
  CHECK(man[0].percent_of_bound < 100);
}

TEST_CASE("recorded H100 counters: the default set fires no rule that needs the full set", "[counters][analysis]") {
  analysis::analysis_options o;
  const auto a = analysis::analyze(points("h100-default-set/results.jsonl"), device(), analysis::trace_loader{}, o);
  for (const auto& rule : {"latency-bound", "uncoalesced-access", "saturated-pipe", "l2-thrashing"})
    for (const auto& f : a.findings) CHECK(f.rule != rule);
  // The multiply moves what its work model declares (2 reads, 1 write of 2^24 floats).
  CHECK_FALSE(fires(a, "excess-traffic", "vector/cuda/n=16777216,op=mul"));
}
