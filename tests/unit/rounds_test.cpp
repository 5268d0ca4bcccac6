// Rounds (app/run/rounds.hpp): each round's share of the budget, how rounds add up in a point's
// record (samples tagged with their round, a failed round ending the point without losing
// the earlier ones), and the record's JSON with and without rounds.
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/compare/compare_command.hpp"
#include "app/run/rounds.hpp"
#include "app/run/run_steps.hpp"
#include "app/suite/suite_config.hpp"
#include "app/suite/suite_overrides.hpp"
#include "model/results.hpp"
#include "model/saved_records.hpp"
#include "model/statistics.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;
using namespace speedlab::app;

namespace {

point_result one_round(std::vector<double> samples, point_status status = point_status::ok) {
  point_result r;
  r.id = "vector/serial/n=1024";
  r.workload = "vector";
  r.variant = "serial";
  r.status = status;
  r.samples_ns = std::move(samples);
  r.wall = stats::summarize(r.samples_ns);
  r.first_validation = r.last_validation = {true, true, "", 0};
  r.warmup_runs = 1;
  r.duration_s = 0.1;
  r.phase_median_ns["setup"] = 1000;
  return r;
}

} // namespace

TEST_CASE("rounds: each round gets its share of the point's budget", "[rounds]") {
  measure_options m;
  m.min_samples = 5;
  m.max_samples = 200;
  m.min_time_s = 0.05;
  m.max_time_s = 0.2;
  m.warmup_runs = 1;
  const auto r = round_measure(m, 5);
  CHECK(r.min_samples == 2); // 5 / 5 = 1, but a round needs a median of its own
  CHECK(r.max_samples == 40);
  CHECK(r.min_time_s == Approx(0.01));
  CHECK(r.max_time_s == Approx(0.04));
  CHECK(r.warmup_runs == 1); // per process: every round warms up
  CHECK(round_measure(m, 1) == m);
  m.min_samples = 1;
  CHECK(round_measure(m, 5).min_samples == 1); // never more than the point asked for
}

TEST_CASE("rounds: samples keep their round; the summary uses all of them", "[rounds]") {
  point_result p;
  merge_round(p, one_round({10, 11, 12}), 0, 3);
  CHECK_FALSE(point_finished(p));
  auto second = one_round({20, 21});
  second.phase_median_ns["setup"] = 3000;
  merge_round(p, second, 1, 3);
  merge_round(p, one_round({30}), 2, 3);
  CHECK(point_finished(p));
  CHECK(p.rounds == 3);
  CHECK(p.rounds_planned == 3);
  CHECK(p.samples_ns == std::vector<double>{10, 11, 12, 20, 21, 30});
  CHECK(p.sample_rounds == std::vector<int>{0, 0, 0, 1, 1, 2});
  CHECK(p.wall.count == 6);
  CHECK(p.wall.median == Approx(16)); // (12 + 20) / 2
  CHECK(p.warmup_runs == 3);
  CHECK(p.duration_s == Approx(0.3));
  CHECK(p.phase_median_ns.at("setup") == Approx((1000 + 3000 + 1000) / 3.0));
  const auto groups = p.samples_by_round();
  REQUIRE(groups.size() == 3);
  CHECK(groups[1] == std::vector<double>{20, 21});
}

TEST_CASE("rounds: a failed round ends the point and keeps what the earlier rounds measured", "[rounds]") {
  point_result p;
  merge_round(p, one_round({10, 11}), 0, 5);
  auto crashed = one_round({});
  crashed.status = point_status::crashed;
  crashed.reason = "crashed during measure: SIGSEGV";
  merge_round(p, crashed, 1, 5);
  CHECK(point_finished(p));
  CHECK(p.status == point_status::crashed);
  CHECK(p.reason == "round 2 of 5: crashed during measure: SIGSEGV");
  CHECK(p.samples_ns == std::vector<double>{10, 11});
  CHECK(p.rounds == 2);
  // A point skipped in its first round needs no other round.
  point_result s;
  merge_round(s, one_round({}, point_status::skipped), 0, 5);
  CHECK(point_finished(s));
}

