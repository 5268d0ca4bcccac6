#include "app/run/run_steps.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.hpp"
#include "analysis/run_settings.hpp"
#include "app/plugins/plugin_loader.hpp"
#include "app/process/interrupt.hpp"
#include "app/process/machine_load.hpp"
#include "app/run/device_list.hpp"
#include "app/run/device_step.hpp"
#include "app/run/isolation.hpp"
#include "app/run/output_folder.hpp"
#include "app/run/progress.hpp"
#include "app/run/rounds.hpp"
#include "app/run/terminal_summary.hpp"
#include "app/suite/names.hpp"
#include "app/suite/suite_plan.hpp"
#include "device/device_probe.hpp"
#include "device/host_info.hpp"
#include "model/format.hpp"
#include "profilers/profiler.hpp"
#include "reports/reporter.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {

// The steps of `speedlab run` (app/cli/commands.cpp), which run_side (app/run/run_side.hpp)
// takes too.
void load_plugins(plugin_registry& registry, const std::vector<std::string>& cli_paths) {
  const auto paths = plugin_search_path(cli_paths);
  if (paths.empty())
    std::cerr << "speedlab: warning: no plugin folder found (use --plugin-path or SPEEDLAB_PLUGIN_PATH)\n";
  registry.load(paths);
  for (const auto& e : registry.errors())
    std::cerr << "speedlab: plugin " << e.file.string() << ": " << e.message << '\n';
  for (const auto& n : registry.notes()) notes() << "speedlab: note: " << n << '\n';
}

bool counts_as_failure(const point_result& p) {
  if (p.status == point_status::ok || p.status == point_status::skipped) return false;
  if (p.status == point_status::invalid && p.expected_invalid) return false; // caught, as it should be
  return true;
}

void print_findings(const analysis::analysis_result& result) {
  for (const auto& f : result.findings) {
    std::cout << fmt::format("[{}] {} ({}{})\n", to_string(f.severity), f.title, f.rule,
                             f.point_id.empty() ? "" : ", " + f.point_id);
    for (const auto& e : f.evidence) std::cout << fmt::format("    {}: {}\n", e.name, e.value);
    std::cout << fmt::format("    why: {}\n    next: {}\n", f.explanation, f.next_experiment);
  }
}

written_reports write_reports(const saved_run& saved, const analysis::analysis_result& result,
                              const std::vector<std::string>& formats) {
  reports::report_input input{saved.run, saved.points, result,
                              [&saved](const point_result& p) { return load_point_trace(saved.dir, p); }};
  return write_report_formats(input, saved.dir, formats);
}

analysis::analysis_result analyze_saved(const saved_run& saved) {
  if (saved.stored_analysis) return *saved.stored_analysis;
  const analysis::device_model device = saved.device.value_or(analysis::device_model{});
  return analysis::analyze(saved.points, device,
                           [&saved](const point_result& p) { return load_point_trace(saved.dir, p); });
}

void check_names(const std::vector<std::string>& wanted, const std::vector<std::string>& valid, const char* what) {
  for (const auto& w : wanted)
    if (std::find(valid.begin(), valid.end(), w) == valid.end()) {
      throw config_error(unknown_name_message(what, w, valid));
    }
}

// The suite with the command line applied, its profilers and report formats checked.
suite_config prepare_suite(const run_options& options) {
  suite_config suite = options.suite_file ? load_suite_file(*options.suite_file)
                                          : parse_suite(default_suite_yaml(), "<built-in default suite>");
  apply_overrides(suite, options.overrides);
  // A backend this build left out is a note, so one suite serves every build; an unknown
  // name stays an error (check_names below).
  std::erase_if(suite.profilers, [](const std::string& name) {
    const std::string why = profiling::profiler_not_built_reason(name);
    if (!why.empty())
      notes() << fmt::format("speedlab: note: profiler '{}' is not in this build ({}); running without it\n", name,
                             why);
    return !why.empty();
  });
  check_names(suite.profilers, profiling::profiler_names(), "profiler");
  suite.reports = reports::canonical_formats(suite.reports); // "md" is "markdown"
  check_names(suite.reports, reports::reporter_names(), "report format");
  return suite;
}

