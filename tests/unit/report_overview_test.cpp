// The overview shared by report.md and report.html (reports/common/overview.hpp): skipped
// variants fold into one row per workload that names them with their reasons; the full
// report folds them by workload and reason too, and results.json keeps every skipped point.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include "analysis/analyze.hpp"
#include "analysis/roofline.hpp"
#include "model/device_keys.hpp"
#include "reports/common/overview.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

namespace {

const std::string no_gpu = "no usable CUDA device: cudaErrorNoDevice (no CUDA-capable device is detected)";
const std::string no_numpy = "needs the Python package numpy, which python3 cannot import <script>x</script>";

// The fixture with three vector_add variants skipped at each of its sizes: two for want of a
// GPU, one for want of a Python package (its reason carries markup, to test escaping).
test_fixture::report_fixture with_skipped_variants() {
  auto f = test_fixture::make_report_fixture();
  for (const char* size : {"1024", "1048576", "16777216"})
    for (const auto& [variant, reason] :
         {std::pair{"cuda_tiled", no_gpu}, std::pair{"cuda_graph", no_gpu}, std::pair{"py-numpy", no_numpy}}) {
      point_result p = test_fixture::detail::make_point("vector_add", variant, "cuda", {{"n", size}}, 0);
      p.status = point_status::skipped;
      p.reason = reason;
      p.samples_ns.clear();
      p.wall = {};
      p.phase_median_ns.clear();
      f.points.push_back(p);
    }
  return f;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(what) != std::string::npos) out.push_back(line);
  return out;
}

// The Markdown overview section alone.
std::string overview_section(const std::string& md) {
  const auto from = md.find("## Overview");
  REQUIRE(from != std::string::npos);
  return md.substr(from, md.find("\n## ", from + 1) - from);
}

} // namespace

TEST_CASE("overview: a workload's skipped variants fold into one row, by reason", "[report][overview]") {
  const auto f = with_skipped_variants();
  const auto in = f.input();
  const auto workloads = reports::group_workloads(in.points);
  const reports::analysis_index index(in.analysis, in.points);
  const auto rows = reports::overview_rows(workloads, index, in.analysis);

  std::vector<const reports::overview_row*> folded;
  for (const auto& r : rows) {
    if (r.folded()) folded.push_back(&r);
    else CHECK(r.point->status != point_status::skipped);
  }
  REQUIRE(folded.size() == 1);
  const auto& r = *folded.front();
  CHECK(r.point->workload == "vector_add");
  CHECK(r.skipped_variant_count() == 3);
  CHECK(reports::skipped_label(r) == "3 variants skipped");
  REQUIRE(r.skipped.size() == 2);
  CHECK(r.skipped[0].reason == no_gpu);
  CHECK(r.skipped[0].variants == std::vector<std::string>{"cuda_tiled", "cuda_graph"});
  CHECK(r.skipped[1].reason == no_numpy);
  CHECK(r.skipped[1].variants == std::vector<std::string>{"py-numpy"});
  // The folded row comes after the workload's measured rows, before the next workload's.
  const auto at = static_cast<std::size_t>(&r - rows.data());
  REQUIRE(at > 0);
  CHECK(rows[at - 1].point->workload == "vector_add");
  REQUIRE(at + 1 < rows.size());
  CHECK(rows[at + 1].point->workload != "vector_add");
}

