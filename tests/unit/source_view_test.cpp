// The source view (model/source_view, analysis/source_lines, the reports' "Source lines"):
// PC records shaped like CUPTI's CUpti_PCSamplingPCData and a correlation table folded to
// lines, shares and stalls; the results round trip and its checks; the report section and
// the uncoalesced-access finding pointing at the line. The records are constructed here
// until the GPU stage (scripts/gpu-check.sh source) records real ones.
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "analysis/analyze.hpp"
#include "analysis/source_lines.hpp"
#include "model/saved_records.hpp"
#include "model/source_view.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

namespace {

// As cuptiPCSamplingGetStallReasons listed them on the H100 (SOURCE-LINES.md section 6): not
// sorted, counters and *_not_issued subsets among the stall reasons.
const std::map<std::uint32_t, std::string> h100_names{
    {0, "smsp__pcsamp_sample_count"},
    {1, "smsp__pcsamp_samples_data_dropped"},
    {7, "smsp__pcsamp_warps_issue_stalled_long_scoreboard"},
    {8, "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued"},
    {3, "smsp__pcsamp_warps_issue_stalled_barrier"},
    {12, "smsp__pcsamp_warps_issue_stalled_wait"},
    {20, "smsp__pcsamp_warps_issue_stalled_selected"},
    {15, "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle"},
};

constexpr std::uint64_t crc = 0x1234abcdULL;
const std::string naive = "_Z13softmax_naivePKfPfii";

// PC -> line of the one known cubin; PCs 0x200.. have no line (as without -lineinfo).
source::correlate_function table() {
  return [](std::uint64_t c, const std::string&, std::uint64_t pc) -> std::optional<source::line_location> {
    if (c != crc) return std::nullopt;
    if (pc >= 0x200) return source::line_location{};
    if (pc < 0x40) return source::line_location{"/src/softmax.cu", 22};
    return source::line_location{"/src/softmax.cu", 25};
  };
}

std::vector<source::pc_record> records() {
  return {
      // Line 22: two PCs; the not_issued subset and the sample counter must not count twice.
      {crc, 0x10, naive, {{7, 30}, {8, 25}, {0, 99}, {12, 10}}},
      {crc, 0x20, naive, {{7, 20}, {20, 5}}},
      // Line 25: more samples, waiting on memory and math.
      {crc, 0x50, naive, {{7, 80}, {15, 20}, {3, 0}}},
      // A cubin the pass never saw (its module loaded before the subscription).
      {0x999, 0x10, "other", {{12, 5}}},
  };
}

std::string no_text(const std::string&, std::uint32_t) { return {}; }

} // namespace

TEST_CASE("source fold: PC records to lines, shares of the kernel's samples, dominant stalls", "[source]") {
  const auto ks = source::fold(records(), h100_names, table(), {}, &no_text);
  REQUIRE(ks.size() == 2);
  const auto& k = ks[0];
  CHECK(k.kernel == naive);
  CHECK(k.samples == 165); // 40 + 25 + 100: sample_count and *_not_issued left out
  CHECK(k.line_info);
  REQUIRE(k.lines.size() == 2);
  CHECK(source::line_label(k.lines[0]) == "softmax.cu:25");
  CHECK(k.lines[0].samples == 100);
  CHECK(k.lines[0].share == Approx(100.0 / 165));
  REQUIRE(k.lines[0].stalls.size() == 2); // barrier had 0 samples
  CHECK(k.lines[0].stalls[0].reason == "long_scoreboard");
  CHECK(k.lines[0].stalls[0].share == Approx(0.8));
  CHECK(source::stall_words(k.lines[0].stalls[0].reason) == "waiting on global memory");
  CHECK(k.lines[0].stalls[1].reason == "math_pipe_throttle");
  CHECK(k.lines[1].line == 22);
  CHECK(k.lines[1].pc_offset == 0x10);
  CHECK(k.lines[1].stalls[0].samples == 50); // two PCs of one line summed
  CHECK_FALSE(k.lines[0].sectors_per_request);
  // The unknown cubin is its own place, not a line.
  CHECK(ks[1].kernel == "other");
  CHECK_FALSE(ks[1].line_info);
  CHECK(ks[1].lines[0].file == "(unknown cubin)");
}

