// One point, three outputs: the console summary (what `speedlab run` prints), report.md
// (`speedlab report --format md`) and `speedlab analyze` must word its speedup the same way
// (issue 26 item 5): "1.34x slower", never "0.75x slower" or "0.00x"; no exponent notation.
#include "speedlab_catch.hpp"

#include <cctype>
#include <fstream>

#include <nlohmann/json.hpp>

#include "analysis/analyze.hpp"
#include "app/run/terminal_summary.hpp"
#include "model/format.hpp"
#include "model/statistics.hpp"
#include "test_support.hpp"

using namespace speedlab;

namespace {

// A point with 30 samples around `median` (a fixed +-2% pattern: deterministic).
point_result timed(const std::string& variant, const std::string& kind, int threads, double median) {
  point_result p;
  p.workload = "vector";
  p.variant = variant;
  p.kind = parse_variant_kind(kind);
  p.threads = threads;
  p.params = {{"n", "65536"}};
  p.id = "vector/" + variant + "/n=65536";
  for (int i = 0; i < 30; ++i) p.samples_ns.push_back(median * (1 + 0.02 * ((i * 7) % 11 - 5) / 5.0));
  p.wall = stats::summarize(p.samples_ns);
  p.work.bytes_read = 8 * 65536.0;
  return p;
}

void save(const std::filesystem::path& dir, const std::vector<point_result>& points) {
  std::filesystem::create_directories(dir);
  run_info r;
  r.speedlab_version = "0.1.0";
  r.suite = "words.yaml";
  std::ofstream(dir / "run.json") << nlohmann::json(r).dump();
  std::ofstream out(dir / "results.jsonl");
  for (const auto& p : points) out << nlohmann::json(p).dump() << '\n';
}

bool has_exponent(const std::string& s) {
  for (std::size_t i = 1; i + 2 < s.size(); ++i)
    if (std::isdigit(static_cast<unsigned char>(s[i - 1])) && s[i] == 'e' && (s[i + 1] == '+' || s[i + 1] == '-') &&
        std::isdigit(static_cast<unsigned char>(s[i + 2])))
      return true;
  return false;
}

} // namespace

TEST_CASE("console, report.md and analyze word one point's speedup the same", "[format][golden][cli]") {
  // 2 threads take 1.34x the serial time: speedup 0.746.
  const std::vector<point_result> points = {timed("serial", "serial", 1, 1e6), timed("threads", "threads", 2, 1.34e6)};
  const std::string words = format::speed(1e6 / 1.34e6);
  REQUIRE(words == "1.34x slower");

  const auto result = analysis::analyze(points, analysis::device_model{}, {});
  const std::string console = app::terminal_summary(points, result);

  const speedlab::testing::temp_dir tmp;
  save(tmp.path() / "run", points);
  const auto bin = speedlab::testing::speedlab_binary().string();
  const auto analyzed = speedlab::testing::run_command("'" + bin + "' analyze '" + (tmp.path() / "run").string() + "'");
  REQUIRE(analyzed.exit_code == 0);
  const auto reported =
      speedlab::testing::run_command("'" + bin + "' report '" + (tmp.path() / "run").string() + "' --format md");
  REQUIRE(reported.exit_code == 0); // "md" is accepted as well as "markdown"
  const std::string md = speedlab::testing::read_text(tmp.path() / "run" / "report.md");
  const std::string full = speedlab::testing::read_text(tmp.path() / "run" / "report-full.md");
  REQUIRE_FALSE(md.empty());

  for (const auto* text : {&console, &analyzed.output, &md, &full}) {
    INFO(*text);
    CHECK(text->find(words) != std::string::npos);
    CHECK(text->find("0.75x") == std::string::npos);
    CHECK(text->find("0.746") == std::string::npos);
    CHECK(text->find("0.00x") == std::string::npos);
    CHECK_FALSE(has_exponent(*text));
  }
  // The finding says it in the same words, in analyze and in the report.
  const std::string title = "2 threads are " + words + " than serial";
  CHECK(analyzed.output.find(title) != std::string::npos);
  CHECK(full.find(title) != std::string::npos);
}

TEST_CASE("every report format is accepted under its short and long name", "[format][cli]") {
  const std::vector<point_result> points = {timed("serial", "serial", 1, 1e6)};
  const speedlab::testing::temp_dir tmp;
  save(tmp.path() / "run", points);
  save(tmp.path() / "run2", points);
  const auto bin = "'" + speedlab::testing::speedlab_binary().string() + "'";
  const auto dir = "'" + (tmp.path() / "run").string() + "'";
  for (const char* f : {"markdown", "md"}) {
    INFO(f);
    const auto r = speedlab::testing::run_command(bin + " report " + dir + " --format " + f);
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(tmp.path() / "run" / "report.md"));
  }
  for (const char* f : {"markdown", "md", "html", "json"}) {
    INFO(f);
    const auto out = tmp.path() / (std::string("cmp-") + f);
    const auto r = speedlab::testing::run_command(bin + " compare " + dir + " '" + (tmp.path() / "run2").string() +
                                                  "' --format " + f + " --out '" + out.string() + "'");
    CHECK(r.exit_code == 3); // one-round points: written, and nothing decided
    const std::string ext = std::string(f) == "markdown" ? "md" : f;
    CHECK(std::filesystem::exists(out / ("compare." + ext)));
  }
  const auto bad = speedlab::testing::run_command(bin + " report " + dir + " --format mdx");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("mdx") != std::string::npos);
}
