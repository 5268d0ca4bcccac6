// speedlab compare: matching, verdicts (from rounds; one-round sides unclear unless beyond the
// run-to-run allowance), ordering, warnings, lost points, and the command's exit codes (0 no
// regression shown, 1 regression, 2 bad input, 3 could not decide).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/analysis_stats.hpp"
#include "analysis/compare.hpp"
#include "analysis/round_compare.hpp"
#include "app/cli/commands.hpp"
#include "app/compare/compare_command.hpp"
#include "model/statistics.hpp"
#include "reports/compare/compare_report.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"
#include "tests/golden/golden.hpp"

using namespace speedlab;
using namespace speedlab::analysis;

namespace {

// A point with samples around `median` (a fixed +-2% pattern, so the test is deterministic),
// measured in `rounds` rounds (1: one process, no run-to-run spread).
point_result sampled(const std::string& variant, double median, double scale = 1.0, int rounds = 5) {
  point_result p;
  p.workload = "vector";
  p.variant = variant;
  p.params = {{"n", "1024"}};
  p.id = "vector/" + variant + "/n=1024";
  for (int i = 0; i < 30; ++i) {
    p.samples_ns.push_back(scale * median * (1 + 0.02 * ((i * 7) % 11 - 5) / 5.0));
    if (rounds > 1) p.sample_rounds.push_back(i % rounds);
  }
  p.rounds = p.rounds_planned = rounds;
  p.wall = speedlab::stats::summarize(p.samples_ns);
  return p;
}

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

point_result one_round(const std::string& variant, double median, double scale = 1.0) {
  return sampled(variant, median, scale, 1);
}

run_info run(const std::string& gpu = "H100") {
  run_info r;
  r.speedlab_version = "0.1.0";
  r.gpu_name = gpu;
  r.suite = "s.yaml";
  return r;
}

void save(const std::filesystem::path& dir, const run_info& r, const std::vector<point_result>& points) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run.json") << nlohmann::json(r).dump();
  std::ofstream out(dir / "results.jsonl");
  for (const auto& p : points) out << nlohmann::json(p).dump() << '\n';
}

} // namespace

TEST_CASE("one_round_verdict states a direction only beyond the run-to-run allowance", "[compare]") {
  CHECK(one_round_verdict(1.2, 1.15, 1.25, 0.05, 4.0) == speedlab::verdict::unclear); // clear inside one process, not between runs
  CHECK(one_round_verdict(1.0, 0.99, 1.01, 0.05, 4.0) == speedlab::verdict::unclear); // never "same" either
  CHECK(one_round_verdict(5.0, 4.5, 5.5, 0.05, 4.0) == speedlab::verdict::slower);
  CHECK(one_round_verdict(0.2, 0.18, 0.22, 0.05, 4.0) == speedlab::verdict::faster);
  CHECK(one_round_verdict(5.0, 0.9, 9.0, 0.05, 4.0) == speedlab::verdict::unclear); // beyond, but its own interval holds no change
  CHECK(one_round_verdict(1.0, 0, 0, 0.05, 4.0) == speedlab::verdict::unclear);
  CHECK(one_round_verdict(5.0, 4.5, 5.5, 0.05, std::nan("")) == speedlab::verdict::unclear);
  CHECK(one_round_allowance > 1);
}

TEST_CASE("a run against itself is the same everywhere", "[compare]") {
  const std::vector<point_result> points = {sampled("serial", 1e6), sampled("cuda", 1e5)};
  const auto c = compare_runs(run(), points, run(), points);
  REQUIRE(c.points.size() == 2);
  for (const auto& d : c.points) {
    CHECK(d.verdict == speedlab::verdict::same);
    CHECK(d.method == "rounds");
    CHECK(d.ratio == Approx(1.0));
    CHECK(d.ci_low <= 1.0);
    CHECK(d.ci_high >= 1.0);
  }
  CHECK_FALSE(c.has_regression());
  CHECK(c.decided());
  CHECK(c.warnings.empty());
}