TEST_CASE("overview: report.md shows one line for a workload's skipped variants, names and reasons",
          "[report][overview][markdown]") {
  const auto f = with_skipped_variants();
  for (const char* file : {"report.md", "report-full.md"}) {
    INFO(file);
    const std::string md = test_golden::render("markdown", f.input(), file);
    const std::string overview = overview_section(md);
    const auto lines = lines_with(overview, "skipped");
    // The legend sentence and one table row.
    const auto rows = lines_with(overview, "variants skipped");
    REQUIRE(rows.size() == 1);
    CHECK(lines.size() == 2);
    const std::string& row = rows.front();
    CHECK(row.rfind("| `vector_add` | 3 variants skipped |", 0) == 0);
    CHECK_THAT(row, Catch::Contains("`cuda_tiled`, `cuda_graph` [1]; `py-numpy` [2]"));
    // Each reason once, under the table.
    CHECK_THAT(overview, Catch::Contains("Skipped because: [1] " + no_gpu + "\\\n[2] needs the Python package numpy, "
                                         "which python3 cannot import &lt;script&gt;x&lt;/script&gt;"));
    for (const char* v : {"cuda_tiled", "cuda_graph", "py-numpy"})
      CHECK(lines_with(overview, std::string("| `") + v + "` |").empty());
  }
  // Folded in the full report too (issue 28): "Failed and invalid points" has one row per
  // workload and reason, the workload's section one line per reason, no row per point.
  const std::string full = test_golden::render("markdown", f.input(), "report-full.md");
  const auto folded = lines_with(full, " points: `");
  REQUIRE(folded.size() == 2);
  CHECK_THAT(folded[0], Catch::Contains("| 6 points: `vector_add` (`cuda_tiled`, `cuda_graph`) | skipped | " + no_gpu));
  CHECK_THAT(folded[1], Catch::Contains("| 3 points: `vector_add` (`py-numpy`) | skipped |"));
  const std::string section = full.substr(full.find("## Workload `vector_add`"));
  CHECK_THAT(section, Catch::Contains("Skipped (6 points): `cuda_tiled`, `cuda_graph`: " + no_gpu));
  // Nothing lost: results.json keeps every skipped point with its reason.
  const std::string json = test_golden::render("json", f.input(), "results.json");
  for (const auto& p : f.points)
    if (p.status == point_status::skipped) {
      INFO(p.id);
      CHECK(lines_with(full, "`" + p.id + "`").empty());
      CHECK(json.find("\"" + p.id + "\"") != std::string::npos);
    }
}

TEST_CASE("overview: report.html folds skipped variants into one escaped row", "[report][overview][html]") {
  const auto f = with_skipped_variants();
  const std::string html = test_golden::render("html", f.input(), "report.html");
  const auto from = html.find("<section id=\"overview\">");
  REQUIRE(from != std::string::npos);
  const std::string overview = html.substr(from, html.find("</section>", from) - from);
  std::size_t rows = 0;
  for (auto at = overview.find("3 variants skipped"); at != std::string::npos;
       at = overview.find("3 variants skipped", at + 1))
    ++rows;
  CHECK(rows == 1);
  CHECK_THAT(overview, Catch::Contains("<code>cuda_tiled</code>, <code>cuda_graph</code> [1]"));
  CHECK_THAT(overview, Catch::Contains("Skipped because: [1] " + no_gpu + "<br>[2] "));
  CHECK_THAT(overview, Catch::Contains("&lt;script&gt;x&lt;/script&gt;"));
  CHECK_THAT(overview, !Catch::Contains("<script>x"));
  CHECK_THAT(overview, !Catch::Contains("<td><code>cuda_tiled</code></td>"));
  // The failed-points table: one muted row per workload and reason, not a pink row per point.
  const std::string failed = html.substr(html.find("<h3>Failed and invalid points</h3>"));
  CHECK_THAT(failed, Catch::Contains("6 points: <code>vector_add</code> (cuda_tiled, cuda_graph)"));
  CHECK_THAT(failed, !Catch::Contains("vector_add/cuda_tiled/"));
}

TEST_CASE("overview: a speedup without an interval says so instead of a collapsed one", "[report][overview]") {
  speedlab::analysis::speedup s;
  s.ratio = 196.2;
  s.ci_low = s.ci_high = 196.2;
  s.verdict = speedlab::verdict::unclear;
  s.method = "none"; // the baseline had one repetition
  CHECK(speedlab::reports::speedup_words(s) == "196x faster (no interval: under 3 repetitions)");
  s.method = "bootstrap";
  s.verdict = speedlab::verdict::faster;
  s.ci_low = 190.4;
  s.ci_high = 201.7;
  CHECK(speedlab::reports::speedup_words(s) == "196x faster [190–202x faster]");
}

TEST_CASE("overview: a CPU point past its memory roof says why", "[report][overview]") {
  speedlab::analysis::roofline_point r;
  r.processor = "cpu";
  r.bound = "memory";
  r.percent_of_bound = 182.3;
  r.above_roof = "cache";
  CHECK(speedlab::reports::roof_words(r) == "182.3% memory (above: cache)");
  CHECK(speedlab::reports::roof_percent(r) == "182.3% (above: cache)");
  r.percent_of_bound = 105.4;
  r.above_roof = "calibration";
  CHECK(speedlab::reports::roof_words(r) == "105.4% memory (above: roof low?)");
  r.percent_of_bound = 83.9;
  r.above_roof.clear();
  CHECK(speedlab::reports::roof_words(r) == "83.9% memory");
}

