// report.html: self-contained, charts present, and every untrusted string escaped.
#include <regex>

#include "speedlab_catch.hpp"
#include <nlohmann/json.hpp>

#include "reports/reporter.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

namespace {
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}
} // namespace

TEST_CASE("html escapes a kernel named <script>alert(1)</script> everywhere", "[report][html]") {
  const auto f = test_fixture::make_report_fixture(true);
  const auto html = test_golden::render("html", f.input(), "report.html");
  CHECK(html.find("<script>alert") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  // The hostile variant, parameter and reason text arrive as text, in tables and in SVG.
  CHECK(html.find("<b>naive") == std::string::npos);
  CHECK(html.find("cuda_&lt;b&gt;naive&lt;/b&gt;") != std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK((html.find("onerror=alert(2)") == std::string::npos || html.find("&quot;&gt;&lt;img") != std::string::npos));
  CHECK(html.find("signal 11 &lt;SIGSEGV&gt; &amp; &quot;core&quot;") != std::string::npos);
  CHECK(html.find("<i>bin 3</i>") == std::string::npos);
  // Exactly one script element: the page's own.
  CHECK(count(html, "<script") == 1);
  CHECK(count(html, "</script>") == 1);
}

TEST_CASE("html is one self-contained file", "[report][html]") {
  const auto f = test_fixture::make_report_fixture();
  const auto html = test_golden::render("html", f.input(), "report.html");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<meta charset=\"utf-8\">") != std::string::npos);
  // Nothing loaded from elsewhere: no src/href to other documents, no @import or url().
  CHECK(std::regex_search(html, std::regex(R"((src|href)\s*=\s*"(?!#))")) == false);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  // Printable, and readable without script: <details> and a print stylesheet.
  CHECK(html.find("@media print") != std::string::npos);
  CHECK(html.find("<details") != std::string::npos);
  CHECK(html.find("<div id=\"controls\" hidden>") != std::string::npos);
}

TEST_CASE("html has the charts and sections", "[report][html]") {
  const auto f = test_fixture::make_report_fixture();
  const auto html = test_golden::render("html", f.input(), "report.html");
  CHECK(html.find("aria-label=\"Time split per variant and size: vector_add\"") != std::string::npos);
  CHECK(html.find("aria-label=\"Speedup over serial versus n: vector_add\"") != std::string::npos);
  CHECK(html.find("aria-label=\"Roofline: achieved GFLOP/s versus arithmetic intensity\"") != std::string::npos);
  CHECK(html.find("aria-label=\"Timeline of one repetition of vector_add/cuda_naive/n=1048576\"") != std::string::npos);
  CHECK(count(html, "<svg") >= 5);
  CHECK(count(html, "<svg") == count(html, "</svg>"));
  // Crossover marks, one per crossover of the sweep, on the time chart and on the speedup chart.
  CHECK(html.find("aria-label=\"Median time versus n: vector_add\"") != std::string::npos);
  CHECK(count(html, "class=\"cross\"") == 6);
  // Overview first: before the findings, one stacked split bar per GPU row.
  CHECK(html.find("id=\"overview\"") < html.find("id=\"findings\""));
  CHECK(count(html, "class=\"splitbar\"") >= 1);
  // The timeline shows the copy and the kernel of the chosen repetition.
  CHECK(html.find("Memcpy HtoD (Pageable -&gt; Device)") != std::string::npos);
  CHECK(html.find("id=\"findings\"") != std::string::npos);
  CHECK(html.find("id=\"integrity\"") != std::string::npos);
  CHECK(html.find("deliberately wrong variant") != std::string::npos);
}

TEST_CASE("html and markdown work for CPU-only results", "[report][html][markdown]") {
  auto f = test_fixture::make_report_fixture();
  std::vector<point_result> cpu;
  for (const auto& p : f.points)
    if (p.kind != speedlab::variant_kind::cuda) {
      auto q = p;
      q.split_median.reset();
      q.splits.clear();
      q.trace_file.clear();
      cpu.push_back(q);
    }
  f.points = cpu;
  f.traces.clear();
  f.analysis = {};
  f.run.gpu_name.clear();
  const auto html = test_golden::render("html", f.input(), "report.html");
  CHECK(html.find("No GPU trace in this run") != std::string::npos);
  // A profiled program's points are processes: no repetition to draw, but a GPU trace in the
  // trace files, which the note names instead.
  auto in = f.input();
  in.content.processes.push_back({});
  const auto program_html = test_golden::render("html", in, "report.html");
  CHECK(program_html.find("No GPU trace in this run") == std::string::npos);
  CHECK(program_html.find("processes of a profiled program") != std::string::npos);
  CHECK(html.find("No GPU model: CPU-only results.") != std::string::npos);
  CHECK(html.find("No device time split") != std::string::npos);
  const auto md = test_golden::render("markdown", f.input(), "report-full.md");
  CHECK(md.find("No GPU model: CPU-only results.") != std::string::npos);
  CHECK(md.find("## Workload `vector_add`") != std::string::npos);
  CHECK(md.find("Where the time goes") == std::string::npos);
}

TEST_CASE("markdown keeps hostile names inert", "[report][markdown]") {
  const auto f = test_fixture::make_report_fixture(true);
  const auto md = test_golden::render("markdown", f.input(), "report-full.md");
  // Raw HTML in Markdown would render: it must only appear inside code spans or escaped.
  CHECK(md.find("`<script>alert(1)</script>`") != std::string::npos);
  CHECK(md.find("signal 11 &lt;SIGSEGV&gt; &amp; \"core\"") != std::string::npos);
  std::size_t raw = 0;
  for (auto pos = md.find("<script>"); pos != std::string::npos; pos = md.find("<script>", pos + 1))
    if (pos == 0 || md[pos - 1] != '`') ++raw;
  CHECK(raw == 0);
}

// Not run by default ("[.]"): writes every format for the fixture into
// $SPEEDLAB_REPORT_SAMPLE_DIR so the output can be looked at (and opened in a browser,
// ui.perfetto.dev or nsys stats). SPEEDLAB_REPORT_SAMPLE_HOSTILE=1 uses the hostile names.
TEST_CASE("write sample reports", "[.][sample]") {
  const char* dir = std::getenv("SPEEDLAB_REPORT_SAMPLE_DIR");
  if (!dir) {
    WARN("SKIPPED: set SPEEDLAB_REPORT_SAMPLE_DIR to a folder to write the sample reports into");
    return;
  }
  const char* hostile = std::getenv("SPEEDLAB_REPORT_SAMPLE_HOSTILE");
  const auto f = test_fixture::make_report_fixture(hostile && std::string(hostile) == "1");
  const std::filesystem::path out = dir;
  std::filesystem::create_directories(out / "traces");
  for (const auto& name : reports::reporter_names()) reports::make_reporter(name)->write(f.input(), out);
  // Also the files of a saved run, so `speedlab report DIR` can re-render it.
  std::ofstream(out / "run.json") << nlohmann::json(f.run).dump(2);
  std::ofstream(out / "device.json") << nlohmann::json(f.analysis.device).dump(2);
  std::ofstream jsonl(out / "results.jsonl");
  for (const auto& p : f.points) {
    jsonl << nlohmann::json(p).dump() << "\n";
    if (auto it = f.traces.find(p.id); it != f.traces.end() && !p.trace_file.empty())
      std::ofstream(out / p.trace_file) << nlohmann::json(it->second).dump();
  }
}

TEST_CASE("html states best C++ over best Python where the run has Python variants", "[report][html][python]") {
  auto f = test_fixture::make_report_fixture();
  const auto without = test_golden::render("html", f.input(), "report.html");
  CHECK(without.find("id=\"cpp-over-python\"") == std::string::npos); // no Python points, no section
  analysis::speedup s;
  s.workload = "vector_add";
  s.params_key = "n=1048576";
  s.variant = "cuda";
  s.baseline = "py-cupy";
  s.ratio = 3.25;
  s.ci_low = 3.2;
  s.ci_high = 3.3;
  s.verdict = speedlab::verdict::faster;
  f.analysis.cpp_over_python.push_back(s);
  const auto html = test_golden::render("html", f.input(), "report.html");
  CHECK(html.find("id=\"cpp-over-python\"") < html.find("id=\"findings\""));
  CHECK(html.find("href=\"#cpp-over-python\"") != std::string::npos);
  CHECK(html.find("py-cupy") != std::string::npos);
  CHECK(html.find("3.25x faster [3.20–3.30x faster]") != std::string::npos);
}
