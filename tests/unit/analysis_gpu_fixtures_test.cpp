// Analysis over REAL runs recorded on the GPU machine (tests/fixtures/gpu/: results.jsonl,
// traces/*.json and, when present, device.json). Until the lead records them this test
// only says so. Extend it with checks of what each recorded lesson must show (e.g. the
// pageable lesson variant transfer-bound, the device-resident one not).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/analysis/analyze.hpp"

using namespace speedlab;

namespace {

const std::filesystem::path gpu_fixtures = std::filesystem::path(SPEEDLAB_TEST_FIXTURE_DIR) / "gpu";

struct recorded_run {
  std::vector<point_result> points;
  analysis::device_model device;
  bool present = false;
};

recorded_run load_recorded() {
  recorded_run r;
  std::ifstream in(gpu_fixtures / "results.jsonl");
  if (!in) return r;
  r.present = true;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) r.points.push_back(nlohmann::json::parse(line).get<point_result>());
  if (std::ifstream d(gpu_fixtures / "device.json"); d) r.device = nlohmann::json::parse(d).get<analysis::device_model>();
  return r;
}

analysis::trace_loader loader() {
  return [](const point_result& p) -> std::optional<trace::device_trace> {
    if (p.trace_file.empty()) return std::nullopt;
    std::ifstream in(gpu_fixtures / p.trace_file);
    if (!in) return std::nullopt;
    return nlohmann::json::parse(in).get<trace::device_trace>();
  };
}

} // namespace

TEST_CASE("recorded GPU runs: analysis is complete and consistent", "[analysis][gpu-fixtures]") {
  const recorded_run run = load_recorded();
  if (!run.present) {
    WARN("no recorded GPU fixtures in " << gpu_fixtures << " yet: nothing to check");
    return;
  }
  REQUIRE(!run.points.empty());
  const auto r = analysis::analyze(run.points, run.device, loader());

  for (const auto& f : r.findings) {
    INFO(f.rule << " on " << f.point_id);
    CHECK(!f.title.empty());
    CHECK(!f.threshold.empty());
    CHECK(!f.explanation.empty());
    CHECK(!f.next_experiment.empty());
    CHECK(f.estimated_gain >= 1.0);
    CHECK((f.severity == "info" || f.severity == "warning" || f.severity == "critical"));
  }
  for (const auto& s : r.speedups) {
    CHECK(s.ci_low <= s.ratio);
    CHECK(s.ratio <= s.ci_high);
    CHECK((s.verdict == "faster" || s.verdict == "slower" || s.verdict == "same" || s.verdict == "unclear"));
  }
  for (const auto& w : r.what_ifs) {
    CHECK(w.projected_ns <= w.measured_ns * (1 + 1e-9));
    CHECK(w.max_speedup >= 1.0);
  }
  for (const auto& row : r.roofline) {
    CHECK(std::isfinite(row.percent_of_bound));
    // Far above 100% of a measured roof means the work model or the timing is wrong.
    if (row.roof_measured && row.kernel.empty()) CHECK(row.percent_of_bound < 150);
  }
  for (const auto& c : r.crossovers)
    if (c.size && c.in_range) CHECK((c.size_low <= *c.size && *c.size <= c.size_high));
  CHECK_NOTHROW(nlohmann::json(r).get<analysis::analysis_result>()); // no NaN written as null
  WARN("recorded run: " << run.points.size() << " points, " << r.findings.size() << " findings, " << r.speedups.size()
                        << " speedups, " << r.crossovers.size() << " crossovers");
}
