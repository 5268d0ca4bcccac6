// The report model's content (reports/report_content.hpp): every reporter renders whatever
// content it is given, on a suite run as on a profiled program, and program_content builds
// a program's once.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "reports/common/program_content.hpp"
#include "reports/reporter.hpp"
#include "speedlab_catch.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"
#include "unit/program_fixture.hpp"

using namespace speedlab;

namespace {

// A section of two tables (one empty), a CSV table, a JSON member and the identity of the
// run's first point: nothing a profiled program would make.
reports::report_content made_up_content(const std::string& first_point) {
  reports::report_content c;
  reports::report_table rows{"extra-first", "First table", "An intro.", {"name", "value"}, {false, true},
                             {{{"k<b>|x", true}, {"42", false}}}, "", 0, nullptr};
  reports::report_table none{"extra-empty", "Empty table", "", {"a"}, {false}, {}, "Nothing here.", 0, nullptr};
  c.sections.push_back({"extra", "Extra", {rows, none}});
  c.data_tables.push_back({"extra_rows", {"a", "b"}, {{"1", "x,y"}}});
  c.json_members.emplace_back("extra", nlohmann::json{{"k", 1}});
  reports::process_identity id;
  id.point_id = first_point;
  id.pid = 4242;
  id.host = "node-a";
  id.rank = 3;
  id.world_size = 4;
  c.processes.push_back(id);
  return c;
}

// The first point with a device trace (trace.json draws only those).
std::size_t first_traced(const test_fixture::report_fixture& f) {
  for (std::size_t i = 0; i < f.points.size(); ++i)
    if (!f.points[i].trace_file.empty()) return i;
  FAIL("the fixture has no traced point");
  return 0;
}

reports::report_input with_content(const test_fixture::report_fixture& f, reports::report_content c) {
  reports::report_input in = f.input();
  in.content = std::move(c);
  return in;
}

} // namespace

TEST_CASE("report content: report.md and report-full.md render a suite run's sections", "[report][content][markdown]") {
  const auto f = test_fixture::make_report_fixture();
  const auto in = with_content(f, made_up_content(f.points[0].id));
  for (const char* file : {"report.md", "report-full.md"}) {
    INFO(file);
    const std::string md = test_golden::render("markdown", in, file);
    CHECK(md.find("## First table\n\nAn intro.\n\n| name | value |\n|---|---:|\n| `k<b>\\|x` | 42 |\n") != std::string::npos);
    CHECK(md.find("### Empty table\n\nNothing here.\n\n") != std::string::npos);
    // Right after the overview in the short report; under the run's header in the full one.
    CHECK(md.find("## First table") > md.find("## Overview"));
  }
  const std::string plain = test_golden::render("markdown", f.input(), "report.md");
  CHECK(plain.find("First table") == std::string::npos);
}

TEST_CASE("report content: report.html renders a suite run's sections, escaped, with a link", "[report][content][html]") {
  const auto f = test_fixture::make_report_fixture();
  const std::string html = test_golden::render("html", with_content(f, made_up_content(f.points[0].id)), "report.html");
  CHECK(html.find("<a href=\"#extra\">Extra</a>") != std::string::npos);
  CHECK(html.find("<section id=\"extra\"><h2 id=\"extra-first\">First table</h2><p>An intro.</p>") != std::string::npos);
  CHECK(html.find("<code>k&lt;b&gt;|x</code>") != std::string::npos);
  CHECK(html.find("<h3 id=\"extra-empty\">Empty table</h3><p class=\"note\">Nothing here.</p></section>") != std::string::npos);
  CHECK(html.find("k<b>") == std::string::npos);
}

TEST_CASE("report content: CSV tables, JSON members and process identities on a suite run", "[report][content][csv][json]") {
  const auto f = test_fixture::make_report_fixture();
  const std::size_t traced = first_traced(f);
  const auto in = with_content(f, made_up_content(f.points[traced].id));
  CHECK(test_golden::render("csv", in, "extra_rows.csv") == "a,b\r\n1,\"x,y\"\r\n");

  const std::string text = test_golden::render("json", in, "results.json");
  CHECK(text.find("\"extra\": {") > text.find("\"analysis\": {"));
  const auto j = nlohmann::json::parse(text);
  CHECK(j.at("extra").at("k") == 1);
  for (std::size_t i = 0; i < f.points.size(); ++i) {
    const auto& p = j.at("points")[i];
    CHECK(p.contains("rank") == (i == traced)); // only the point with an identity
  }
  const auto& p = j.at("points")[traced];
  CHECK(p.at("rank") == 3);
  CHECK(p.at("host") == "node-a");
  CHECK(p.at("local_rank").is_null());
  CHECK(p.at("world_size") == 4);

  // trace.json groups the point with a rank under the rank's name.
  const auto trace = nlohmann::json::parse(test_golden::render("perfetto", in, "trace.json"));
  std::size_t rank_groups = 0;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name" &&
        e.at("args").at("name").get<std::string>().starts_with("rank 3 (node-a, pid 4242)"))
      ++rank_groups;
  CHECK(rank_groups == 1);
}

TEST_CASE("report content: a profiled program's is built once from its analysis", "[report][content][program]") {
  using namespace speedlab::test_program;
  analysis::program_facts facts{{"python3", "loop.py"}, "2026-11-23T10:00:00Z", "node", "0.9", 0.2, 0, {}};
  const auto a = analysis::analyze_program(std::vector<profile::process_profile>{shell(), bad_loop(), clean_loop()}, facts,
                                           analysis::device_model{});
  const auto c = reports::program_content(a);
  REQUIRE(c.sections.size() == 1);
  CHECK(c.sections[0].id == "program");
  CHECK(c.sections[0].label == "Program");
  REQUIRE(!c.sections[0].tables.empty());
  CHECK(c.sections[0].tables[0].title == "Program");
  std::vector<std::string> names;
  for (const auto& t : c.data_tables) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"program_processes", "program_kernels", "program_ranges", "program_streams"});
  REQUIRE(c.data_tables[0].rows.size() == 3);
  REQUIRE(c.json_members.size() == 1);
  CHECK(c.json_members[0].first == "program");
  CHECK(c.json_members[0].second.at("processes").size() == 3);
  REQUIRE(c.processes.size() == a.processes.size());
  for (std::size_t i = 0; i < a.processes.size(); ++i) {
    CHECK(c.processes[i].point_id == analysis::process_point_id(a.processes[i].info.pid));
    CHECK(c.processes[i].host == a.processes[i].info.host);
    CHECK_FALSE(c.processes[i].rank); // no launcher's rank variable
  }
}
