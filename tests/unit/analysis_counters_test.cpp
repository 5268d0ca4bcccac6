// The counter roofline and the counter rules on data recorded on the H100 machine
// (tests/fixtures/counters: gpu-check.sh stage "counters", --metrics full, 2026-11-23).
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <fstream>
#include <string>

#include "analysis/analyze.hpp"
#include "analysis/roofline.hpp"
#include "model/results.hpp"

using namespace speedlab;

namespace {

std::string fixture(const std::string& name) { return (speedlab::testing::fixture_dir() / "counters" / name).string(); }

std::vector<point_result> points() {
  std::vector<point_result> out;
  std::ifstream in(fixture("results.jsonl"));
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
