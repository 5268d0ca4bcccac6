// Counter data recorded on the H100 machine, evaluated without a GPU:
// - tests/fixtures/counters/results.jsonl (gpu-check.sh stage "counters", --metrics full, first
//   run): the roofline's memory levels and the rules. Its instruction counters and kernel
//   names ("0", "1") are those of the collector before the fix; nothing here reads them.
// - tests/fixtures/counters/h100-default-set/ (stage "counters-sass", default set, after the
//   fix): metric evaluation against Nsight Compute's values for the same kernels (ncu.json),
//   the roofline from counters alone, and the old one-call-per-metric configuration's values.
// - tests/fixtures/counters/h100-full-set/ (the full set, 30 metrics in 11 passes, on the slowest
//   kernels: Monte Carlo, Mandelbrot 8192^2; the vector multiply with each set): what the
//   pipe and throughput counters make of kernel-below-roofline and saturated-pipe.
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include <fmt/format.h>

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

device_model device(const std::string& file = "device.json") {
  std::ifstream in(fixture(file));
  REQUIRE(in.good());
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
    REQUIRE(p.sections.has<counters::counter_pass>());
    CHECK(p.sections.get<counters::counter_pass>()->passes ==
          2); // the set in one configuration: instruction counters + the rest
    REQUIRE(p.sections.get<counters::counter_pass>()->kernels.size() == 1);
    const auto& k = p.sections.get<counters::counter_pass>()->kernels[0];
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
  const auto f = counters::derive(vec.sections.get<counters::counter_pass>()->kernels[0].metrics);
  CHECK(*f.flops_fp32 == Approx(16777216.0).margin(0.5));
  CHECK(*f.flops_fp64 == 0);
  CHECK(*f.flops_fp32 == Approx(vec.work.flops)); // what the work model declares
  // Mandelbrot is FP64: 2 x DFMA + DADD + DMUL, as ncu counted them.
  const auto& man = find(ps, "mandelbrot/cuda/iterations=256,size=1024");
  const auto fm = counters::derive(man.sections.get<counters::counter_pass>()->kernels[0].metrics);
  CHECK(fm.fp64_dominant());
  const auto& nm = ncu.at(man.sections.get<counters::counter_pass>()->kernels[0].kernel);
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
    REQUIRE(p.sections.has<counters::counter_pass>());
    CHECK(p.sections.get<counters::counter_pass>()->passes == 10);
    const auto& k = p.sections.get<counters::counter_pass>()->kernels.at(0);
    for (const auto& [metric, value] : k.metrics)
      if (is_instruction_counter(metric) && ncu.at(k.kernel).contains(metric)) {
        ++compared;
        wrong += std::abs(value - ncu.at(k.kernel).at(metric).get<double>()) > 0.5;
      }
  }
  CHECK(compared == 6 * 6);
  CHECK(wrong >= 10);
  const auto& vec = find(ps, "vector/cuda/n=16777216,op=mul");
  CHECK(vec.sections.get<counters::counter_pass>()->kernels[0].metrics.at(counters::metric::fmul) ==
        0); // 2^24 FMULs executed
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
  const auto f = counters::derive(vec.sections.get<counters::counter_pass>()->kernels[0].metrics);
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

