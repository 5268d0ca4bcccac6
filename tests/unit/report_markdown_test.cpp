// Golden test of the markdown reporter (and its behaviour on CPU-only and hostile input).
#include "speedlab_catch.hpp"

#include "reports/reporter.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

TEST_CASE("markdown report matches the golden file", "[report][markdown]") {
  const auto f = test_fixture::make_report_fixture();
  const auto text = test_golden::render("markdown", f.input(), "report.md");
  test_golden::check_golden("report.md", text);
  CHECK(text.size() < 65000); // fits a pull-request comment
  test_golden::check_golden("report-full.md", test_golden::render("markdown", f.input(), "report-full.md"));
}

TEST_CASE("markdown report: Python points get the best-C++-over-best-Python table and the bridge's cost",
          "[report][markdown][python]") {
  auto f = test_fixture::make_report_fixture();
  point_result py = f.points.front();
  py.variant = "py-numpy";
  py.id = py.workload + "/py-numpy/" + py.id.substr(py.id.rfind('/') + 1);
  py.language = "python";
  py.phase_median_ns["compute"] = 150e3;
  py.self_timed_ns["python compute"] = {100e3, 110e3, 120e3}; // median 110 us: the bridge adds 40 us
  f.points.push_back(py);
  analysis::speedup s;
  s.workload = py.workload;
  s.params_key = "n=1048576";
  s.variant = "cuda";
  s.baseline = "py-numpy";
  s.ratio = 12.5;
  s.ci_low = 12.1;
  s.ci_high = 12.9;
  s.method = "bootstrap";
  s.verdict = speedlab::verdict::faster;
  f.analysis.cpp_over_python.push_back(s);
  // The short report states the comparison; the full one adds the bridge's cost per point.
  const auto text = test_golden::render("markdown", f.input(), "report.md");
  CHECK_THAT(text, Catch::Contains("## Best C++ over best Python"));
  CHECK_THAT(text, Catch::Contains("`py-numpy`"));
  CHECK_THAT(text, Catch::Contains("12.5x faster [12.1"));
  CHECK_THAT(text, !Catch::Contains("The Python bridge's cost per request"));
  const auto full = test_golden::render("markdown", f.input(), "report-full.md");
  CHECK_THAT(full, Catch::Contains("## Best C++ over best Python"));
  CHECK_THAT(full, Catch::Contains("The Python bridge's cost per request"));
  CHECK_THAT(full, Catch::Contains(py.id));
  CHECK_THAT(full, Catch::Contains("40.0 µs")); // 150 us - 110 us
}
