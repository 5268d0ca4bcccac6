#include "app/compare/interleave.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>

#include <fmt/format.h>

#include "analysis/compare.hpp"
#include "app/compare/compare_command.hpp"
#include "app/process/interrupt.hpp"
#include "app/python/python_variants.hpp"
#include "app/run/progress.hpp"
#include "app/run/run_side.hpp"
#include "device/host_info.hpp"

namespace speedlab::app {

namespace {

// One side of the measurement: a run of its own in every respect but the loop (run_side),
// with the Python variants its suite names.
struct side {
  run_side run;
  std::vector<std::string> plugin_paths;
  python_variants_added python;
  side(std::string name, suite_config suite, std::vector<std::string> paths)
      : run(std::move(name), std::move(suite)), plugin_paths(std::move(paths)) {}
};

// A point of the plan on each side (-1: absent on that side), measured round after round.
struct slot {
  std::array<int, 2> index{-1, -1};
  std::string id;
};

void check_plugin_paths(const std::vector<std::string>& paths, const char* option) {
  if (paths.empty()) throw config_error(fmt::format("{} is missing: name the plugin folder of each side", option));
  for (const auto& p : paths)
    if (!std::filesystem::exists(p)) throw config_error(fmt::format("{} {}: no such folder or plugin file", option, p));
}

std::string new_interleave_id(const std::string& started_at) {
  std::random_device rd;
  return fmt::format("{}-{}-{:08x}", started_at, static_cast<long>(::getpid()), rd());
}

// Loads one side's plugins and plans its points.
void prepare_side(side& s, const interleave_options& options) {
  notes() << fmt::format("speedlab: {} side: plugins from {}\n", s.run.name(), fmt::join(s.plugin_paths, ", "));
  s.run.load_plugins(s.plugin_paths);
  s.python = add_python_variants(s.run.registry(), python_settings_of(s.run.suite()));
  s.run.plan(options.run);
}

std::vector<slot> pair_points(const run_side& base, const run_side& next) {
  std::vector<slot> slots;
  std::map<std::string, int> new_index;
  for (std::size_t j = 0; j < next.points().size(); ++j) {
    new_index.emplace(next.point_id(static_cast<int>(j)), static_cast<int>(j));
  }
  for (std::size_t i = 0; i < base.points().size(); ++i) {
    slot s{{static_cast<int>(i), -1}, base.point_id(static_cast<int>(i))};
    if (auto it = new_index.find(s.id); it != new_index.end()) {
      s.index[1] = it->second;
      new_index.erase(it);
    }
    slots.push_back(s);
  }
  for (const auto& [id, j] : new_index) slots.push_back({{-1, j}, id}); // in NEW only
  return slots;
}

// Round `round` of point `i` of one side in a process of its own; false when a stop signal
// abandoned it.
bool measure_one(run_side& s, int i, int round, int rounds, int threads, progress_display& progress, std::size_t step) {
  if (!s.wants_round(i, round)) return true;
  progress.starting(step, fmt::format("{}: {} (round {}/{})", s.name(), s.point_id(i), round + 1, rounds));
  std::optional<point_result> r = s.measure_round(i, rounds, round, threads);
  if (!r) return false;
  progress.finished(step, *r);
  s.add_round(i, round, rounds, std::move(*r));
  return true;
}

// Round `round` of a slot, both sides: in one process, alternating repetition by repetition,
// when both want the round and both may be paired (run_side::pairable); otherwise (or when
// that process gave no result: a crash cannot be laid on either side) each side in a process
// of its own, `first` first. False when a stop signal abandoned it.
bool measure_slot(std::array<side, 2>& sides, const slot& sl, int round, int rounds, int threads, int first,
                  progress_display& progress, std::size_t step) {
  run_side &a = sides[0].run, &b = sides[1].run;
  const auto [ia, ib] = sl.index;
  if (a.wants_round(ia, round) && b.wants_round(ib, round) && a.pairable(ia, round) && b.pairable(ib, round)) {
    progress.starting(step, fmt::format("{} (round {}/{}, both sides)", sl.id, round + 1, rounds));
    pair_outcome out = measure_pair(a, ia, b, ib, rounds, round, threads, first);
    if (out.abandoned) return false;
    if (out.results) {
      for (int w = 0; w < 2; ++w) {
        progress.finished(step + w, (*out.results)[w]);
        sides[w].run.add_round(sl.index[w], round, rounds, std::move((*out.results)[w]));
      }
      return true;
    }
    for (auto& s : sides)
      s.run.note(fmt::format("{} round {}: the process measuring both sides ended without a result ({}); each side "
                             "was measured again in a process of its own",
                             sl.id, round + 1, out.failure));
  }
  for (int o = 0; o < 2; ++o) {
    const int which = o == 0 ? first : 1 - first;
    if (!measure_one(sides[which].run, sl.index[which], round, rounds, threads, progress, step + o)) return false;
  }
  return true;
}

// Rounds over the slots, both sides of a slot in one process, repetition by repetition
// (measure_slot), BASE first in even steps (round plus slot) and NEW first in odd ones: ABBA
// within a round, along the plan and across rounds. A stop signal ends it; the rounds measured
// so far are saved on both sides.
void measure_interleaved(std::array<side, 2>& sides, const std::vector<slot>& slots, int rounds, int threads) {
  progress_display progress(slots.size() * 2 * static_cast<std::size_t>(rounds), stderr_is_terminal());
  bool abandoned = false;
  for (int round = 0; round < rounds && !abandoned; ++round)
    for (std::size_t k = 0; k < slots.size() && !abandoned && !stop_signal(); ++k) {
      const int first = (static_cast<std::size_t>(round) + k) % 2 == 0 ? 0 : 1;
      const std::size_t step = (static_cast<std::size_t>(round) * slots.size() + k) * 2;
      abandoned = !measure_slot(sides, slots[k], round, rounds, threads, first, progress, step);
    }
  progress.done();
}

// Notes what the side shares with its partner, then writes its run.json, device model and
// reports: an ordinary run folder.
void finish_side(side& s, const std::string& partner, double wall_s, int stopped_by, int rounds) {
  run_info& info = s.run.info();
  info.interleave_side = s.run.name();
  info.interleave_partner = "../" + partner;
  s.run.note(fmt::format("interleaved with {} (interleave_id {}): round r of each point measured on both sides in "
                         "one process, repetition by repetition, in alternating order; `speedlab compare` pairs "
                         "their rounds",
                         info.interleave_partner, info.interleave_id));
  if (!s.python.interpreter.empty())
    s.run.note("interleaved: both sides run the same Python variant files with the same interpreter (" +
               s.python.interpreter + "); only the C++ plugins differ");
  for (const auto& n : s.python.notes) s.run.note(n);
  s.run.finish(wall_s, stopped_by, rounds);
}

// The suite both sides measure, after every check that needs nothing measured.
suite_config interleave_suite(const interleave_options& options) {
  if (options.compare.out_dir.empty())
    throw config_error("--out is missing: name the folder for OUT/base, OUT/new and the comparison");
  check_compare_options(options.compare); // before anything is measured
  if (options.run.overrides.devices)
    throw config_error("--devices is not offered with --base-plugins/--new-plugins; measure one GPU per command");
  check_plugin_paths(options.base_plugins, "--base-plugins");
  check_plugin_paths(options.new_plugins, "--new-plugins");
  suite_config suite = prepare_suite(options.run);
  if (!options.run.overrides.rounds) suite.rounds = std::max(suite.rounds, default_interleave_rounds);
  if (suite.rounds < 2)
    throw config_error(fmt::format("--rounds {}: the paired comparison needs at least 2 rounds", suite.rounds));
  return suite;
}

// One side's suite: the common one, written into OUT/<side>.
suite_config side_suite(suite_config suite, const interleave_options& options, const char* name) {
  suite.output = (std::filesystem::path(options.compare.out_dir) / name).string();
  return suite;
}

// Plans both sides, then opens both folders (both checked before either measures) and starts
// their records with one id; returns the threads of threads variants.
int open_sides(std::array<side, 2>& sides, const interleave_options& options) {
  for (auto& s : sides) prepare_side(s, options);
  for (auto& s : sides) s.run.open(options.run);
  const std::string started_at = device::iso_utc_now();
  const std::string id = new_interleave_id(started_at);
  const suite_config& suite = sides[0].run.suite();
  const int threads = suite.threads > 0 ? suite.threads : sides[0].run.info().cpu_cores;
  for (auto& s : sides) s.run.start(started_at, id, threads);
  return threads;
}

} // namespace

int command_compare_interleaved(const interleave_options& options) {
  const suite_config suite = interleave_suite(options);
  std::array<side, 2> sides{{{"base", side_suite(suite, options, "base"), options.base_plugins},
                             {"new", side_suite(suite, options, "new"), options.new_plugins}}};
  const int threads = open_sides(sides, options);
  const std::vector<slot> slots = pair_points(sides[0].run, sides[1].run);
  const int rounds = suite.rounds;
  notes() << fmt::format("speedlab: {} points, {} rounds each, BASE and NEW interleaved (output: {})\n", slots.size(),
                         rounds, options.compare.out_dir);
  if (!sides[0].python.interpreter.empty()) notes() << "speedlab: " << sides[0].python.interpreter << '\n';

  const auto started = std::chrono::steady_clock::now();
  const stop_on_signals stop_guard;
  measure_interleaved(sides, slots, rounds, threads);
  const int stopped_by = stop_signal();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  finish_side(sides[0], sides[1].run.name(), wall_s, stopped_by, rounds);
  finish_side(sides[1], sides[0].run.name(), wall_s, stopped_by, rounds);
  for (const auto& s : sides)
    for (const auto& n : s.run.info().notes) notes() << "speedlab: note: " << s.run.name() << ": " << n << '\n';

  analysis::compare_options o;
  o.threshold = options.compare.threshold_percent / 100;
  o.allow_missing = options.compare.allow_missing;
  const auto c = analysis::compare_runs(sides[0].run.info(), sides[0].run.results(), sides[1].run.info(),
                                        sides[1].run.results(), o);
  const int verdict = write_comparison(c, options.compare.formats, options.compare.out_dir);
  if (stopped_by) {
    std::cerr << fmt::format("speedlab: interrupted by SIG{}; the rounds measured are in {}/base and {}/new\n",
                             signal_name(stopped_by), options.compare.out_dir, options.compare.out_dir);
    return 128 + stopped_by;
  }
  return verdict;
}

} // namespace speedlab::app