TEST_CASE("one-round sides are unclear, say why and what to do; only a change beyond the allowance is stated",
          "[compare]") {
  // 20% slower, tight within the process: one process cannot tell that from the drift between runs.
  const auto c = compare_runs(run(), {one_round("serial", 1e6)}, run(), {one_round("serial", 1e6, 1.2)});
  REQUIRE(c.points.size() == 1);
  const auto& d = c.points[0];
  CHECK(d.method == "bootstrap");
  CHECK(d.significant); // inside one process it is
  CHECK(d.verdict == speedlab::verdict::unclear);
  CHECK_THAT(d.reason, Catch::Contains("1 round in BASE, 1 in NEW") && Catch::Contains("--rounds 5") &&
                           Catch::Contains("--base-plugins DIR --new-plugins DIR"));
  CHECK_FALSE(c.has_regression());
  CHECK_FALSE(c.decided());
  const auto md = reports::compare_markdown(c);
  CHECK_THAT(md, Catch::Contains("| unclear — 1 round in BASE") && Catch::Contains("Could not decide"));
  CHECK(reports::compare_json(c).at("points")[0].at("reason") == d.reason);
  // One side in rounds and the other not is no better.
  CHECK(compare_runs(run(), {one_round("serial", 1e6)}, run(), {sampled("serial", 1e6, 1.2)}).points[0].verdict == speedlab::verdict::unclear);
  // Beyond the allowance (and clear inside the process): stated, and the line names the allowance.
  const double beyond = 1.25 * one_round_allowance;
  const auto big = compare_runs(run(), {one_round("serial", 1e6)}, run(), {one_round("serial", 1e6, beyond)});
  CHECK(big.points[0].verdict == speedlab::verdict::slower);
  CHECK_THAT(big.points[0].reason, Catch::Contains(fmt::format("x{:g} run-to-run allowance", one_round_allowance)));
  CHECK(big.has_regression());
  const auto fast = compare_runs(run(), {one_round("serial", 1e6)}, run(), {one_round("serial", 1e6, 1 / beyond)});
  CHECK(fast.points[0].verdict == speedlab::verdict::faster);
}

TEST_CASE("a variant made 20% slower is slower, listed first, the rest same", "[compare]") {
  const std::vector<point_result> base = {sampled("serial", 1e6), sampled("cuda", 1e5), sampled("threads", 3e5)};
  const std::vector<point_result> next = {sampled("serial", 1e6), sampled("cuda", 1e5, 1.2), sampled("threads", 3e5),
                                          sampled("extra", 1e5)};
  auto base_more = base;
  base_more.push_back(sampled("gone", 1e5));
  const auto c = compare_runs(run(), base_more, run("A100"), next);
  REQUIRE(c.points.size() == 3);
  CHECK(c.points[0].variant == "cuda");
  CHECK(c.points[0].verdict == speedlab::verdict::slower);
  CHECK(c.points[0].ratio == Approx(1.2));
  CHECK(c.points[0].ci_low > 1.1);
  CHECK(c.points[1].verdict == speedlab::verdict::same);
  CHECK(c.points[2].verdict == speedlab::verdict::same);
  CHECK(c.has_regression());
  CHECK(c.only_base == std::vector<std::string>{"vector/gone/n=1024"});
  CHECK(c.only_new == std::vector<std::string>{"vector/extra/n=1024"});
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("different GPU") != std::string::npos);
  // Rendered: the warning at the top, regressions first.
  const auto md = reports::compare_markdown(c);
  CHECK(md.find("different GPU") < md.find("| slower |"));
  // "gone" was ok in BASE: missing in NEW, named as such.
  CHECK(md.find("**Ok in BASE, missing in NEW (a regression") != std::string::npos);
  CHECK(c.missing == std::vector<std::string>{"vector/gone/n=1024"});
  const auto html = reports::compare_html(c);
  CHECK(html.find("<tr class=\"v-slower\">") != std::string::npos);
  CHECK(reports::compare_json(c).at("regression") == true);
}

TEST_CASE("a point that broke is a regression; one wrong on purpose is not", "[compare]") {
  auto broken = sampled("cuda", 1e5);
  broken.status = point_status::crashed;
  const auto c = compare_runs(run(), {sampled("cuda", 1e5)}, run(), {broken});
  REQUIRE(c.points.size() == 1);
  CHECK(c.points[0].verdict == speedlab::verdict::broken);
  CHECK(c.has_regression());
  auto racy = sampled("cuda", 1e5);
  racy.status = point_status::invalid;
  racy.expected_invalid = true;
  const auto d = compare_runs(run(), {racy}, run(), {racy});
  CHECK(d.points[0].verdict == speedlab::verdict::not_measured);
  CHECK_FALSE(d.has_regression());
}

