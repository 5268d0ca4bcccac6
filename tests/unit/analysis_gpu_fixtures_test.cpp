// Analysis and time split over REAL runs recorded on the GPU machine (an H100, through
// scripts/gpu-check.sh; see tests/fixtures/gpu/README.md): the lesson suite at default sizes
// (vector, reduction, histogram points with their CUPTI traces) and a size sweep.
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <cmath>
#include <filesystem>

#include "analysis/analyze.hpp"
#include "app/run/output_folder.hpp"
#include "analysis/time_split.hpp"

using namespace speedlab;

namespace {

const std::filesystem::path fixtures = speedlab::testing::fixture_dir() / "gpu";

struct recorded {
  app::saved_run run;
  analysis::analysis_result result;
};

const recorded& load(const std::string& name) {
  static std::map<std::string, recorded> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  recorded r;
  r.run = app::load_run(fixtures / name);
  REQUIRE(r.run.device);
  const auto dir = r.run.dir;
  r.result = analysis::analyze(r.run.points, *r.run.device,
                               [dir](const point_result& p) { return app::load_point_trace(dir, p); });
  return cache.emplace(name, std::move(r)).first->second;
}

const point_result& point(const recorded& r, const std::string& id) {
  for (const auto& p : r.run.points)
    if (p.id == id) return p;
  FAIL("no point " << id << " in the fixture");
  throw std::logic_error("unreachable");
}

std::vector<const analysis::finding*> findings(const recorded& r, const std::string& rule, const std::string& id) {
  std::vector<const analysis::finding*> out;
  for (const auto& f : r.result.findings)
    if (f.rule == rule && f.point_id == id) out.push_back(&f);
  return out;
}

std::string evidence(const analysis::finding& f, const std::string& name) {
  for (const auto& e : f.evidence)
    if (e.name == name) return e.value;
  return {};
}

const std::string lesson_vector = "vector/cuda-lesson/n=16777216,op=mul";
const std::string resident_vector = "vector/cuda/n=16777216,op=mul";

} // namespace

TEST_CASE("recorded GPU run: the time split of the lesson-style vector multiply", "[gpu-fixtures][time_split]") {
  const auto& r = load("suite");
  const auto& p = point(r, lesson_vector);
  REQUIRE(p.split_median);
  const auto& s = *p.split_median;
  // Transfers dominate: the lesson's point.
  CHECK((s.h2d + s.d2h) / s.wall_ns > 0.8);
  CHECK(s.kernel / s.wall_ns < 0.01);
  // Recomputing the split from the recorded CUPTI trace gives the stored one, and every
  // repetition's parts add up to its wall time. The fixture was recorded before GPU-idle time
  // inside a synchronous copy call counted as that copy's transfer time instead of sync: only
  // that time may move, from sync to h2d/d2h.
  const auto trace = app::load_point_trace(r.run.dir, p);
  REQUIRE(trace);
  CHECK(trace->dropped_records == 0);
  const auto splits = analysis::compute_time_splits(*trace);
  REQUIRE(splits.size() == p.splits.size());
  for (std::size_t i = 0; i < splits.size(); ++i) {
    const auto& t = splits[i];
    CHECK(t.kernel + t.h2d + t.d2h + t.copy_other + t.memset + t.sync + t.api + t.host == Approx(t.wall_ns).epsilon(1e-12));
    const auto& stored = p.splits[i];
    CHECK(t.h2d >= stored.h2d);
    CHECK(t.d2h >= stored.d2h);
    CHECK(t.sync <= stored.sync);
    CHECK(t.h2d + t.d2h + t.sync == Approx(stored.h2d + stored.d2h + stored.sync));
    CHECK(t.kernel == Approx(stored.kernel));
    CHECK(t.api == Approx(stored.api));
    CHECK(t.host == Approx(stored.host));
    CHECK(t.wall_ns == Approx(p.samples_ns[i]));
  }
  // Correlation: every kernel and memcpy links to the runtime call that issued it.
  std::set<std::uint32_t> api_ids;
  for (const auto& a : trace->api_calls) api_ids.insert(a.correlation);
  for (const auto& k : trace->kernels) CHECK(api_ids.count(k.correlation));
  for (const auto& m : trace->memcpys) CHECK(api_ids.count(m.correlation));
  // Clock alignment: device activity lies inside the repetition windows it belongs to.
  for (const auto& k : trace->kernels) {
    bool inside = false;
    for (const auto& w : trace->repetitions) inside = inside || (k.start >= w.start && k.end <= w.end);
    if (k.start >= trace->repetitions.front().start && k.end <= trace->repetitions.back().end) CHECK(inside);
  }
}