TEST_CASE("rounds: the record's JSON keeps rounds; results without rounds still load", "[rounds]") {
  point_result p;
  merge_round(p, one_round({10, 11}), 0, 4);
  merge_round(p, one_round({20}), 1, 4); // stopped after 2 of 4 rounds
  const nlohmann::json j = p;
  CHECK(j.at("sample_rounds") == std::vector<int>{0, 0, 1});
  CHECK(j.at("rounds") == 2);
  CHECK(j.at("rounds_planned") == 4);
  const auto back = j.get<point_result>();
  CHECK(back.sample_rounds == p.sample_rounds);
  CHECK(back.rounds == 2);
  CHECK(back.rounds_planned == 4);
  // One round (and results written before rounds): no round fields, one group of samples.
  point_result old;
  merge_round(old, one_round({10, 11, 12}), 0, 1);
  nlohmann::json o = old;
  CHECK_FALSE(o.contains("sample_rounds"));
  const auto loaded = o.get<point_result>();
  CHECK(loaded.rounds == 1);
  CHECK(loaded.samples_by_round().size() == 1);
  // A round list that does not match the samples is refused, not guessed.
  nlohmann::json bad = p;
  bad["sample_rounds"] = {0, 1};
  CHECK_THROWS_WITH(bad.get<point_result>(), Catch::Contains("sample_rounds has 2 entries for 3 samples_ns"));
  bad["sample_rounds"] = {0, 0, 7};
  CHECK_THROWS_WITH(bad.get<point_result>(), Catch::Contains("round 7 outside 0..3"));
}

TEST_CASE("rounds: the suite's rounds key and --rounds", "[rounds][config]") {
  CHECK(parse_suite("", "s.yaml").rounds == default_rounds);
  CHECK(parse_suite("rounds: 3\n", "s.yaml").rounds == 3);
  CHECK_THROWS_WITH(parse_suite("rounds: 0\n", "s.yaml"), Catch::Contains("s.yaml:1:9"));
  CHECK_THROWS_WITH(parse_suite("rounds: 1.5\n", "s.yaml"), Catch::Contains("rounds"));
  suite_config s = parse_suite("rounds: 3\n", "s.yaml");
  cli_overrides cli;
  cli.rounds = 7;
  apply_overrides(s, cli);
  CHECK(s.rounds == 7);
  cli.rounds = 0;
  CHECK_THROWS_WITH(apply_overrides(s, cli), Catch::Contains("--rounds"));
}

TEST_CASE("rounds: a command-line suite takes command_line_suite_rounds; the built-in suite whole keeps 1",
          "[rounds][config]") {
  run_options first_look;
  CHECK(prepare_run_suite(first_look).rounds == 1); // suites/default.yaml: the quick start's first look
  run_options selection;
  selection.overrides.workloads = {"vector"};
  CHECK(prepare_run_suite(selection).rounds == command_line_suite_rounds);
  CHECK(command_line_suite_rounds >= 2); // two such runs have a run-to-run spread to compare
  selection.overrides.rounds = 3;
  CHECK(prepare_run_suite(selection).rounds == 3);
}

TEST_CASE("rounds: a resumed point keeps its saved rounds unchanged and supersedes its partial line",
          "[rounds][resume]") {
  // Interrupted after round 1 of 3: the point was saved with what it had.
  point_result saved;
  merge_round(saved, one_round({100, 110}), 0, 3);
  REQUIRE(saved.rounds == 1);
  REQUIRE(saved.rounds_planned == 3);
  // `--resume` reads the line back and measures rounds 2 and 3 into it.
  nlohmann::json line = saved;
  const point_result read = read_point_record(line);
  point_result resumed = read;
  merge_round(resumed, one_round({120, 130}), 1, 3);
  merge_round(resumed, one_round({140}), 2, 3);
  CHECK(resumed.rounds == 3);
  CHECK(point_finished(resumed));
  CHECK(resumed.samples_ns == std::vector<double>{100, 110, 120, 130, 140}); // the saved samples first, unchanged
  CHECK(resumed.sample_rounds == std::vector<int>{0, 0, 1, 1, 2});
  CHECK(resumed.wall.count == 5);
  CHECK(extends_partial(read, resumed));
  CHECK(extends_partial(read, read_point_record(nlohmann::json(resumed)))); // as the reader sees both lines

  // Anything else with the same id is no continuation: a point measured again from scratch, a
  // line whose saved samples changed, a complete point repeated, another number of rounds.
  point_result again;
  merge_round(again, one_round({90, 95}), 0, 3);
  merge_round(again, one_round({96}), 1, 3);
  CHECK_FALSE(extends_partial(read, again));
  point_result changed = resumed;
  changed.samples_ns[0] = 101;
  CHECK_FALSE(extends_partial(read, changed));
  CHECK_FALSE(extends_partial(resumed, resumed));
  point_result other_plan = resumed;
  other_plan.rounds_planned = 5;
  CHECK_FALSE(extends_partial(read, other_plan));
  point_result failed_before = read;
  failed_before.status = point_status::failed;
  CHECK_FALSE(extends_partial(failed_before, resumed));
}
