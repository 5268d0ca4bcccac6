// Findings grouped by rule and workload, ranked by what fixing them would save.
#include "speedlab_catch.hpp"

#include "analysis/finding_groups.hpp"

using namespace speedlab;
using namespace speedlab::analysis;

namespace {

point_result point(const std::string& workload, const std::string& variant, const std::string& n, double median_ns) {
  point_result p;
  p.workload = workload;
  p.variant = variant;
  p.params = {{"n", n}};
  p.id = workload + "/" + variant + "/n=" + n;
  p.wall.count = 10;
  p.wall.median = median_ns;
  return p;
}

finding make(const point_result& p, const std::string& rule, const std::string& title, double gain,
             speedlab::severity severity = speedlab::severity::warning) {
  finding f;
  f.rule = rule;
  f.title = title;
  f.point_id = p.id;
  f.workload = p.workload;
  f.variant = p.variant;
  f.estimated_gain = gain;
  f.severity = severity;
  return f;
}

} // namespace

TEST_CASE("title_figure reads the figure a title leads with", "[analysis][finding-groups]") {
  double v = 0;
  std::string unit;
  REQUIRE(title_figure("93.9% of the run is spent in pageable-memory copies", v, unit));
  CHECK(v == Approx(93.9));
  CHECK(unit == "%");
  // Digits inside a kernel name are not the figure.
  REQUIRE(title_figure("kernel naive_kernel<8>(int const*) reaches 15.5% of its memory bound", v, unit));
  CHECK(v == Approx(15.5));
  REQUIRE(title_figure("the GPU variant is 1.82x slower than serial at this size", v, unit));
  CHECK(v == Approx(1.82));
  CHECK(unit == "x slower"); // never one range with "x faster" figures
  REQUIRE(title_figure("up to 4.21x", v, unit));
  CHECK(unit == "x");
  CHECK_FALSE(title_figure("nothing to see", v, unit));
}

TEST_CASE("findings group by rule and workload and rank by saved time", "[analysis][finding-groups]") {
  const std::vector<point_result> points = {point("vector", "serial", "1024", 1e6), point("vector", "cuda", "1024", 4e6),
                                            point("vector", "cuda", "4096", 5e6), point("scan", "cuda", "1024", 1e6)};
  analysis_result a;
  // Two points of one rule in one workload: one group, its figures' range, the larger first.
  a.findings.push_back(make(points[1], "pageable-memory", "42.1% of the run is spent in pageable-memory copies", 1.3));
  a.findings.push_back(make(points[2], "pageable-memory", "93.9% of the run is spent in pageable-memory copies", 2.8, speedlab::severity::critical));
  // Same rule elsewhere: its own group.
  a.findings.push_back(make(points[3], "pageable-memory", "9.2% of the run is spent in pageable-memory copies", 1.05, speedlab::severity::info));
  // No gain estimate but nearly all of the run: severity follows the magnitude.
  a.findings.push_back(make(points[3], "host-bound", "the GPU idles 99.7% of the run while the host works", 1.0, speedlab::severity::info));
  const auto groups = group_findings(a, points);
  REQUIRE(groups.size() == 3);
  const auto& g = groups[0];
  CHECK(g.rule == "pageable-memory");
  CHECK(g.workload == "vector");
  REQUIRE(g.findings.size() == 2);
  CHECK(g.findings.front() == 1); // the larger saving first
  CHECK(g.figure_min == Approx(42.1));
  CHECK(g.figure_max == Approx(93.9));
  CHECK(g.figure_unit == "%");
  CHECK(g.gain_min == Approx(1.3));
  CHECK(g.gain_max == Approx(2.8));
  CHECK(g.severity == speedlab::severity::critical);
  // Saved: 4 ms x (1 - 1/1.3) + 5 ms x (1 - 1/2.8) of the workload's 10 ms.
  CHECK(g.saved_ns == Approx(4e6 * (1 - 1 / 1.3) + 5e6 * (1 - 1 / 2.8)));
  CHECK(g.saved_share == Approx(g.saved_ns / 10e6));
  CHECK(g.headline.find("pageable") != std::string::npos); // the rule's own summary
  // scan: the small pageable saving ranks before host-bound (no gain estimate)...
  CHECK(groups[1].rule == "pageable-memory");
  CHECK(groups[1].severity == speedlab::severity::info);
  // ...but idling the GPU 99.7% of the run is critical, not info.
  CHECK(groups[2].rule == "host-bound");
  CHECK(groups[2].severity == speedlab::severity::critical);
}

TEST_CASE("the top finding of a point is the one with the largest saving", "[analysis][finding-groups]") {
  const auto p = point("vector", "cuda", "1024", 1e6);
  analysis_result a;
  a.findings.push_back(make(p, "synchronization-heavy", "11.3% of the run is idle synchronization", 1.1));
  a.findings.push_back(make(p, "transfer-bound", "copies take 93.9% of the run", 16));
  const auto top = top_finding_by_point(a);
  REQUIRE(top.count(p.id));
  CHECK(top.at(p.id) == 1);
}