TEST_CASE("speedlab compare exits 0, 1, or 2 on bad input", "[compare][app]") {
  test_golden::temp_dir dir;
  save(dir.path / "base", run(), {sampled("serial", 1e6), sampled("cuda", 1e5)});
  save(dir.path / "same", run(), {sampled("serial", 1e6), sampled("cuda", 1e5)});
  save(dir.path / "slow", run(), {sampled("serial", 1e6), sampled("cuda", 1e5, 1.2)});
  app::compare_cli_options o;
  o.base_dir = (dir.path / "base").string();
  o.new_dir = (dir.path / "same").string();
  o.out_dir = (dir.path / "out").string();
  o.formats = {"md", "html", "json"};
  CHECK(app::command_compare(o) == 0);
  CHECK(std::filesystem::exists(dir.path / "out" / "compare.html"));
  o.new_dir = (dir.path / "slow").string();
  CHECK(app::command_compare(o) == 1);
  // A 25% threshold lets the 20% change pass.
  o.threshold_percent = 25;
  CHECK(app::command_compare(o) == 0);
  // Bad input: not a run folder. main() turns the exception into exit 2 with the message.
  o.new_dir = (dir.path / "nowhere").string();
  CHECK_THROWS_WITH(app::command_compare(o), Catch::Contains("nowhere"));
}

TEST_CASE("speedlab compare exits 3 when it could not decide: one-round sides, nothing compared", "[compare][app]") {
  test_golden::temp_dir dir;
  save(dir.path / "a", run(), {one_round("serial", 1e6), one_round("threads", 3e5)});
  save(dir.path / "b", run(), {one_round("serial", 1e6, 1.2), one_round("threads", 3e5)});
  save(dir.path / "empty", run(), {});
  app::compare_cli_options o;
  o.base_dir = (dir.path / "a").string();
  o.new_dir = (dir.path / "b").string();
  o.out_dir = (dir.path / "out").string();
  o.formats = {"json"};
  CHECK(app::command_compare(o) == app::exit_undecided);
  const auto j = nlohmann::json::parse(std::ifstream(dir.path / "out" / "compare.json"));
  CHECK(j.at("decided") == false);
  CHECK(j.at("regression") == false);
  // Nothing to compare is not a pass either.
  o.base_dir = o.new_dir = (dir.path / "empty").string();
  CHECK(app::command_compare(o) == app::exit_undecided);
  CHECK(app::exit_undecided == 3);
}

TEST_CASE("points ok in BASE and lost in NEW are a regression, named; --allow-missing lists them", "[compare][app]") {
  test_golden::temp_dir dir;
  auto failed_before = sampled("gone-failed", 1e5);
  failed_before.status = point_status::crashed;
  save(dir.path / "good", run(),
       {sampled("serial", 1e6), sampled("threads", 3e5), sampled("cuda", 1e5), failed_before});
  save(dir.path / "trunc", run(), {sampled("serial", 1e6)});
  save(dir.path / "empty", run(), {});
  const auto c = compare_runs(run(), {sampled("serial", 1e6), sampled("cuda", 1e5), failed_before}, run(),
                              {sampled("serial", 1e6)});
  CHECK(c.missing == std::vector<std::string>{"vector/cuda/n=1024"}); // the failed one lost nothing
  CHECK(c.only_base.size() == 2);
  CHECK(c.has_regression());
  const auto md = reports::compare_markdown(c);
  CHECK_THAT(md, Catch::Contains("**Ok in BASE, missing in NEW (a regression; --allow-missing lists them without "
                                 "failing)**: `vector/cuda/n=1024`") &&
                     Catch::Contains("**Only in BASE**: `vector/gone-failed/n=1024`"));
  CHECK(reports::compare_json(c).at("missing").size() == 1);

  app::compare_cli_options o;
  o.base_dir = (dir.path / "good").string();
  o.new_dir = (dir.path / "trunc").string();
  o.out_dir = (dir.path / "out").string();
  CHECK(app::command_compare(o) == 1);
  o.new_dir = (dir.path / "empty").string(); // NEW lost everything
  CHECK(app::command_compare(o) == 1);
  o.allow_missing = true; // listed, not failing: and nothing left to judge
  CHECK(app::command_compare(o) == app::exit_undecided);
  o.new_dir = (dir.path / "trunc").string();
  CHECK(app::command_compare(o) == 0);
  CHECK_THAT(read_all(dir.path / "out" / "compare.md"), Catch::Contains("missing in NEW (allowed by --allow-missing)"));
  // A point that failed in NEW stays a regression with --allow-missing.
  auto crashed = sampled("threads", 3e5);
  crashed.status = point_status::crashed;
  save(dir.path / "crashed", run(), {sampled("serial", 1e6), crashed, sampled("cuda", 1e5)});
  o.new_dir = (dir.path / "crashed").string();
  CHECK(app::command_compare(o) == 1);
}