TEST_CASE("source fold: without line info each SASS offset is its own place", "[source]") {
  const std::vector<source::pc_record> rs{{crc, 0x200, naive, {{7, 4}}}, {crc, 0x2a0, naive, {{12, 6}}}};
  const auto ks = source::fold(rs, h100_names, table(), {}, &no_text);
  REQUIRE(ks.size() == 1);
  CHECK_FALSE(ks[0].line_info);
  REQUIRE(ks[0].lines.size() == 2);
  CHECK(source::line_label(ks[0].lines[0]) == "+0x2a0");
  CHECK(ks[0].lines[0].line == 0);
}

TEST_CASE("source fold: SASS metrics give each line its sectors per request; top lines are capped", "[source]") {
  std::vector<source::sass_record> sass{
      {crc, 0x50, naive, {{"smsp__sass_inst_executed_op_global_ld", 100}, {"smsp__sass_sectors_mem_global", 3200}}},
      {crc, 0x54, naive, {{"smsp__sass_inst_executed_op_global_st", 100}, {"smsp__sass_sectors_mem_global", 3200}}},
      {crc, 0x10, naive, {{"smsp__sass_inst_executed_op_global_ld", 50}, {"smsp__sass_sectors_mem_global", 200}}},
      {crc, 0x30, naive, {{"smsp__sass_inst_executed", 7}}}, // no global access: no figure
  };
  source::fold_options o;
  o.top_lines = 1;
  const auto ks = source::fold(records(), h100_names, table(), sass, &no_text, o);
  REQUIRE(ks[0].lines.size() == 1);
  REQUIRE(ks[0].lines[0].sectors_per_request);
  CHECK(*ks[0].lines[0].sectors_per_request == Approx(32));
  CHECK(ks[0].lines[0].global_requests == 200);
}

TEST_CASE("source fold: sectors in records of their own, as CUPTI gives one record per (PC, metric)", "[source]") {
  // On the H100 a load's request count and its sectors arrived as two records of one PC.
  std::vector<source::sass_record> sass{
      {crc, 0x50, naive, {{"smsp__sass_inst_executed_op_global_ld", 100}}},
      {crc, 0x50, naive, {{"smsp__sass_sectors_mem_global", 3200}}},
      {crc, 0x10, naive, {{"smsp__sass_inst_executed_op_global_ld", 50}}},
      {crc, 0x10, naive, {{"smsp__sass_sectors_mem_global", 200}}},
  };
  const auto ks = source::fold(records(), h100_names, table(), sass, &no_text);
  REQUIRE(ks.size() == 2); // the naive kernel first (most samples), then the unknown cubin's
  REQUIRE(ks[0].kernel == naive);
  REQUIRE(ks[0].lines.size() == 2);
  REQUIRE(ks[0].lines[0].line == 25);
  REQUIRE(ks[0].lines[0].sectors_per_request);
  CHECK(*ks[0].lines[0].sectors_per_request == Approx(32));
  REQUIRE(ks[0].lines[1].sectors_per_request);
  CHECK(*ks[0].lines[1].sectors_per_request == Approx(4));
}

TEST_CASE("source: stall names, words and the line reader", "[source]") {
  CHECK(source::stall_short_name("smsp__pcsamp_warps_issue_stalled_barrier") == "barrier");
  CHECK(source::stall_short_name("smsp__pcsamp_warps_issue_stalled_barrier_not_issued").empty());
  CHECK(source::stall_short_name("smsp__pcsamp_sample_count").empty());
  CHECK(source::stall_words("barrier") == "barrier");
  CHECK(source::stall_words("some_new_reason") == "some_new_reason");
  const auto dir = std::filesystem::temp_directory_path() / "speedlab-source-test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "k.cu") << "first\n\tfloat x = a[i * n];  \n";
    std::ofstream(dir / "bin.cu", std::ios::binary) << std::string("ab\0cd\n", 6);
  }
  CHECK(source::read_source_line((dir / "k.cu").string(), 2) == "float x = a[i * n];  ");
  CHECK(source::read_source_line((dir / "k.cu").string(), 3).empty());
  CHECK(source::read_source_line((dir / "bin.cu").string(), 1).empty());
  CHECK(source::read_source_line((dir / "missing.cu").string(), 1).empty());
  std::filesystem::remove_all(dir);
}

