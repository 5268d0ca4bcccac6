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
