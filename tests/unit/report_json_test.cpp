// results.json and results.csv: golden output, schema header, round trip, RFC 4180.
#include "speedlab_catch.hpp"
#include <nlohmann/json.hpp>

#include "reports/reporter.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

TEST_CASE("results.json matches the golden file", "[report][json]") {
  const auto f = test_fixture::make_report_fixture();
  test_golden::check_golden("results.json", test_golden::render("json", f.input(), "results.json"));
}

TEST_CASE("results.json carries the schema header and round-trips the model", "[report][json]") {
  const auto f = test_fixture::make_report_fixture();
  const auto j = nlohmann::json::parse(test_golden::render("json", f.input(), "results.json"));
  CHECK(j.at("schema") == "speedlab-results");
  CHECK(j.at("schema_version") == 1);
  CHECK(j.at("run").at("hostname") == f.run.hostname);
  REQUIRE(j.at("points").size() == f.points.size());
  for (std::size_t i = 0; i < f.points.size(); ++i) {
    const auto p = j.at("points")[i].get<point_result>();
    CHECK(p.id == f.points[i].id);
    CHECK(p.status == f.points[i].status);
    CHECK(p.wall.median == f.points[i].wall.median);
    CHECK(p.samples_ns == f.points[i].samples_ns);
  }
  const auto a = j.at("analysis").get<analysis::analysis_result>();
  CHECK(a.findings.size() == f.analysis.findings.size());
  CHECK(a.speedups.size() == f.analysis.speedups.size());
}

TEST_CASE("results.json survives invalid UTF-8 in plugin text", "[report][json]") {
  auto f = test_fixture::make_report_fixture();
  f.points[0].reason = std::string("bad \xC3\x28 byte");
  const auto j = nlohmann::json::parse(test_golden::render("json", f.input(), "results.json"));
  CHECK(j.at("points")[0].at("reason").get<std::string>().find("bad ") == 0);
}

namespace {
// A minimal RFC 4180 reader: rows of fields, CRLF line ends, "" inside quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, field_started = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"' && !field_started) quoted = field_started = true;
    else if (c == ',') rows.back().push_back(field), field.clear(), field_started = false;
    else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field), field.clear(), field_started = false;
      rows.emplace_back();
      ++i;
    } else field += c, field_started = true;
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}
} // namespace

TEST_CASE("results.csv has one row per point and quotes per RFC 4180", "[report][csv]") {
  auto f = test_fixture::make_report_fixture();
  f.points.back().reason = "crashed, \"badly\"\r\nsecond line";
  const auto text = test_golden::render("csv", f.input(), "results.csv");
  const auto rows = parse_csv(text);
  REQUIRE(rows.size() == f.points.size() + 1);
  const auto& header = rows[0];
  const std::vector<std::string> leading = {"id", "workload", "variant", "kind", "params", "status", "median_ns", "q1_ns",
                                            "q3_ns", "ci_low_ns", "ci_high_ns", "mean_ns", "stddev_ns", "min_ns", "max_ns",
                                            "samples", "gb_per_s", "gflop_per_s", "split_kernel_ns"};
  REQUIRE(header.size() >= leading.size());
  CHECK(std::vector<std::string>(header.begin(), header.begin() + static_cast<long>(leading.size())) == leading);
  for (const auto& r : rows) CHECK(r.size() == header.size());
  auto col = [&header](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  CHECK(rows.back()[col("reason")] == f.points.back().reason);
  CHECK(rows[1][col("id")] == f.points[0].id);
  CHECK(std::stod(rows[1][col("median_ns")]) == f.points[0].wall.median);
  CHECK(rows[1][col("params")] == "n=1024");
  // A point without device data leaves the split columns empty; a CUDA point fills them.
  CHECK(rows[1][col("split_kernel_ns")].empty());
  const auto& naive = rows[7];
  CHECK(naive[col("variant")] == "cuda_naive");
  CHECK(std::stod(naive[col("split_wall_ns")]) == Approx(f.points[6].split_median->wall_ns));
  // Every record ends with CRLF.
  CHECK(text.size() >= 2);
  CHECK(text.substr(text.size() - 2) == "\r\n");
}