namespace {

point_result with_source(point_result p, const std::string& kernel) {
  source::source_pass s;
  s.total_samples = 200;
  s.kernels = source::fold(records(), h100_names, table(), {}, [](const std::string&, std::uint32_t line) {
    return line == 25 ? std::string("yr[c] = __expf(xr[c] - max); // <script>|`") : std::string();
  });
  s.kernels[0].kernel = kernel;
  p.sections.set<source::source_pass>(s);
  return p;
}

} // namespace

TEST_CASE("source view: round trip through results.jsonl, old records load, bad shares refused", "[source][model]") {
  const auto f = test_fixture::make_report_fixture();
  const point_result p = with_source(f.points.front(), naive);
  const nlohmann::json j = p;
  CHECK(j["source"]["kernels"][0]["lines"][0]["stalls"][0]["words"] == "waiting on global memory");
  const point_result back = read_point_record(j);
  REQUIRE(back.sections.has<source::source_pass>());
  CHECK(nlohmann::json(back) == j);
  // A record written before the source view has none.
  nlohmann::json old = j;
  old.erase("source");
  CHECK_FALSE(read_point_record(old).sections.has<source::source_pass>());
  nlohmann::json bad = j;
  bad["source"]["kernels"][0]["lines"][0]["share"] = 1.5;
  CHECK_THROWS_WITH(read_point_record(bad), Catch::Contains("source.kernels[0].lines[0]: share 1.5 is above 1"));
  bad = j;
  bad["source"]["kernels"][0]["lines"][0]["samples"] = -3;
  CHECK_THROWS(read_point_record(bad));
}

TEST_CASE("source view: report.md and report.html show the top lines, escaped", "[source][report]") {
  auto f = test_fixture::make_report_fixture();
  f.points.front() = with_source(f.points.front(), naive);
  const auto md = test_golden::render("markdown", f.input(), "report.md");
  CHECK(md.find("## Source lines") != std::string::npos);
  CHECK(md.find("softmax.cu:25") != std::string::npos);
  CHECK(md.find("softmax_naive(float const*, float*, int, int)") != std::string::npos);
  CHECK(md.find("waiting on global memory 80.0%") != std::string::npos);
  // In a code span (literal text in GitHub Markdown), with the table's pipe escaped.
  CHECK(md.find("<script>|") == std::string::npos);
  CHECK(md.find("// <script>\\|") != std::string::npos);
  const auto html = test_golden::render("html", f.input(), "report.html");
  CHECK(html.find("id=\"source-lines\"") != std::string::npos);
  CHECK(html.find("&lt;script&gt;|`") != std::string::npos);
  CHECK(html.find("// <script>") == std::string::npos);
  // Without a source pass the section is absent.
  const auto plain = test_golden::render("markdown", test_fixture::make_report_fixture().input(), "report.md");
  CHECK(plain.find("## Source lines") == std::string::npos);
}

TEST_CASE("source view: uncoalesced-access names the line the loads wait at", "[source][analysis][counters]") {
  std::vector<point_result> ps;
  {
    std::ifstream in((speedlab::testing::fixture_dir() / "counters" / "results.jsonl").string());
    REQUIRE(in.good());
    for (std::string line; std::getline(in, line);) ps.push_back(nlohmann::json::parse(line).get<point_result>());
  }
  device_model d;
  {
    std::ifstream in((speedlab::testing::fixture_dir() / "counters" / "device.json").string());
    d = nlohmann::json::parse(in).get<device_model>();
  }
  const std::string id = "transpose/cuda-naive/size=4096";
  for (auto& p : ps)
    if (p.id == id) {
      REQUIRE(p.sections.has<counters::counter_pass>());
      REQUIRE_FALSE(p.sections.get<counters::counter_pass>()->kernels.empty());
      p = with_source(p, p.sections.get<counters::counter_pass>()->kernels.front().kernel);
    }
  const auto a = analysis::analyze(ps, d, analysis::trace_loader{}, analysis::analysis_options{});
  bool seen = false;
  for (const auto& f : a.findings) {
    if (f.rule != "uncoalesced-access" || f.point_id != id) continue;
    seen = true;
    CHECK(f.title.find(" at softmax.cu:25") != std::string::npos);
    bool evidence = false;
    for (const auto& e : f.evidence)
      if (e.name == "source line") {
        evidence = true;
        CHECK(e.value.find("waiting on global memory 80.0%") != std::string::npos);
      }
    CHECK(evidence);
  }
  CHECK(seen);
}