suite_config prepare_run_suite(const run_options& options) {
  suite_config suite = prepare_suite(options);
  // -w on the built-in suite: a selection meant to be measured and compared, not the first look
  // (compare --base-plugins keeps its own default, app/compare/interleave.hpp).
  if (!options.suite_file && !options.overrides.workloads.empty() && !options.overrides.rounds)
    suite.rounds = command_line_suite_rounds;
  return suite;
}

// --devices: every point once per listed GPU, the device in its parameters (its identity).
std::vector<planned_point> on_devices(const std::vector<planned_point>& points, const std::vector<int>& devices,
                                      const plugin_registry& registry) {
  std::vector<planned_point> out;
  for (const auto& p : points) {
    if (const loaded_workload* w = registry.find(p.workload))
      for (const auto& spec : w->info.parameters)
        if (spec.name == device_param)
          throw config_error(
              fmt::format("--devices: workload '{}' has a parameter of its own named '{}'; run it without "
                          "--devices",
                          p.workload, device_param));
    for (int d : devices) {
      planned_point q = p;
      q.params[device_param] = std::to_string(d);
      out.push_back(std::move(q));
    }
  }
  return out;
}

std::vector<planned_point> plan_run(suite_config& suite, const run_options& options, const plugin_registry& registry) {
  if (!options.suite_file && options.overrides.workloads.empty()) {
    // The built-in suite names every lesson; a plugin that is not built here is left out.
    std::erase_if(suite.workloads, [&](const workload_request& w) {
      if (registry.find(w.name)) return false;
      notes() << fmt::format("speedlab: note: workload '{}' of the default suite is not loaded; skipping it\n", w.name);
      return true;
    });
  }
  std::vector<planned_point> points = plan_points(suite, registry);
  if (points.empty()) throw config_error("the suite has no points to run");
  return points;
}

// Opens the output folder under the lock and says loudly what happened to an earlier run.
std::unique_ptr<output_folder> open_output(const suite_config& suite, const run_options& options,
                                           std::set<std::string>& notes) {
  const earlier_run policy = options.force    ? earlier_run::replace
                             : options.resume ? earlier_run::resume
                                              : earlier_run::refuse;
  auto folder = std::make_unique<output_folder>(suite.output, policy);
  if (!folder->replaced().empty()) {
    const std::string what = fmt::format("--force: replaced the earlier run in {} (removed {})", folder->dir().string(),
                                         fmt::join(folder->replaced(), ", "));
    std::cerr << "speedlab: WARNING: " << what << '\n';
    notes.insert(what);
  }
  for (const auto& w : folder->warnings()) std::cerr << "speedlab: warning: " << w << '\n';
  if (options.resume)
    notes.insert(
        fmt::format("--resume: {} points kept from an earlier run in this folder", folder->kept_points().size()));
  return folder;
}

// The measurement settings compare checks (analysis/run_settings.hpp), as text: the suite's,
// then each workload's own `measure:` block as "measure[<workload>].<name>".
void add_measure_settings(std::map<std::string, std::string>& out, const measure_options& m,
                          const std::string& prefix) {
  out[prefix + "warmup_runs"] = std::to_string(m.warmup_runs);
  out[prefix + "warmup_min_time_s"] = format::exact(m.warmup_min_time_s);
  out[prefix + "min_samples"] = std::to_string(m.min_samples);
  out[prefix + "max_samples"] = std::to_string(m.max_samples);
  out[prefix + "min_time_s"] = format::exact(m.min_time_s);
  out[prefix + "max_time_s"] = format::exact(m.max_time_s);
  out[prefix + "target_noise"] = format::exact(m.target_noise);
  // Only when not the default, so the settings of runs measured before criteria stay comparable.
  if (m.stopping != measure_options{}.stopping) out[prefix + "stopping"] = m.stopping;
}

