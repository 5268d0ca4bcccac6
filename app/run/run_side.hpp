// A run measured round by round by a caller that owns the loop: `speedlab compare
// --base-plugins A --new-plugins B` (app/compare/interleave.cpp) keeps one per side and may
// measure the same point of both in one process (measure_pair). In every other respect each is
// an ordinary run, through the steps of `speedlab run` (its plan, output folder, records,
// run.json, device model and reports), so its folder is a run folder like any other.
//
// app/compare/ measures through this header alone (it reads saved runs through
// output_folder.hpp's readers and shows progress through progress.hpp).
//
// Usage (one side, its own loop):
//
//   run_side side("base", suite);            // suite.output is its folder
//   side.load_plugins(paths);                // then add variants to side.registry(), if any
//   side.plan(options);
//   side.open(options);                      // the folder, under its lock
//   side.start(started_at, interleave_id, threads);
//   for (int round = 0; round < rounds; ++round)
//     for (int i = 0; i < int(side.points().size()); ++i)
//       if (side.wants_round(i, round))
//         if (auto r = side.measure_round(i, rounds, round, threads)) side.add_round(i, round, rounds, std::move(*r));
//   side.finish(wall_s, stopped_by);
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/plugins/plugin_loader.hpp"
#include "app/run/run_options.hpp"
#include "app/suite/suite_config.hpp"
#include "model/results.hpp"

namespace speedlab::app {

class output_folder;

// Both sides' round of one point measured in one process (measure_pair): the two results, or
// why none came (a stop signal: `abandoned`; otherwise `failure`).
struct pair_outcome {
  bool abandoned = false;
  std::optional<std::array<point_result, 2>> results;
  std::string failure;
};

class run_side {
public:
  run_side(std::string name, suite_config suite);
  ~run_side();
  run_side(const run_side&) = delete;
  run_side& operator=(const run_side&) = delete;

  const std::string& name() const { return m_name; }
  const suite_config& suite() const { return m_suite; }
  plugin_registry& registry() { return m_registry; }
  run_info& info() { return m_info; }
  const run_info& info() const { return m_info; }
  const std::vector<planned_point>& points() const { return m_points; }
  const std::vector<point_result>& results() const { return m_results; }
  // Point i's id: workload/variant/parameters.
  std::string point_id(int i) const;
  // Things the side's run.json notes say (a set: each once).
  void note(std::string text) { m_notes.insert(std::move(text)); }

  void load_plugins(const std::vector<std::string>& paths);
  // The suite's points over the loaded plugins, the command line's selection applied.
  void plan(const run_options& options);
  // The output folder, under its lock (an earlier run refused unless --force or --resume).
  void open(const run_options& options);
  // The run's record: when it started, the id both sides share, the threads of threads variants.
  void start(const std::string& started_at, const std::string& interleave_id, int threads);

  // Whether point i (-1: absent on this side) still wants round `round`: the first, or its
  // earlier rounds all ended ok.
  bool wants_round(int i, int round) const;
  // Whether round `round` of point i may be measured in one process with another side's
  // (measure_pair): no device parameter, and no backend reading kernels in passes of its own
  // this round (counters, source: two sides in one process would share them).
  bool pairable(int i, int round) const;
  // Round `round` of point i in a process of its own; nullopt when a stop signal abandoned it.
  std::optional<point_result> measure_round(int i, int rounds, int round, int threads);
  // A measured round into point i; the point is saved (results.jsonl) when its last round ends.
  void add_round(int i, int round, int rounds, point_result r);
  // Saves the points cut short between rounds, then run.json, the device model and the
  // reports (their files printed on stdout).
  void finish(double wall_s, int stopped_by, int rounds);

private:
  void keep(point_result& r);

  std::string m_name;
  suite_config m_suite;
  plugin_registry m_registry;
  std::vector<planned_point> m_points;
  std::unique_ptr<output_folder> m_folder;
  run_info m_info;
  std::set<std::string> m_notes;
  std::vector<std::optional<point_result>> m_partial; // per point, its rounds so far
  std::vector<point_result> m_results;                // points saved, in the order they ended

  friend pair_outcome measure_pair(run_side&, int, run_side&, int, int, int, int, int);
};

// Round `round` of point ia of side a and point ib of side b (both pairable) in one process,
// repetition by repetition (`first`, 0 or 1, starts: app/run/runner.hpp, measure_point_pair),
// in a child when a's suite isolates, else here. The results are finished as measure_round's;
// the caller adds them (add_round) or, on a failure, measures each side apart.
pair_outcome measure_pair(run_side& a, int ia, run_side& b, int ib, int rounds, int round, int threads, int first);

} // namespace speedlab::app
