#include "app/compare/interleave.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>

#include <fmt/format.h>

#include "analysis/compare.hpp"
#include "app/process/interrupt.hpp"
#include "app/run/device_step.hpp"
#include "app/run/isolation.hpp"
#include "app/run/progress.hpp"
#include "app/run/rounds.hpp"
#include "app/run/run_steps.hpp"
#include "app/run/runner.hpp"
#include "device/host_info.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::app {

namespace {

// One side of the measurement: a run of its own in every respect but the loop.
struct side {
  std::string name; // "base" or "new"
  std::vector<std::string> plugin_paths;
  suite_config suite;
  plugin_registry registry;
  python_variants_added python;
  std::vector<planned_point> points;
  std::unique_ptr<output_folder> folder;
  run_info info;
  std::set<std::string> notes;
  std::vector<std::optional<point_result>> partial; // per point, its rounds so far
  std::vector<point_result> results;                // points saved, in the order they ended
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

// Loads one side's plugins and plans its points; the suite's output becomes OUT/<side>.
void prepare_side(side& s, const interleave_options& options, const suite_config& suite) {
  s.suite = suite;
  s.suite.output = (std::filesystem::path(options.compare.out_dir) / s.name).string();
  notes() << fmt::format("speedlab: {} side: plugins from {}\n", s.name, fmt::join(s.plugin_paths, ", "));
  load_plugins(s.registry, s.plugin_paths);
  s.python = add_python_variants(s.registry, python_settings_of(s.suite));
  s.points = plan_run(s.suite, options.run, s.registry);
  s.partial.resize(s.points.size());
}

std::vector<slot> pair_points(const side& base, const side& next) {
  std::vector<slot> slots;
  std::map<std::string, int> new_index;
  for (std::size_t j = 0; j < next.points.size(); ++j) {
    const auto& p = next.points[j];
    new_index.emplace(point_id(p.workload, p.variant, p.params), static_cast<int>(j));
  }
  for (std::size_t i = 0; i < base.points.size(); ++i) {
    const auto& p = base.points[i];
    slot s{{static_cast<int>(i), -1}, point_id(p.workload, p.variant, p.params)};
    if (auto it = new_index.find(s.id); it != new_index.end()) {
      s.index[1] = it->second;
      new_index.erase(it);
    }
    slots.push_back(s);
  }
  for (const auto& [id, j] : new_index) slots.push_back({{-1, j}, id}); // in NEW only
  return slots;
}

void keep(side& s, point_result& r) {
  s.folder->append(r);
  for (const auto& m : r.profiler_messages) s.notes.insert(m);
  s.results.push_back(std::move(r));
}

// Whether point i of a side still wants round `round` (its earlier rounds ended ok).
bool wants_round(const side& s, int i, int round) {
  return i >= 0 && (round == 0 || (s.partial[i] && !point_finished(*s.partial[i])));
}

void add_round(side& s, int i, int round, int rounds, point_result r) {
  if (!s.partial[i]) s.partial[i].emplace();
  merge_round(*s.partial[i], std::move(r), round, rounds);
  if (point_finished(*s.partial[i])) {
    keep(s, *s.partial[i]);
    s.partial[i].reset();
  }
}

// Round `round` of point `i` of one side in a process of its own; false when a stop signal
// abandoned it.
bool measure_one(side& s, int i, int round, int rounds, int threads, progress_display& progress, std::size_t step) {
  if (!wants_round(s, i, round)) return true;
  const auto& pp = s.points[i];
  progress.starting(step, fmt::format("{}: {} (round {}/{})", s.name, point_id(pp.workload, pp.variant, pp.params),
                                      round + 1, rounds));
  std::optional<point_result> r = measure_round(pp, rounds, round, s.suite, s.registry, *s.folder, threads);
  if (!r) return false;
  progress.finished(step, *r);
  add_round(s, i, round, rounds, std::move(*r));
  return true;
}

// Both sides of a slot in one round of one process (measure_point_pair): only where both still
// want the round and no backend of the round reads kernels in a pass of its own (counters and
// source, first round only), which two sides in one process would share.
bool can_pair(const std::array<side, 2>& sides, const slot& sl, int round, const std::array<round_plan, 2>& plans) {
  if (!wants_round(sides[0], sl.index[0], round) || !wants_round(sides[1], sl.index[1], round)) return false;
  for (const auto& p : plans) {
    if (p.device) return false;
    for (const auto& name : p.request.profilers)
      if (const auto* b = profiling::find_backend(name); b && b->first_round_only) return false;
  }
  return true;
}

// Round `round` of a slot, both sides: in one process, alternating repetition by repetition,
// when can_pair says so; otherwise (or when that process gave no result: a crash cannot be
// laid on either side) each side in a process of its own, `first` first. False when a stop
// signal abandoned it.
bool measure_slot(std::array<side, 2>& sides, const slot& sl, int round, int rounds, int threads, int first,
                  progress_display& progress, std::size_t step) {
  const auto plan = [&](int w) {
    return plan_round(sides[w].points[sl.index[w]], rounds, round, sides[w].suite, sides[w].registry, *sides[w].folder,
                      threads);
  };
  std::optional<std::array<round_plan, 2>> plans;
  if (sl.index[0] >= 0 && sl.index[1] >= 0) plans = std::array<round_plan, 2>{plan(0), plan(1)};
  if (plans && can_pair(sides, sl, round, *plans)) {
    // The round's median is the paired test's unit: a short point gets the point's whole sample
    // cap in each round (its time budget stays 1/R, as in `run`), so that its median is not the
    // noise of 1/R of the samples. (Stopping every round at its share of min_time, or converging
    // at sqrt(R) x target_noise, saved time but cost power: docs/reports.md, "The gate,
    // interleaved".)
    for (int w = 0; w < 2; ++w) {
      auto& m = (*plans)[w].request.point.measure;
      m.max_samples = std::max(m.max_samples, sides[w].points[sl.index[w]].measure.max_samples);
    }
    progress.starting(step, fmt::format("{} (round {}/{}, both sides)", sl.id, round + 1, rounds));
    paired_outcome out;
    if (sides[0].suite.isolate)
      out = run_pair_isolated((*plans)[0].request, (*plans)[1].request, first, sides[0].suite.timeout_s);
    else
      try { // in speedlab's own process (isolate: false): what escapes the sides is the pair's failure
        out.results = measure_point_pair((*plans)[0].request, (*plans)[1].request, first);
      } catch (const std::exception& e) {
        out.failure = e.what();
      }
    if (out.abandoned) return false;
    if (out.results) {
      for (int w = 0; w < 2; ++w) {
        point_result& r = (*out.results)[w];
        finish_round(r, (*plans)[w], sides[w].suite);
        progress.finished(step + w, r);
        add_round(sides[w], sl.index[w], round, rounds, std::move(r));
      }
      return true;
    }
    for (auto& s : sides)
      s.notes.insert(fmt::format("{} round {}: the process measuring both sides ended without a result ({}); each "
                                 "side was measured again in a process of its own",
                                 sl.id, round + 1, out.failure));
  }
  for (int o = 0; o < 2; ++o) {
    const int which = o == 0 ? first : 1 - first;
    if (!measure_one(sides[which], sl.index[which], round, rounds, threads, progress, step + o)) return false;
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
  for (auto& s : sides) {
    std::size_t short_points = 0;
    for (auto& p : s.partial)
      if (p) {
        ++short_points;
        keep(s, *p);
      }
    if (short_points)
      s.notes.insert(fmt::format("{} points have fewer rounds than the {} planned (the measurement was stopped "
                                 "between rounds) and are saved with the rounds they have",
                                 short_points, rounds));
  }
}

// Writes the side's run.json, device model and reports: an ordinary run folder.
void finish_side(side& s, const std::string& partner, double wall_s, int stopped_by) {
  s.info.wall_s = wall_s;
  s.info.interleave_side = s.name;
  s.info.interleave_partner = "../" + partner;
  s.notes.insert(fmt::format("interleaved with {} (interleave_id {}): round r of each point measured on both sides "
                             "in one process, repetition by repetition, in alternating order; `speedlab compare` "
                             "pairs their rounds",
                             s.info.interleave_partner, s.info.interleave_id));
  if (!s.python.interpreter.empty())
    s.notes.insert("interleaved: both sides run the same Python variant files with the same interpreter (" +
                   s.python.interpreter + "); only the C++ plugins differ");
  s.notes.insert(s.python.notes.begin(), s.python.notes.end());
  if (stopped_by)
    s.notes.insert(fmt::format("interrupted by SIG{}: {} of {} points saved", signal_name(stopped_by),
                               s.results.size(), s.points.size()));
  s.info.notes.assign(s.notes.begin(), s.notes.end());
  saved_run saved;
  saved.dir = s.folder->dir();
  saved.points = s.results;
  if (!stopped_by) saved.device = obtain_device_model(s.suite.calibrate, saved.dir, s.suite.timeout_s);
  record_device(s.info, saved.device);
  saved.run = s.info;
  s.folder->write_run_info(s.info);
  const auto written = write_reports(saved, analyze_saved(saved), s.suite.reports);
  std::cout << fmt::format("{}: {}, {}", saved.dir.string(), layout::results, layout::run);
  for (const auto& f : written.files) std::cout << ", " << f.filename().string();
  std::cout << '\n';
}

std::array<side, 2>& open_sides(std::array<side, 2>& sides, const interleave_options& options) {
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
  sides[0].name = "base", sides[0].plugin_paths = options.base_plugins;
  sides[1].name = "new", sides[1].plugin_paths = options.new_plugins;
  for (auto& s : sides) prepare_side(s, options, suite);
  for (auto& s : sides) s.folder = open_output(s.suite, options.run, s.notes); // both checked before measuring
  const std::string started_at = device::iso_utc_now();
  const std::string id = new_interleave_id(started_at);
  for (auto& s : sides) {
    s.info = new_run_info(options.run, s.suite);
    s.info.started_at = started_at;
    s.info.interleave_id = id;
    record_plugin_builds(s.info, s.points, s.registry);
  }
  return sides;
}

} // namespace

int command_compare_interleaved(const interleave_options& options) {
  std::array<side, 2> sides;
  open_sides(sides, options);
  const std::vector<slot> slots = pair_points(sides[0], sides[1]);
  const int rounds = sides[0].suite.rounds;
  const int threads = sides[0].suite.threads > 0 ? sides[0].suite.threads : sides[0].info.cpu_cores;
  for (auto& s : sides) s.info.threads = threads;
  notes() << fmt::format("speedlab: {} points, {} rounds each, BASE and NEW interleaved (output: {})\n", slots.size(),
                         rounds, options.compare.out_dir);
  if (!sides[0].python.interpreter.empty()) notes() << "speedlab: " << sides[0].python.interpreter << '\n';

  const auto started = std::chrono::steady_clock::now();
  const stop_on_signals stop_guard;
  measure_interleaved(sides, slots, rounds, threads);
  const int stopped_by = stop_signal();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  finish_side(sides[0], sides[1].name, wall_s, stopped_by);
  finish_side(sides[1], sides[0].name, wall_s, stopped_by);
  for (const auto& s : sides)
    for (const auto& n : s.info.notes) notes() << "speedlab: note: " << s.name << ": " << n << '\n';

  analysis::compare_options o;
  o.threshold = options.compare.threshold_percent / 100;
  o.allow_missing = options.compare.allow_missing;
  const auto c = analysis::compare_runs(sides[0].info, sides[0].results, sides[1].info, sides[1].results, o);
  const int verdict = write_comparison(c, options.compare.formats, options.compare.out_dir);
  if (stopped_by) {
    std::cerr << fmt::format("speedlab: interrupted by SIG{}; the rounds measured are in {}/base and {}/new\n",
                             signal_name(stopped_by), options.compare.out_dir, options.compare.out_dir);
    return 128 + stopped_by;
  }
  return verdict;
}

} // namespace speedlab::app
