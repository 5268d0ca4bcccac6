// Golden files for the Markdown and JSON reporters over REAL data recorded on the GPU
// machine (tests/fixtures/gpu/suite): the reports of a recorded run never change silently.
#include "speedlab_catch.hpp"

#include "analysis/analyze.hpp"
#include "app/run/output_folder.hpp"
#include "tests/golden/golden.hpp"

using namespace speedlab;

namespace {
struct recorded_input {
  app::saved_run run;
  analysis::analysis_result result;
  recorded_input() {
    run = app::load_run(speedlab::testing::fixture_dir() / "gpu" / "suite");
    const auto dir = run.dir;
    auto loader = [dir](const point_result& p) { return app::load_point_trace(dir, p); };
    result = analysis::analyze(run.points, run.device.value_or(analysis::device_model{}), loader);
  }
  reports::report_input input() const {
    const auto dir = run.dir;
    return {run.run, run.points, result, [dir](const point_result& p) { return app::load_point_trace(dir, p); }};
  }
};
} // namespace

TEST_CASE("markdown report of a recorded GPU run matches its golden file", "[report][markdown][gpu-fixtures]") {
  const recorded_input r;
  REQUIRE(r.run.points.size() > 10);
  test_golden::check_golden("recorded/report.md", test_golden::render("markdown", r.input(), "report.md"));
  test_golden::check_golden("recorded/report-full.md", test_golden::render("markdown", r.input(), "report-full.md"));
}

TEST_CASE("JSON results of a recorded GPU run match their golden file", "[report][json][gpu-fixtures]") {
  const recorded_input r;
  test_golden::check_golden("recorded/results.json", test_golden::render("json", r.input(), "results.json"));
}