TEST_CASE("compare refuses a threshold that is not a finite percentage, and several formats to stdout",
          "[compare][app]") {
  test_golden::temp_dir dir;
  save(dir.path / "a", run(), {sampled("serial", 1e6)});
  app::compare_cli_options o;
  o.base_dir = o.new_dir = (dir.path / "a").string();
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL, -1.0, 1001.0}) {
    o.threshold_percent = bad;
    INFO(bad);
    CHECK_THROWS_AS(app::command_compare(o), app::config_error);
    CHECK_THROWS_WITH(app::command_compare(o), Catch::Contains("--threshold") && Catch::Contains("finite"));
  }
  o.threshold_percent = 5;
  o.formats = {"md", "json"};
  CHECK_THROWS_WITH(app::command_compare(o), Catch::Contains("--out DIR") && Catch::Contains("md,json"));
  o.out_dir = (dir.path / "out").string();
  CHECK(app::command_compare(o) == 0);
  CHECK(std::filesystem::exists(dir.path / "out" / "compare.md"));
  CHECK(std::filesystem::exists(dir.path / "out" / "compare.json"));
}

// ---- Rounds: the interval from the spread between processes, held over the whole family ----

namespace {

// Normal draws from the suite's seeded generator (Box-Muller), so the tests are the same
// everywhere.
struct normal_draws {
  explicit normal_draws(std::uint64_t seed) : m_rng(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(m_rng.next() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(m_rng.next() >> 11) + 0.5) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  analysis::stats::rng m_rng;
};

// A point measured in `rounds` rounds of `per_round` samples: each round's level drawn with
// relative spread `between` around `median * scale` (what moves from one process to the
// next), each sample with relative spread `within` around its round's level.
point_result rounds_point(const std::string& variant, double median, int rounds, double between, double within,
                          normal_draws& draw, double scale = 1.0, int per_round = 10) {
  point_result p;
  p.workload = "vector";
  p.variant = variant;
  p.params = {{"n", "1024"}};
  p.id = "vector/" + variant + "/n=1024";
  p.rounds = p.rounds_planned = rounds;
  for (int r = 0; r < rounds; ++r) {
    const double level = median * scale * std::exp(between * draw());
    for (int i = 0; i < per_round; ++i) {
      p.samples_ns.push_back(level * std::exp(within * draw()));
      p.sample_rounds.push_back(r);
    }
  }
  p.wall = speedlab::stats::summarize(p.samples_ns);
  return p;
}

std::vector<point_result> family(int points, int rounds, double between, double within, normal_draws& draw,
                                 const std::string& slow_variant = "", double slow_scale = 1.0) {
  std::vector<point_result> out;
  for (int k = 0; k < points; ++k) {
    const std::string v = fmt::format("v{}", k);
    out.push_back(rounds_point(v, 1e6 * (k + 1), rounds, between, within, draw, v == slow_variant ? slow_scale : 1.0));
  }
  return out;
}

// The same points with their rounds forgotten: what one long process would have recorded.
std::vector<point_result> pooled(std::vector<point_result> points) {
  for (auto& p : points) {
    p.sample_rounds.clear();
    p.rounds = p.rounds_planned = 1;
  }
  return points;
}

} // namespace

TEST_CASE("round_ratio_interval: Welch's t on the log of the round medians", "[compare]") {
  CHECK(student_t_two_sided(0.95, 10) == Approx(2.228).epsilon(1e-3));
  CHECK(student_t_two_sided(0.99, 4) == Approx(4.604).epsilon(1e-3));
  // Same rounds on both sides: no change, not significant.
  const std::vector<double> b{100, 110, 90, 105}, n{100, 110, 90, 105};
  const auto same = round_ratio_interval(b, n, 0.95);
  REQUIRE(same.ok);
  CHECK(same.ratio == Approx(1.0));
  CHECK(same.ci_low < 1);
  CHECK(same.ci_high > 1);
  CHECK(same.p_value == Approx(1.0));
  CHECK(same.df == Approx(6.0));
  // Every round 20% slower: ratio 1.2 exactly, interval around it, significant.
  const std::vector<double> slow{120, 132, 108, 126};
  const auto r = round_ratio_interval(b, slow, 0.95);
  CHECK(r.ratio == Approx(1.2));
  CHECK(r.ci_low > 1);
  CHECK(r.p_value < 0.05);
  // A wider confidence (a larger family) gives a wider interval around the same ratio.
  const auto wide = round_ratio_interval(b, slow, 1 - 0.05 / 100);
  CHECK(wide.ci_low < r.ci_low);
  CHECK(wide.ci_high > r.ci_high);
  // Fewer than 2 rounds on a side: no interval from rounds.
  CHECK_FALSE(round_ratio_interval({100}, slow, 0.95).ok);
  CHECK_FALSE(round_ratio_interval(b, {100, 0}, 0.95).ok);
}

TEST_CASE("rounds_verdict: beyond the threshold and significant", "[compare]") {
  CHECK(rounds_verdict(1.10, 1.02, 1.18, 0.05) == speedlab::verdict::slower); // beyond 5%, interval excludes 1
  CHECK(rounds_verdict(1.10, 0.98, 1.22, 0.05) == speedlab::verdict::unclear); // beyond, not significant
  CHECK(rounds_verdict(1.03, 1.01, 1.05, 0.05) == speedlab::verdict::same);    // significant but too small to matter
  CHECK(rounds_verdict(0.90, 0.85, 0.95, 0.05) == speedlab::verdict::faster);
  CHECK(rounds_verdict(1.0, 0, 0, 0.05) == speedlab::verdict::unclear);
}

TEST_CASE("rounds: drift between processes does not alarm; a 10% change with tight rounds does", "[compare]") {
  // 200 comparisons of 8 points, 5 rounds a side: 5% drift between rounds, 2% noise within.
  normal_draws draw(42);
  int alarms = 0, pooled_alarms = 0, pooled_would_alarm = 0;
  for (int i = 0; i < 200; ++i) {
    const auto a = family(8, 5, 0.05, 0.02, draw), b = family(8, 5, 0.05, 0.02, draw);
    const auto c = compare_runs(run(), a, run(), b);
    REQUIRE(c.family == 8);
    CHECK(c.points[0].method == "rounds");
    CHECK(c.points[0].confidence == Approx(1 - 2 * 0.05 / 8));
    alarms += c.has_regression();
    // The same samples without their rounds: the interval sees only the noise within, so
    // it would alarm far more; compare calls such points unclear instead.
    const auto p = compare_runs(run(), pooled(a), run(), pooled(b));
    pooled_alarms += p.has_regression();
    bool would = false;
    for (const auto& d : p.points) would = would || (d.significant && d.ratio > 1.05);
    pooled_would_alarm += would;
  }
  // At most alpha = 5% of comparisons alarm (10 of 200: "slower" is the alarm).
  CHECK(alarms <= 10);
  CHECK(pooled_would_alarm > 3 * std::max(alarms, 5));
  CHECK(pooled_alarms == 0);
  // One variant 10% slower, 1% drift between rounds: found every time, and only it.
  int found = 0, others = 0;
  for (int i = 0; i < 100; ++i) {
    const auto a = family(8, 5, 0.01, 0.02, draw), b = family(8, 5, 0.01, 0.02, draw, "v3", 1.10);
    const auto c = compare_runs(run(), a, run(), b);
    for (const auto& d : c.points) {
      if (d.verdict != speedlab::verdict::slower) continue;
      if (d.variant == "v3") ++found;
      else ++others;
    }
  }
  CHECK(found >= 95);
  CHECK(others <= 5);
}

TEST_CASE("rounds: too few rounds fall back to one process's interval and say so", "[compare]") {
  normal_draws draw(7);
  const auto a = family(2, 5, 0.02, 0.02, draw), b = family(2, 5, 0.02, 0.02, draw);
  auto old_base = pooled(a);
  const auto c = compare_runs(run(), old_base, run(), b);
  CHECK(c.family == 0);
  for (const auto& d : c.points) {
    CHECK(d.method == "bootstrap");
    CHECK(d.base_rounds == 1);
    CHECK(d.new_rounds == 5);
  }
  REQUIRE(c.method_notes.size() == 1);
  CHECK(c.method_notes[0].find("fewer than 2 rounds") != std::string::npos);
  const auto md = reports::compare_markdown(c);
  CHECK(md.find("fewer than 2 rounds") != std::string::npos);
  // A side stopped between rounds: used as it is, its rounds shown as "2 of 5".
  auto stopped = a;
  for (auto& p : stopped) {
    std::vector<double> kept;
    std::vector<int> kept_rounds;
    for (std::size_t i = 0; i < p.samples_ns.size(); ++i)
      if (p.sample_rounds[i] < 2) {
        kept.push_back(p.samples_ns[i]);
        kept_rounds.push_back(p.sample_rounds[i]);
      }
    p.samples_ns = kept;
    p.sample_rounds = kept_rounds;
    p.rounds = 2;
    p.wall = speedlab::stats::summarize(p.samples_ns);
  }
  const auto s = compare_runs(run(), stopped, run(), b);
  CHECK(s.family == 2);
  CHECK(s.points[0].base_rounds == 2);
  CHECK(reports::compare_markdown(s).find("2 of 5 / 5") != std::string::npos);
  const auto j = reports::compare_json(s);
  CHECK(j.at("points")[0].at("method") == "rounds");
  CHECK(j.at("points")[0].at("base_rounds_planned") == 5);
  CHECK(j.at("family") == 2);
}

TEST_CASE("speedlab compare on the command line: NaN, infinite threshold and several formats to stdout exit 2",
          "[compare][cli]") {
  test_golden::temp_dir dir;
  save(dir.path / "a", run(), {sampled("serial", 1e6)});
  const std::string cmd = "'" + speedlab::testing::speedlab_binary().string() + "' compare '" +
                          (dir.path / "a").string() + "' '" + (dir.path / "a").string() + "'";
  for (const char* bad : {"nan", "inf", "-inf", "NaN", "1e400"}) {
    INFO(bad);
    const auto r = speedlab::testing::run_command(cmd + " --threshold " + bad);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("--threshold"));
  }
  auto r = speedlab::testing::run_command(cmd + " -f md,json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("standard output takes one format") && Catch::Contains("--out DIR"));
  r = speedlab::testing::run_command(cmd + " -f json");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("\"decided\": true"));
  r = speedlab::testing::run_command(cmd + " --threshold 10 --allow-missing");
  CHECK(r.exit_code == 0);
}

