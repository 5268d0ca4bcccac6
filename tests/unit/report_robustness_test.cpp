// Reporters keep going when a device trace cannot be read, and say so.
#include "speedlab_catch.hpp"
#include <nlohmann/json.hpp>

#include "reports/reporter.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

TEST_CASE("an unreadable trace is reported, the other points still render", "[report][robustness]") {
  const auto f = test_fixture::make_report_fixture();
  const std::string broken = "vector_add/cuda_resident/n=16777216";
  auto in = f.input();
  auto good = in.load_trace;
  in.load_trace = [good, broken](const point_result& p) -> std::optional<trace::device_trace> {
    if (p.id == broken) throw std::runtime_error("traces/x.json: unexpected end of input");
    return good(p);
  };
  const auto md = test_golden::render("markdown", in, "report-full.md");
  CHECK(md.find("unreadable: traces/x.json: unexpected end of input") != std::string::npos);
  const auto html = test_golden::render("html", in, "report.html");
  CHECK(html.find("unreadable: traces/x.json: unexpected end of input") != std::string::npos);
  const auto trace = nlohmann::json::parse(test_golden::render("perfetto", in, "trace.json"));
  REQUIRE(trace.at("speedlab").at("unreadable_traces").size() == 1);
  CHECK(trace.at("speedlab").at("unreadable_traces")[0].at("id") == broken);
  CHECK(trace.at("speedlab").at("points").size() == 2);
  test_golden::temp_dir dir;
  CHECK(reports::make_reporter("nsys-sqlite")->write(in, dir.path).size() == 1);
}

TEST_CASE("reporters accept an input without a trace loader", "[report][robustness]") {
  const auto f = test_fixture::make_report_fixture();
  auto in = f.input();
  in.load_trace = nullptr;
  for (const auto& name : reports::reporter_names()) {
    INFO(name);
    test_golden::temp_dir dir;
    const auto files = reports::make_reporter(name)->write(in, dir.path);
    if (name == "perfetto" || name == "nsys-sqlite") CHECK(files.empty());
    else if (name == "markdown") CHECK(files.size() == 2); // report.md and report-full.md
    else CHECK(files.size() == 1);
  }
}