std::map<std::string, std::string> measurement_settings(const suite_config& suite) {
  std::map<std::string, std::string> out;
  add_measure_settings(out, suite.measure, "");
  for (const auto& w : suite.workloads)
    if (w.measure) add_measure_settings(out, *w.measure, "measure[" + w.name + "].");
  out["timeout_s"] = format::exact(suite.timeout_s);
  out["isolate"] = suite.isolate ? "true" : "false";
  out["self_timing"] = suite.self_timing ? "true" : "false";
  out["calibrate"] = suite.calibrate;
  out["profilers"] = fmt::format("{}", fmt::join(suite.profilers, ","));
  return out;
}

// How each planned workload's plugin was compiled, with a warning on stderr for each one
// built without optimization (the reports warn from the points, which carry the build).
void record_plugin_builds(run_info& info, const std::vector<planned_point>& planned, const plugin_registry& registry) {
  for (const auto& p : planned) {
    const loaded_workload* w = registry.find(p.workload);
    if (!w || !info.plugin_builds.emplace(p.workload, w->build).second || !w->build.unoptimized()) continue;
    const std::string warning = analysis::unoptimized_plugin_warning(p.workload, w->file.filename().string(), w->build);
    std::cerr << "speedlab: WARNING: " << warning << '\n';
  }
}

// The run's GPU and its CUDA driver, from the device model the analysis uses.
void record_device(run_info& info, const decltype(saved_run::device)& device) {
  if (!device) return;
  info.gpu_name = device->gpu_name;
  if (auto it = device->properties.find("driver_version"); it != device->properties.end())
    info.driver_version = it->second;
}

run_info new_run_info(const run_options& options, const suite_config& suite) {
  run_info info;
  info.speedlab_version = SPEEDLAB_VERSION;
  info.started_at = device::iso_utc_now();
  info.hostname = device::host_name();
  info.cpu_model = device::read_cpuinfo().model;
  info.cpu_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  info.command_line = options.command_line;
  info.suite = suite.source;
  info.profilers = suite.profilers;
  info.settings = measurement_settings(suite);
  return info;
}

round_plan plan_round(const planned_point& pp, int rounds, int round, const suite_config& suite,
                      const plugin_registry& registry, output_folder& folder, int threads) {
  const loaded_workload* w = registry.find(pp.workload);
  planned_point plugin_point = pp; // the plugin never sees the device parameter
  plugin_point.measure = round_measure(pp.measure, rounds);
  const std::optional<int> device = take_device(plugin_point.params);
  // The first round writes the point's device trace and runs the passes that read the kernels
  // once (first_round_only: their sections come from the first round); later rounds add
  // samples and splits only.
  std::vector<std::string> profilers = suite.profilers;
  if (round > 0)
    std::erase_if(profilers, [](const std::string& name) {
      const auto* b = profiling::find_backend(name);
      return b && b->first_round_only;
    });
  run_request req{w,
                  w->find_variant(pp.variant),
                  plugin_point,
                  threads,
                  profilers,
                  suite.self_timing,
                  suite.profiler_options,
                  round == 0 ? folder.dir() : std::filesystem::path(),
                  {},
                  {}};
  if (device) req.visible_devices = visible_devices_for(*device, std::getenv("CUDA_VISIBLE_DEVICES"));
  return {std::move(req), device};
}

void finish_round(point_result& r, const round_plan& plan, const suite_config& suite) {
  if (r.language == "c++") r.build = plan.request.workload->build; // the plugin's flavour travels with the point
  if (!suite.isolate && wants_own_process_pass(plan.request))
    for (const auto& name : own_process_backends(plan.request))
      r.profiler_messages.push_back(fmt::format("{0}: the {0} pass needs a process of its own per point (isolation "
                                                "on, the default); no {0} view",
                                                name));
  if (plan.device) { // the device is part of the point's identity
    r.params[device_param] = std::to_string(*plan.device);
    r.id = point_id(r.workload, r.variant, r.params);
  }
}