namespace {

const char* const full_set_cases[] = {"slow-pi", "slow-moment", "slow-mandel8k", "set-full"};

std::vector<point_result> full_set(const std::string& c) { return points("h100-full-set/" + c + "/results.jsonl"); }
device_model full_set_device(const std::string& c) { return device("h100-full-set/" + c + "/device.json"); }

analysis::analysis_result analyze_full_set(const std::string& c, std::vector<point_result> ps = {}) {
  if (ps.empty()) ps = full_set(c);
  return analysis::analyze(ps, full_set_device(c), analysis::trace_loader{}, analysis::analysis_options{});
}

std::vector<analysis::finding> findings(const analysis::analysis_result& a, const std::string& rule,
                                        const std::string& point) {
  std::vector<analysis::finding> out;
  for (const auto& f : a.findings)
    if (f.rule == rule && f.point_id == point) out.push_back(f);
  return out;
}

std::string evidence(const analysis::finding& f, const std::string& name) {
  for (const auto& e : f.evidence)
    if (e.name == name) return e.value;
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("recorded H100 counters, full set: 30 metrics in 11 passes read back", "[counters][analysis]") {
  std::size_t with_counters = 0;
  for (const char* c : full_set_cases) {
    for (const auto& p : full_set(c)) {
      INFO(c << " " << p.id);
      if (p.status != point_status::ok) {
        // montecarlo_pi cuda-lesson failed on purpose (host-generated points over the memory limit).
        CHECK(p.id == "montecarlo_pi/cuda-lesson/M=2700000000");
        CHECK(p.status == point_status::failed);
        CHECK_FALSE(p.sections.has<counters::counter_pass>());
        continue;
      }
      REQUIRE(p.sections.has<counters::counter_pass>());
      CHECK(p.sections.get<counters::counter_pass>()->metric_set == "full");
      CHECK(p.sections.get<counters::counter_pass>()->metrics.size() == 30);
      CHECK(p.sections.get<counters::counter_pass>()->passes == 11);
      CHECK(p.sections.get<counters::counter_pass>()->chip == "GH100");
      CHECK(p.sections.get<counters::counter_pass>()->dropped_ranges == 0);
      REQUIRE(p.sections.get<counters::counter_pass>()->kernels.size() == 1);
      const auto& k = p.sections.get<counters::counter_pass>()->kernels[0];
      CHECK(k.kernel.rfind("_Z", 0) == 0);
      CHECK(k.metrics.size() == 30); // every metric of the set evaluated for the launch
      ++with_counters;
    }
  }
  CHECK(with_counters == 3 + 4 + 3 + 1);
  // The same kernel with the smaller sets: fewer metrics, fewer passes.
  const auto dram = full_set("set-dram"), dflt = full_set("set-default");
  REQUIRE(dram.size() == 1);
  REQUIRE(dflt.size() == 1);
  CHECK(dram[0].sections.get<counters::counter_pass>()->metrics.size() == 3);
  CHECK(dram[0].sections.get<counters::counter_pass>()->passes == 1);
  CHECK(dflt[0].sections.get<counters::counter_pass>()->metrics.size() == 10);
  CHECK(dflt[0].sections.get<counters::counter_pass>()->passes == 2);
}

TEST_CASE("recorded H100 counters, full set: saturated-pipe names the bounding pipe", "[counters][analysis]") {
  const auto man = analyze_full_set("slow-mandel8k");
  const auto f = findings(man, "saturated-pipe", "mandelbrot/cuda-tuned/iterations=256,size=8192");
  REQUIRE(f.size() == 1);
  CHECK(evidence(f[0], "busiest pipe") == "FP64 at 86.0% of peak");
  CHECK(contains(f[0].title, "the FP64 pipe is 86.0% busy"));
  CHECK(findings(man, "saturated-pipe", "mandelbrot/cuda/iterations=256,size=8192").empty()); // FP64 at 65.7%
  const auto pi = analyze_full_set("slow-pi");
  const auto g = findings(pi, "saturated-pipe", "montecarlo_pi/cuda-fast/M=2700000000");
  REQUIRE(g.size() == 1);
  CHECK(evidence(g[0], "busiest pipe") == "ALU (integer, logic) at 81.2% of peak");
  CHECK(findings(pi, "saturated-pipe", "montecarlo_pi/cuda/M=2700000000").empty()); // ALU at 54.4%
}

TEST_CASE("recorded H100 counters, full set: busy integer-bound kernels are not far from the roof",
          "[counters][analysis]") {
  // The Monte Carlo kernels declare FP32 FLOPs but spend their issue slots on the random
  // number generator's integer work: 2-8% of the FP32 roof on declared FLOPs, while the SM
  // is 73-87% busy. Without counters the rule calls that critical; with them it says what
  // bounds the kernel, with no gain to promise.
  struct expect {
    const char* folder;
    const char* point;
    const char* unit; // the busiest unit the finding names
  };
  // The busiest of the bound's units and ncu's SM summary (the full set reads it): the Philox
  // kernels' SM throughput (81.7-87.0%, its FMA-heavy pipe) is above every unit read; the
  // xoshiro kernels' ALU pipe is the busiest.
  const expect busy[] = {
      {"slow-pi", "montecarlo_pi/cuda/M=2700000000", "SM throughput at 81.7% of peak"},
      {"slow-pi", "montecarlo_pi/cuda-tuned/M=2700000000", "SM throughput at 87.0% of peak"},
      {"slow-pi", "montecarlo_pi/cuda-fast/M=2700000000", "ALU pipe at 81.2% of peak"},
      {"slow-moment", "montecarlo/cuda/M=512000000,N=8", "SM throughput at 83.8% of peak"},
      {"slow-moment", "montecarlo/cuda-tuned/M=512000000,N=8", "SM throughput at 85.8% of peak"},
      {"slow-moment", "montecarlo/cuda-fast/M=512000000,N=8", "ALU pipe at 73.7% of peak"},
  };
  for (const auto& e : busy) {
    INFO(e.point);
    const auto a = analyze_full_set(e.folder);
    const auto f = findings(a, "kernel-below-roofline", e.point);
    REQUIRE(f.size() == 1);
    CHECK(f[0].severity == speedlab::severity::info);
    CHECK(f[0].estimated_gain == Approx(1));
    CHECK(evidence(f[0], "busiest unit (counters)") == e.unit);
    CHECK(f[0].title.rfind("the compute phase is bound by its " + std::string(e.unit), 0) == 0);
    CHECK(contains(f[0].title, "not by the compute roof of its declared work"));
    CHECK(contains(evidence(f[0], "kernel speedup left (counters)"), "none"));
    if (contains(e.unit, "SM throughput")) CHECK(contains(f[0].title, "busiest pipe ALU (integer, logic)"));
    CHECK(contains(f[0].explanation, "not headroom"));

    // The same point without its counters: the rule as it was, critical on declared FLOPs.
    auto ps = full_set(e.folder);
    for (auto& p : ps) p.sections.erase("counters");
    const auto old = findings(analyze_full_set(e.folder, ps), "kernel-below-roofline", e.point);
    REQUIRE(old.size() == 1);
    CHECK(old[0].severity == speedlab::severity::critical);
    CHECK(old[0].estimated_gain > 5); // 7x to 27x promised on declared FLOPs
    CHECK(evidence(old[0], "busiest unit (counters)").empty());
  }
}

TEST_CASE("recorded H100 counters, full set: without utilization metrics the FLOP-roof finding stays",
          "[counters][analysis]") {
  // The default set reads instruction counts and occupancy but no pipe or throughput: it
  // cannot tell a busy kernel from an idle one, so the rule stays as without counters.
  const auto dflt = full_set("set-default");
  auto ps = full_set("slow-pi");
  for (auto& p : ps)
    if (p.sections.has<counters::counter_pass>())
      for (auto& k : p.sections.get<counters::counter_pass>()->kernels)
        std::erase_if(k.metrics, [&](const auto& m) {
          return std::find(dflt[0].sections.get<counters::counter_pass>()->metrics.begin(),
                           dflt[0].sections.get<counters::counter_pass>()->metrics.end(),
                           m.first) == dflt[0].sections.get<counters::counter_pass>()->metrics.end();
        });
  REQUIRE(ps[0].sections.get<counters::counter_pass>()->kernels[0].metrics.size() == 10);
  const auto f = findings(analyze_full_set("slow-pi", ps), "kernel-below-roofline", "montecarlo_pi/cuda/M=2700000000");
  REQUIRE(f.size() == 1);
  CHECK(f[0].severity == speedlab::severity::critical);
}

TEST_CASE("recorded H100 counters, full set: an idle kernel keeps its finding, its gain capped by the counters",
          "[counters][analysis]") {
  // montecarlo_pi/cuda's recorded counters with every utilization scaled to a third (SM
  // 27.2%, ALU 18.1%): the kernel now is far from both roofs. The FLOP roof alone would
  // promise 60 / 2.0 = 30x on the kernel; the counters leave 60 / 27.2.
  auto ps = full_set("slow-pi");
  auto& p = ps[0];
  REQUIRE(p.id == "montecarlo_pi/cuda/M=2700000000");
  for (auto& [m, v] : p.sections.get<counters::counter_pass>()->kernels[0].metrics)
    if (contains(m, "pct_of_peak")) v /= 3;
  const double sm = p.sections.get<counters::counter_pass>()->kernels[0].metrics.at(counters::metric::sm_throughput);
  const auto f = findings(analyze_full_set("slow-pi", ps), "kernel-below-roofline", p.id);
  REQUIRE(f.size() == 1);
  CHECK(f[0].title == "the compute phase reaches 2.0% of its compute bound");
  CHECK(evidence(f[0], "busiest unit (counters)") == fmt::format("SM throughput at {:.1f}% of peak", sm));
  CHECK(contains(f[0].explanation, "The hardware counters agree that the kernel is not busy"));
  const double s = 60 / sm, W = p.split_median->wall_ns;
  double t = 0;
  for (const auto& r : analyze_full_set("slow-pi", ps).roofline)
    if (r.point_id == p.id && r.level.empty()) t = r.time_ns;
  REQUIRE(t > 0);
  CHECK(f[0].estimated_gain == Approx(W / (W - t * (1 - 1 / s))));
  CHECK(f[0].severity == speedlab::severity::critical); // about 2.1x: the SM at a quarter of peak is worth fixing
}

TEST_CASE("recorded H100 counters, full set: the DRAM-bound Monte Carlo kernel is transfer-bound",
          "[counters][analysis]") {
  // montecarlo cuda-lesson copies 16 GB of host-generated points per repetition: the copies
  // take 99% of the run, and the kernel that reads them runs DRAM at 92% of peak.
  const auto a = analyze_full_set("slow-moment");
  const std::string id = "montecarlo/cuda-lesson/M=512000000,N=8";
  const auto t = findings(a, "transfer-bound", id);
  REQUIRE(t.size() == 1);
  CHECK(t[0].severity == speedlab::severity::critical);
  for (const char* rule : {"kernel-below-roofline", "latency-bound", "saturated-pipe", "excess-traffic",
                           "uncoalesced-access", "l2-thrashing", "achieved-occupancy"}) {
    INFO(rule);
    CHECK(findings(a, rule, id).empty());
  }
  // Its roofline rows: memory-bound and at its DRAM roof, by declared bytes and by counted ones.
  std::size_t rows = 0;
  for (const auto& r : a.roofline)
    if (r.point_id == id && (r.level.empty() || r.level == "dram")) {
      INFO(r.level);
      CHECK(r.bound == "memory");
      CHECK(r.percent_of_bound > 90);
      ++rows;
    }
  CHECK(rows == 2);
  const auto ps = full_set("slow-moment");
  const auto& k = find(ps, id).sections.get<counters::counter_pass>()->kernels.at(0);
  CHECK(counters::derive(k.metrics).dram_throughput_pct.value() == Approx(92.1).margin(0.05));
}

TEST_CASE("recorded H100 counters, full set: the bound is the busiest unit, beside the declared-work roofline",
          "[counters][analysis][bound]") {
  struct expect {
    const char* folder;
    const char* point;
    const char* unit;
    double pct;
    const char* kind;
  };
  // The cases: the xoshiro pi kernel 81% ALU (ncu 81%), where its declared FLOPs say a
  // few % of the FP32 roof; the tuned Mandelbrot 86% FP64 (ncu 86%); the streaming multiply
  // DRAM 86%: memory.
  const expect cases[] = {
      {"slow-pi", "montecarlo_pi/cuda-fast/M=2700000000", "ALU pipe", 81.2, "compute"},
      {"slow-mandel8k", "mandelbrot/cuda-tuned/iterations=256,size=8192", "FP64 pipe", 86.0, "compute"},
      {"slow-mandel8k", "mandelbrot/cuda/iterations=256,size=8192", "FP64 pipe", 65.7, "compute"},
      {"set-full", "vector/cuda/n=16777216,op=mul", "DRAM", 86.3, "memory"},
  };
  for (const auto& e : cases) {
    INFO(e.point);
    const auto a = analyze_full_set(e.folder);
    std::size_t kernel_rows = 0, phase_rows = 0;
    for (const auto& r : a.roofline) {
      if (r.point_id != e.point || !(r.level.empty() || r.level == "dram")) continue;
      INFO(r.kernel << " level " << r.level);
      CHECK(r.counter_bound == e.unit);
      CHECK(r.counter_bound_pct == Approx(e.pct).margin(0.05));
      CHECK(r.counter_bound_kind == e.kind);
      REQUIRE(r.units.size() >= 7); // DRAM, the six pipes, issue (the full set reads no L2/L1 throughput)
      CHECK(r.units.front().unit == e.unit);
      for (std::size_t i = 1; i < r.units.size(); ++i) CHECK(r.units[i - 1].pct >= r.units[i].pct);
      if (!r.kernel.empty()) {
        ++kernel_rows;
        CHECK(r.kernel.rfind("_Z", 0) != 0); // demangled, the launch's name kept beside it
        CHECK(r.kernel_mangled.rfind("_Z", 0) == 0);
      } else {
        ++phase_rows;
      }
    }
    CHECK(kernel_rows == 1); // the counters' DRAM row (no trace loaded here: no per-kernel work rows)
    CHECK(phase_rows == 1);
  }
  // The pi kernel's declared work: a few % of the FP32 roof, kept beside the bound.
  const auto pi = analyze_full_set("slow-pi");
  for (const auto& r : pi.roofline)
    if (r.point_id == "montecarlo_pi/cuda-fast/M=2700000000" && r.level.empty()) {
      CHECK(r.bound == "compute");
      CHECK(r.percent_of_bound < 10);
    }
  // Without the units' metrics (the dram set), no bound: the roofline alone.
  auto ps = full_set("slow-pi");
  for (auto& p : ps)
    if (p.sections.has<counters::counter_pass>())
      for (auto& k : p.sections.get<counters::counter_pass>()->kernels)
        std::erase_if(k.metrics, [](const auto& m) { return contains(m.first, "pct_of_peak"); });
  for (const auto& r : analyze_full_set("slow-pi", ps).roofline) CHECK(r.counter_bound.empty());
}

TEST_CASE("recorded H100 counters: counter findings name kernels demangled, the mangled name beside",
          "[counters][analysis][bound]") {
  const auto man = analyze_full_set("slow-mandel8k");
  const auto f = findings(man, "saturated-pipe", "mandelbrot/cuda-tuned/iterations=256,size=8192");
  REQUIRE(f.size() == 1);
  CHECK_FALSE(contains(f[0].title, "_Z"));
  CHECK(contains(f[0].title, "mandelbrot"));
  CHECK(contains(f[0].title, "("));                      // the demangled signature
  CHECK(evidence(f[0], "kernel").find("_Z") == std::string::npos);
  CHECK(evidence(f[0], "kernel (mangled)").rfind("_Z", 0) == 0);
}