TEST_CASE("recorded GPU run: transfer-bound and pageable-memory findings for the lesson variant", "[gpu-fixtures][rules]") {
  const auto& r = load("suite");
  const auto transfer = findings(r, "transfer-bound", lesson_vector);
  REQUIRE(transfer.size() == 1);
  CHECK(transfer[0]->severity == speedlab::severity::critical);
  const auto pageable = findings(r, "pageable-memory", lesson_vector);
  REQUIRE(pageable.size() == 1);
  // The gain comes from the measured pinned and pageable bandwidths of the same GPU.
  CHECK(pageable[0]->estimated_gain > 1.5);
  CHECK_THAT(evidence(*pageable[0], "h2d_pinned_bw"), Catch::Contains("measured"));
  CHECK_THAT(evidence(*pageable[0], "h2d_pageable_bw"), Catch::Contains("measured"));
  // The device-resident variant copies nothing per repetition: neither finding.
  CHECK(findings(r, "transfer-bound", resident_vector).empty());
  CHECK(findings(r, "pageable-memory", resident_vector).empty());
}

TEST_CASE("recorded GPU run: the device-resident vector multiply is placed memory-bound", "[gpu-fixtures][roofline]") {
  const auto& r = load("suite");
  bool placed = false;
  for (const auto& row : r.result.roofline) {
    if (row.point_id != resident_vector || !row.kernel.empty()) continue;
    placed = true;
    CHECK(row.processor == "gpu");
    CHECK(row.bound == "memory");
    CHECK(row.roof_measured);
    CHECK(row.percent_of_bound > 50);
    CHECK(row.percent_of_bound < 110);
  }
  CHECK(placed);
}

TEST_CASE("recorded GPU sweep: problem-too-small at small sizes, not at large ones", "[gpu-fixtures][rules]") {
  const auto& r = load("sweep");
  CHECK_FALSE(findings(r, "problem-too-small", "vector/cuda-lesson/n=1024,op=mul").empty());
  CHECK_FALSE(findings(r, "problem-too-small", "vector/cuda/n=1024,op=mul").empty());
  CHECK(findings(r, "problem-too-small", "vector/cuda/n=67108864,op=mul").empty());
}

TEST_CASE("recorded GPU sweep: crossover sizes for the GPU variants vs serial and threads", "[gpu-fixtures][crossover]") {
  const auto& r = load("sweep");
  auto find = [&](const std::string& w, const std::string& v, const std::string& base, bool copies) {
    for (const auto& c : r.result.crossovers)
      if (c.workload == w && c.variant == v && c.baseline == base && c.with_transfers == copies) return &c;
    return static_cast<const analysis::crossover*>(nullptr);
  };
  for (const char* w : {"vector", "reduction", "transcendental", "mandelbrot"})
    for (const char* v : {"cuda", "cuda-lesson"})
      for (const char* base : {"serial", "threads"}) {
        INFO(w << " " << v << " vs " << base);
        const auto* c = find(w, v, base, true);
        REQUIRE(c); // every pair is analyzed, with a crossover or a stated reason why none
        CHECK((c->size.has_value() || !c->note.empty()));
      }
  // The device-resident vector multiply overtakes serial inside the sweep: between two
  // measured sizes, the estimate inside its interval.
  const auto* c = find("vector", "cuda", "serial", true);
  REQUIRE(c);
  REQUIRE(c->size);
  CHECK(c->in_range);
  CHECK(c->faster_above);
  CHECK(c->size_low <= *c->size);
  CHECK(*c->size <= c->size_high);
  CHECK(*c->size > 1024);
  CHECK(*c->size < 1 << 20);
}

TEST_CASE("recorded GPU runs: every finding, speedup and what-if is well formed", "[gpu-fixtures]") {
  for (const char* name : {"suite", "sweep"}) {
    const auto& r = load(name);
    for (const auto& f : r.result.findings) {
      INFO(f.rule << " on " << f.point_id);
      CHECK(!f.explanation.empty());
      CHECK(!f.next_experiment.empty());
      CHECK(f.estimated_gain >= 1.0);
    }
    for (const auto& s : r.result.speedups) {
      CHECK(s.ci_low <= s.ratio);
      CHECK(s.ratio <= s.ci_high);
    }
    for (const auto& w : r.result.what_ifs) CHECK(w.projected_ns <= w.measured_ns * (1 + 1e-9));
  }
}