TEST_CASE("roofline: a CPU point past its memory roof is judged by its working set against the LLC", "[roofline]") {
  speedlab::device_model d;
  d.host[speedlab::keys::memory_bw_1thread] = speedlab::ceiling{10, "GB/s", true, "calibration"};
  d.properties[speedlab::keys::prop_llc_bytes] = std::to_string(32 << 20);
  speedlab::point_result p;
  p.id = "vector/serial/n=1";
  p.kind = speedlab::variant_kind::serial;
  p.threads = 1;
  p.work.bytes_read = 8 << 20; // 12 MiB in all: fits in a 32 MiB LLC
  p.work.bytes_written = 4 << 20;
  p.phase_median_ns["compute"] = 0.5e6; // 25 GB/s against a 10 GB/s roof
  auto placed = speedlab::analysis::roofline_for_point(p, nullptr, d);
  REQUIRE(placed.size() == 1);
  CHECK(placed[0].percent_of_bound > 100);
  CHECK(placed[0].above_roof == "cache");
  CHECK_THAT(placed[0].note, Catch::Contains("under twice the 32.0 MiB last-level cache"));
  p.work.bytes_read = 800 << 20; // 1.2 GiB: no cache holds it
  p.work.bytes_written = 400 << 20;
  p.phase_median_ns["compute"] = 50e6;
  placed = speedlab::analysis::roofline_for_point(p, nullptr, d);
  REQUIRE(placed.size() == 1);
  CHECK(placed[0].above_roof == "calibration");
  CHECK_THAT(placed[0].note, Catch::Contains("recalibrate"));
}

TEST_CASE("reports: the counters' bound beside the declared-work roofline, each named (md, html, json)",
          "[roofline][bound]") {
  // The xoshiro pi kernel on the H100 (tests/fixtures/counters/h100-full-set/slow-pi): ALU pipe
  // 81.2% of peak by the counters, a few % of the FP32 roof by its declared FLOPs.
  const auto dir = speedlab::testing::fixture_dir() / "counters" / "h100-full-set" / "slow-pi";
  std::vector<speedlab::point_result> points;
  std::ifstream in(dir / "results.jsonl");
  for (std::string line; std::getline(in, line);) points.push_back(nlohmann::json::parse(line).get<speedlab::point_result>());
  std::ifstream din(dir / "device.json");
  const auto device = nlohmann::json::parse(din).get<speedlab::device_model>();
  const auto a = speedlab::analysis::analyze(points, device, speedlab::analysis::trace_loader{}, {});
  const speedlab::analysis::roofline_point* row = nullptr;
  for (const auto& r : a.roofline)
    if (r.point_id == "montecarlo_pi/cuda-fast/M=2700000000" && r.kernel.empty()) row = &r;
  REQUIRE(row);
  const std::string words = speedlab::reports::roof_words(*row);
  CHECK_THAT(words, Catch::StartsWith("bound: ALU pipe 81.2% of peak (counters); declared work: "));
  CHECK_THAT(words, Catch::EndsWith("% of the FLOP roof"));

  speedlab::run_info run;
  const speedlab::reports::report_input input{run, points, a, {}};
  const auto md = test_golden::render("markdown", input, "report.md");
  CHECK_THAT(md, Catch::Contains("bound: ALU pipe 81.2% of peak (counters); declared work:"));
  const auto full = test_golden::render("markdown", input, "report-full.md");
  CHECK_THAT(full, Catch::Contains("| roofline bound | % of roof | bound: busiest unit |"));
  CHECK_THAT(full, Catch::Contains("compute (declared work)"));
  CHECK_THAT(full, Catch::Contains("ALU pipe 81.2% of peak (counters)"));
  const auto html = test_golden::render("html", input, "report.html");
  CHECK_THAT(html, Catch::Contains("bound: busiest unit"));
  CHECK_THAT(html, Catch::Contains("ALU pipe 81.2% of peak (counters)"));
  const auto json = nlohmann::json::parse(test_golden::render("json", input, "results.json"));
  bool found = false;
  for (const auto& r : json.at("analysis").at("roofline"))
    if (r.at("point_id") == "montecarlo_pi/cuda-fast/M=2700000000" && r.at("level") == "dram") {
      found = true;
      CHECK(r.at("counter_bound") == "ALU pipe");
      CHECK(r.at("counter_bound_kind") == "compute");
      CHECK(r.at("counter_bound_pct").get<double>() == Approx(81.2).margin(0.05));
      CHECK(r.at("units").size() >= 7);
      CHECK(r.at("units")[0].at("metric") == "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active");
      CHECK(r.at("kernel").get<std::string>().find("_Z") == std::string::npos); // demangled,
      CHECK(r.at("kernel_mangled").get<std::string>().rfind("_Z", 0) == 0);     // the mangled beside it
    }
  CHECK(found);
}