TEST_CASE("a change toward the side measured on a busier machine is unclear, and says so", "[compare]") {
  run_info b = run(), n = run();
  b.cpu_cores = n.cpu_cores = 2;
  auto base = std::vector<point_result>{sampled("serial", 1e6), sampled("threads", 3e5)};
  auto next = std::vector<point_result>{sampled("serial", 1e6, 1.3), sampled("threads", 3e5, 1.3)};
  for (auto* side : {&base, &next})
    for (auto& p : *side) p.other_busy_span_s = 1.0;
  base[0].other_busy_cores = 0.1, next[0].other_busy_cores = 1.2; // NEW's machine was busier
  base[1].other_busy_cores = 0.1, next[1].other_busy_cores = 0.3; // about as busy: the change stands
  const auto c = compare_runs(b, base, n, next);
  REQUIRE(c.points.size() == 2);
  const auto& serial = c.points[0].variant == "serial" ? c.points[0] : c.points[1];
  const auto& threads = c.points[0].variant == "serial" ? c.points[1] : c.points[0];
  CHECK(serial.verdict == verdict::unclear);
  CHECK(serial.reason.find("1.20 of 2 cores busy while NEW was measured and 0.10 while BASE") != std::string::npos);
  CHECK(threads.verdict == verdict::slower);
  CHECK(c.has_regression());
  CHECK(reports::compare_json(c).at("points")[0].contains("new_other_busy_cores"));
  // Faster on the busier side is stated: the load cannot explain a gain.
  auto faster = next;
  faster[0] = sampled("serial", 1e6, 0.7);
  faster[0].other_busy_cores = 1.2, faster[0].other_busy_span_s = 1.0;
  const auto f = compare_runs(b, base, n, faster);
  CHECK(std::any_of(f.points.begin(), f.points.end(),
                    [](const point_delta& d) { return d.variant == "serial" && d.verdict == verdict::faster; }));
  // Rounds too short to read the load on: the change stands.
  auto short_rounds = next;
  short_rounds[0].other_busy_span_s = 0.05;
  const auto sr = compare_runs(b, base, n, short_rounds);
  CHECK(std::all_of(sr.points.begin(), sr.points.end(), [](const point_delta& d) { return d.verdict == verdict::slower; }));
  // An interleaved comparison pairs its rounds: the load cancels there, nothing is discounted.
  run_info pb = b, pn = n;
  pb.interleave_id = pn.interleave_id = "i1";
  pb.interleave_side = "base", pn.interleave_side = "new";
  const auto p = compare_runs(pb, base, pn, next);
  CHECK(std::all_of(p.points.begin(), p.points.end(), [](const point_delta& d) { return d.verdict == verdict::slower; }));
}