namespace {

// One raw dump of the source pass (SPEEDLAB_SOURCE_DUMP, profilers/source) read back as the
// folding's inputs: stall names by index, PC records, SASS records and the PC -> line table.
struct recorded_pass {
  std::map<std::uint32_t, std::string> names;
  std::vector<source::pc_record> records;
  std::vector<source::sass_record> sass;
  std::map<std::tuple<std::uint64_t, std::string, std::uint64_t>, source::line_location> lines;
};

recorded_pass read_dump(const std::filesystem::path& file) {
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in);
  recorded_pass p;
  for (const auto& [index, name] : j.at("stall_names").items()) p.names[static_cast<std::uint32_t>(std::stoul(index))] = name;
  using u64 = std::uint64_t;
  for (const auto& r : j.at("records"))
    p.records.push_back({r.at("cubin_crc").get<u64>(), r.at("pc_offset").get<u64>(), r.at("function").get<std::string>(),
                         r.at("stalls").get<std::vector<std::pair<std::uint32_t, u64>>>()});
  for (const auto& r : j.value("sass", nlohmann::json::array()))
    p.sass.push_back({r.at("cubin_crc").get<u64>(), r.at("pc_offset").get<u64>(), r.at("function").get<std::string>(),
                      r.at("metrics").get<std::map<std::string, u64>>()});
  for (const auto& l : j.at("lines"))
    if (l.contains("line"))
      p.lines[{l.at("cubin_crc").get<u64>(), l.at("function").get<std::string>(), l.at("pc_offset").get<u64>()}] = {
          l.at("file").get<std::string>(), l.at("line").get<std::uint32_t>()};
  return p;
}

} // namespace

// tests/fixtures/source/<case>/: results.jsonl and dump/source-*.json of the GPU stage
// (scripts/gpu-check.sh source, source.tar.gz). Folding the raw records again gives what the
// run stored: the same kernels, top lines, shares and stalls.
TEST_CASE("source view: recorded H100 records fold to what the run stored", "[source][fixture]") {
  const auto root = speedlab::testing::fixture_dir() / "source";
  if (!std::filesystem::exists(root)) {
    WARN("no recorded source fixture yet (tests/fixtures/source from scripts/gpu-check.sh source): skipped");
    return;
  }
  std::size_t compared = 0;
  for (const auto& c : std::filesystem::directory_iterator(root)) {
    if (!std::filesystem::exists(c.path() / "results.jsonl")) continue;
    std::vector<point_result> points;
    std::ifstream in(c.path() / "results.jsonl");
    for (std::string line; std::getline(in, line);) points.push_back(read_point_record(nlohmann::json::parse(line)));
    for (const auto& d : std::filesystem::directory_iterator(c.path() / "dump")) {
      const recorded_pass rec = read_dump(d.path());
      const auto correlate = [&rec](std::uint64_t module, const std::string& fn, std::uint64_t pc) -> std::optional<source::line_location> {
        auto it = rec.lines.find({module, fn, pc});
        return it == rec.lines.end() ? source::line_location{} : it->second;
      };
      const auto folded = source::fold(rec.records, rec.names, correlate, rec.sass, &no_text);
      if (folded.empty()) continue;
      for (const auto& p : points) {
        if (!p.sections.has<source::source_pass>() || p.sections.get<source::source_pass>()->kernels.empty() ||
            p.sections.get<source::source_pass>()->kernels[0].kernel != folded[0].kernel)
          continue;
        INFO(d.path().string() << " vs " << p.id);
        REQUIRE(p.sections.get<source::source_pass>()->kernels.size() == folded.size());
        for (std::size_t k = 0; k < folded.size(); ++k) {
          CHECK(p.sections.get<source::source_pass>()->kernels[k].samples == folded[k].samples);
          REQUIRE(p.sections.get<source::source_pass>()->kernels[k].lines.size() == folded[k].lines.size());
          for (std::size_t i = 0; i < folded[k].lines.size(); ++i) {
            CHECK(p.sections.get<source::source_pass>()->kernels[k].lines[i].line == folded[k].lines[i].line);
            CHECK(p.sections.get<source::source_pass>()->kernels[k].lines[i].share == Approx(folded[k].lines[i].share));
            CHECK(p.sections.get<source::source_pass>()->kernels[k].lines[i].sectors_per_request ==
                  folded[k].lines[i].sectors_per_request);
          }
        }
        ++compared;
      }
    }
  }
  CHECK(compared > 0);
}
