// speedlab compare: matching, verdicts from the bootstrap interval, ordering, warnings, and
// the command's exit codes (0 no clear regression, 1 regression, 2 bad input).
#include "speedlab_catch.hpp"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "analysis/compare.hpp"
#include "app/commands.hpp"
#include "model/statistics.hpp"
#include "reports/compare/compare_report.hpp"
#include "tests/golden/golden.hpp"

using namespace speedlab;
using namespace speedlab::analysis;

namespace {

// A point with samples around `median` (a fixed +-2% pattern, so the test is deterministic).
point_result sampled(const std::string& variant, double median, double scale = 1.0) {
  point_result p;
  p.workload = "vector";
  p.variant = variant;
  p.params = {{"n", "1024"}};
  p.id = "vector/" + variant + "/n=1024";
  for (int i = 0; i < 30; ++i) p.samples_ns.push_back(scale * median * (1 + 0.02 * ((i * 7) % 11 - 5) / 5.0));
  p.wall = stats::summarize(p.samples_ns);
  return p;
}

run_info run(const std::string& gpu = "H100") {
  run_info r;
  r.speedlab_version = "0.1.0";
  r.gpu_name = gpu;
  r.suite = "s.yaml";
  return r;
}

void save(const std::filesystem::path& dir, const run_info& r, const std::vector<point_result>& points) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run.json") << nlohmann::json(r).dump();
  std::ofstream out(dir / "results.jsonl");
  for (const auto& p : points) out << nlohmann::json(p).dump() << '\n';
}

} // namespace

TEST_CASE("compare_verdict needs the whole interval beyond the threshold", "[compare]") {
  CHECK(compare_verdict(1.2, 1.15, 1.25, 0.1) == "slower");
  CHECK(compare_verdict(1.2, 1.05, 1.35, 0.1) == "unclear"); // beyond, but not clearly
  CHECK(compare_verdict(1.05, 1.03, 1.07, 0.1) == "same");   // a real change within the threshold
  CHECK(compare_verdict(0.8, 0.75, 0.85, 0.1) == "faster");
  CHECK(compare_verdict(1.0, 0, 0, 0.1) == "unclear");
}

TEST_CASE("a run against itself is the same everywhere", "[compare]") {
  const std::vector<point_result> points = {sampled("serial", 1e6), sampled("cuda", 1e5)};
  const auto c = compare_runs(run(), points, run(), points);
  REQUIRE(c.points.size() == 2);
  for (const auto& d : c.points) {
    CHECK(d.verdict == "same");
    CHECK(d.method == "bootstrap");
    CHECK(d.ratio == Approx(1.0));
    CHECK(d.ci_low <= 1.0);
    CHECK(d.ci_high >= 1.0);
  }
  CHECK_FALSE(c.has_regression());
  CHECK(c.warnings.empty());
}

TEST_CASE("a variant made 20% slower is slower, listed first, the rest same", "[compare]") {
  const std::vector<point_result> base = {sampled("serial", 1e6), sampled("cuda", 1e5), sampled("threads", 3e5)};
  const std::vector<point_result> next = {sampled("serial", 1e6), sampled("cuda", 1e5, 1.2), sampled("threads", 3e5),
                                          sampled("extra", 1e5)};
  auto base_more = base;
  base_more.push_back(sampled("gone", 1e5));
  const auto c = compare_runs(run(), base_more, run("A100"), next);
  REQUIRE(c.points.size() == 3);
  CHECK(c.points[0].variant == "cuda");
  CHECK(c.points[0].verdict == "slower");
  CHECK(c.points[0].ratio == Approx(1.2));
  CHECK(c.points[0].ci_low > 1.1);
  CHECK(c.points[1].verdict == "same");
  CHECK(c.points[2].verdict == "same");
  CHECK(c.has_regression());
  CHECK(c.only_base == std::vector<std::string>{"vector/gone/n=1024"});
  CHECK(c.only_new == std::vector<std::string>{"vector/extra/n=1024"});
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("different GPU") != std::string::npos);
  // Rendered: the warning at the top, regressions first.
  const auto md = reports::compare_markdown(c);
  CHECK(md.find("different GPU") < md.find("| slower |"));
  CHECK(md.find("**Only in BASE**") != std::string::npos);
  const auto html = reports::compare_html(c);
  CHECK(html.find("<tr class=\"v-slower\">") != std::string::npos);
  CHECK(reports::compare_json(c).at("regression") == true);
}

TEST_CASE("a point that broke is a regression; one wrong on purpose is not", "[compare]") {
  auto broken = sampled("cuda", 1e5);
  broken.status = point_status::crashed;
  const auto c = compare_runs(run(), {sampled("cuda", 1e5)}, run(), {broken});
  REQUIRE(c.points.size() == 1);
  CHECK(c.points[0].verdict == "broken");
  CHECK(c.has_regression());
  auto racy = sampled("cuda", 1e5);
  racy.status = point_status::invalid;
  racy.expected_invalid = true;
  const auto d = compare_runs(run(), {racy}, run(), {racy});
  CHECK(d.points[0].verdict == "not measured");
  CHECK_FALSE(d.has_regression());
}

TEST_CASE("speedlab compare exits 0, 1, or 2 on bad input", "[compare][app]") {
  test_golden::temp_dir dir;
  save(dir.path / "base", run(), {sampled("serial", 1e6), sampled("cuda", 1e5)});
  save(dir.path / "same", run(), {sampled("serial", 1e6), sampled("cuda", 1e5)});
  save(dir.path / "slow", run(), {sampled("serial", 1e6), sampled("cuda", 1e5, 1.2)});
  app::compare_cli_options o;
  o.base_dir = (dir.path / "base").string();
  o.new_dir = (dir.path / "same").string();
  o.out_dir = (dir.path / "out").string();
  o.formats = {"md", "html", "json"};
  CHECK(app::command_compare(o) == 0);
  CHECK(std::filesystem::exists(dir.path / "out" / "compare.html"));
  o.new_dir = (dir.path / "slow").string();
  CHECK(app::command_compare(o) == 1);
  // A 25% threshold lets the 20% change pass.
  o.threshold_percent = 25;
  CHECK(app::command_compare(o) == 0);
  // Bad input: not a run folder. main() turns the exception into exit 2 with the message.
  o.new_dir = (dir.path / "nowhere").string();
  CHECK_THROWS_WITH(app::command_compare(o), Catch::Contains("nowhere"));
}
