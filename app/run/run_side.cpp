#include "app/run/run_side.hpp"

#include <iostream>

#include <fmt/format.h>

#include "app/process/interrupt.hpp"
#include "app/run/device_list.hpp"
#include "app/run/device_step.hpp"
#include "app/run/isolation.hpp"
#include "app/run/output_folder.hpp"
#include "app/run/rounds.hpp"
#include "app/run/run_steps.hpp"
#include "app/run/runner.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::app {

run_side::run_side(std::string name, suite_config suite) : m_name(std::move(name)), m_suite(std::move(suite)) {}
run_side::~run_side() = default;

void run_side::load_plugins(const std::vector<std::string>& paths) { app::load_plugins(m_registry, paths); }

void run_side::plan(const run_options& options) {
  m_points = plan_run(m_suite, options, m_registry);
  m_partial.assign(m_points.size(), std::nullopt);
}

void run_side::open(const run_options& options) {
  m_folder = open_output(m_suite, options, m_notes);
  m_info = new_run_info(options, m_suite);
}

void run_side::start(const std::string& started_at, const std::string& interleave_id, int threads) {
  m_info.started_at = started_at;
  m_info.interleave_id = interleave_id;
  m_info.threads = threads;
  record_plugin_builds(m_info, m_points, m_registry);
}

std::string run_side::point_id(int i) const {
  const auto& p = m_points[i];
  return app::point_id(p.workload, p.variant, p.params);
}

bool run_side::wants_round(int i, int round) const {
  return i >= 0 && (round == 0 || (m_partial[i] && !point_finished(*m_partial[i])));
}

bool run_side::pairable(int i, int round) const {
  planned_point p = m_points[i];
  if (take_device(p.params)) return false;
  if (round > 0) return true; // later rounds leave out the backends with passes of their own
  for (const auto& name : m_suite.profilers)
    if (const auto* b = profiling::find_backend(name); b && b->first_round_only) return false;
  return true;
}

std::optional<point_result> run_side::measure_round(int i, int rounds, int round, int threads) {
  return app::measure_round(m_points[i], rounds, round, m_suite, m_registry, *m_folder, threads);
}

void run_side::keep(point_result& r) {
  m_folder->append(r);
  for (const auto& m : r.profiler_messages) m_notes.insert(m);
  m_results.push_back(std::move(r));
}

void run_side::add_round(int i, int round, int rounds, point_result r) {
  if (!m_partial[i]) m_partial[i].emplace();
  merge_round(*m_partial[i], std::move(r), round, rounds);
  if (point_finished(*m_partial[i])) {
    keep(*m_partial[i]);
    m_partial[i].reset();
  }
}

void run_side::finish(double wall_s, int stopped_by, int rounds) {
  std::size_t short_points = 0;
  for (auto& p : m_partial)
    if (p) {
      ++short_points;
      keep(*p);
      p.reset();
    }
  if (short_points)
    note(fmt::format("{} points have fewer rounds than the {} planned (the measurement was stopped between rounds) "
                     "and are saved with the rounds they have",
                     short_points, rounds));
  if (stopped_by)
    note(fmt::format("interrupted by SIG{}: {} of {} points saved", signal_name(stopped_by), m_results.size(),
                     m_points.size()));
  m_info.wall_s = wall_s;
  m_info.notes.assign(m_notes.begin(), m_notes.end());
  saved_run saved;
  saved.dir = m_folder->dir();
  saved.points = m_results;
  if (!stopped_by) saved.device = obtain_device_model(m_suite.calibrate, saved.dir, m_suite.timeout_s);
  record_device(m_info, saved.device);
  saved.run = m_info;
  m_folder->write_run_info(m_info);
  const auto written = write_reports(saved, analyze_saved(saved), m_suite.reports);
  std::cout << fmt::format("{}: {}, {}", saved.dir.string(), layout::results, layout::run);
  for (const auto& f : written.files) std::cout << ", " << f.filename().string();
  std::cout << '\n';
}

pair_outcome measure_pair(run_side& a, int ia, run_side& b, int ib, int rounds, int round, int threads, int first) {
  std::array<run_side*, 2> sides{&a, &b};
  std::array<int, 2> index{ia, ib};
  std::array<round_plan, 2> plans;
  for (int w = 0; w < 2; ++w) {
    run_side& s = *sides[w];
    plans[w] = plan_round(s.m_points[index[w]], rounds, round, s.m_suite, s.m_registry, *s.m_folder, threads);
    // The round's median is the paired test's unit: a short point gets the point's whole sample
    // cap in each round (its time budget stays 1/R, as in `run`), so that its median is not the
    // noise of 1/R of the samples. (Stopping every round at its share of min_time, or converging
    // at sqrt(R) x target_noise, saved time but cost power: docs/reports.md, "The gate,
    // interleaved".)
    auto& m = plans[w].request.point.measure;
    m.max_samples = std::max(m.max_samples, s.m_points[index[w]].measure.max_samples);
  }
  paired_outcome out;
  if (a.m_suite.isolate)
    out = run_pair_isolated(plans[0].request, plans[1].request, first, a.m_suite.timeout_s);
  else
    try { // in speedlab's own process (isolate: false): what escapes the sides is the pair's failure
      out.results = measure_point_pair(plans[0].request, plans[1].request, first);
    } catch (const std::exception& e) {
      out.failure = e.what();
    }
  if (out.results)
    for (int w = 0; w < 2; ++w) finish_round((*out.results)[w], plans[w], sides[w]->m_suite);
  return {out.abandoned, std::move(out.results), std::move(out.failure)};
}

} // namespace speedlab::app