// One round of one point, in its own process when isolated; nullopt when a stop signal
// abandoned it.
std::optional<point_result> measure_round(const planned_point& pp, int rounds, int round, const suite_config& suite,
                                          const plugin_registry& registry, output_folder& folder, int threads) {
  const round_plan plan = plan_round(pp, rounds, round, suite, registry, folder, threads);
  const machine_load_meter load; // what other programs take of the machine during this round
  std::optional<point_result> r =
      suite.isolate ? run_isolated(plan.request, suite.timeout_s) : measure_point(plan.request);
  if (r) {
    if (const auto l = load.read()) {
      r->other_busy_cores = l->other_busy_cores;
      r->other_busy_span_s = l->span_s;
    }
    finish_round(*r, plan, suite);
  }
  return r;
}

// Measures each point not yet in the folder in `suite.rounds` rounds, round-robin over the
// plan, appending each point as its last round (or a failed one) ends. `started[i]`: the
// saved record of a point that has some of its rounds (`--resume`); only its missing rounds
// are measured, added after the saved samples, and the point is appended again with all of
// them (the reader keeps the last line: model/saved_records.hpp, extends_partial). Stops
// early on a stop signal (interrupt.hpp): the round in a child is abandoned, one measured
// in-process is finished and kept; points with some of their rounds are then saved with what
// they have (rounds < rounds_planned), so nothing measured is lost.
std::vector<point_result> measure_points(const std::vector<planned_point>& points, const suite_config& suite,
                                         const plugin_registry& registry, output_folder& folder, int threads,
                                         std::set<std::string>& notes,
                                         std::vector<std::optional<point_result>> started) {
  const int rounds = std::max(1, suite.rounds);
  progress_display progress(points.size() * static_cast<std::size_t>(rounds), stderr_is_terminal());
  std::vector<std::optional<point_result>>& partial = started;
  partial.resize(points.size());
  std::vector<int> first_round(points.size(), 0); // the round each point goes on from
  for (std::size_t i = 0; i < points.size(); ++i) first_round[i] = partial[i] ? partial[i]->rounds : 0;
  std::vector<point_result> results;
  auto keep = [&](point_result& r) {
    folder.append(r);
    for (const auto& m : r.profiler_messages) notes.insert(m);
    results.push_back(std::move(r));
  };
  bool abandoned = false;
  for (int round = 0; round < rounds && !abandoned; ++round) {
    for (std::size_t i = 0; i < points.size() && !stop_signal(); ++i) {
      if (round < first_round[i] || (round > 0 && (!partial[i] || point_finished(*partial[i])))) continue;
      const auto& pp = points[i];
      const std::size_t step = static_cast<std::size_t>(round) * points.size() + i;
      progress.starting(step, point_id(pp.workload, pp.variant, pp.params) +
                                  (rounds > 1 ? fmt::format(" (round {}/{})", round + 1, rounds) : ""));
      std::optional<point_result> r = measure_round(pp, rounds, round, suite, registry, folder, threads);
      if (!r) { // abandoned by a stop signal
        abandoned = true;
        break;
      }
      progress.finished(step, *r);
      if (!partial[i]) partial[i].emplace();
      merge_round(*partial[i], std::move(*r), round, rounds);
      if (point_finished(*partial[i])) {
        keep(*partial[i]);
        partial[i].reset();
      }
    }
    if (stop_signal()) abandoned = true;
  }
  std::size_t short_points = 0;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (partial[i] && partial[i]->rounds > first_round[i]) { // a saved point that gained no round stays as saved
      ++short_points;
      keep(*partial[i]);
    }
  if (short_points)
    notes.insert(fmt::format("{} points have fewer rounds than the {} planned (the run was stopped between rounds) and "
                             "are saved with the rounds they have; `--resume` measures their missing rounds "
                             "(`--force` measures all again); `speedlab compare` says so for each",
                             short_points, rounds));
  progress.done();
  return results;
}

} // namespace speedlab::app
