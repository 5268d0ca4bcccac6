#include "app/run/commands.hpp"

#include <sys/utsname.h>
#include <sys/wait.h>
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
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.hpp"
#include "analysis/run_settings.hpp"
#include "model/format.hpp"
#include "device/device_probe.hpp"
#include "device/host_info.hpp"
#include "app/run/device_list.hpp"
#include "app/run/device_step.hpp"
#include "app/process/interrupt.hpp"
#include "app/run/isolation.hpp"
#include "app/suite/names.hpp"
#include "app/run/output_folder.hpp"
#include "app/plugins/plugin_loader.hpp"
#include "app/profile/profile_report.hpp"
#include "app/run/progress.hpp"
#include "app/run/rounds.hpp"
#include "app/run/run_steps.hpp"
#include "app/suite/suite_plan.hpp"
#include "app/run/terminal_summary.hpp"
#include "profilers/profiler.hpp"
#include "reports/reporter.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {

// The steps of a run that `speedlab compare --base-plugins/--new-plugins` shares
// (app/run/run_steps.hpp), from here to the next anonymous namespace and in the block below.
void load_plugins(plugin_registry& registry, const std::vector<std::string>& cli_paths) {
  const auto paths = plugin_search_path(cli_paths);
  if (paths.empty()) std::cerr << "speedlab: warning: no plugin folder found (use --plugin-path or SPEEDLAB_PLUGIN_PATH)\n";
  registry.load(paths);
  for (const auto& e : registry.errors()) std::cerr << "speedlab: plugin " << e.file.string() << ": " << e.message << '\n';
  for (const auto& n : registry.notes()) notes() << "speedlab: note: " << n << '\n';
}

bool counts_as_failure(const point_result& p) {
  if (p.status == point_status::ok || p.status == point_status::skipped) return false;
  if (p.status == point_status::invalid && p.expected_invalid) return false; // caught, as it should be
  return true;
}

void print_findings(const analysis::analysis_result& result) {
  for (const auto& f : result.findings) {
    std::cout << fmt::format("[{}] {} ({}{})\n", f.severity, f.title, f.rule, f.point_id.empty() ? "" : ", " + f.point_id);
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

namespace {

// --devices with several GPUs: each device's points analysed against that device's model,
// the results put together (the first device's model is the run's).
analysis::analysis_result analyze_per_device(const saved_run& saved, const std::map<int, analysis::device_model>& models) {
  analysis::analysis_result all;
  bool first = true;
  for (const auto& [d, model] : models) {
    std::vector<point_result> points;
    for (const auto& p : saved.points) {
      auto it = p.params.find(device_param);
      if (it != p.params.end() && it->second == std::to_string(d)) points.push_back(p);
    }
    if (points.empty()) continue;
    analysis::analysis_result r =
        analysis::analyze(points, model, [&saved](const point_result& p) { return load_point_trace(saved.dir, p); });
    if (first) all.device = r.device;
    first = false;
    auto add = [](auto& to, auto& from) { to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end())); };
    add(all.roofline, r.roofline), add(all.findings, r.findings), add(all.speedups, r.speedups);
    add(all.cpp_over_python, r.cpp_over_python), add(all.fits, r.fits), add(all.crossovers, r.crossovers);
    add(all.what_ifs, r.what_ifs), add(all.timing_checks, r.timing_checks);
    for (auto& n : r.notes)
      if (std::find(all.notes.begin(), all.notes.end(), n) == all.notes.end()) all.notes.push_back(std::move(n));
  }
  std::stable_sort(all.findings.begin(), all.findings.end(),
                   [](const auto& x, const auto& y) { return x.estimated_gain > y.estimated_gain; });
  return all;
}

void check_names(const std::vector<std::string>& wanted, const std::vector<std::string>& valid, const char* what) {
  for (const auto& w : wanted)
    if (std::find(valid.begin(), valid.end(), w) == valid.end()) {
      throw config_error(unknown_name_message(what, w, valid));
    }
}

// `report` and `analyze` take the folder of a run; a file or an empty name gets a message
// saying so rather than "no such folder".
void check_run_folder(const std::string& dir) {
  if (dir.empty()) throw config_error("the output folder name is empty; name the folder of a run");
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir, ec))
    throw config_error(fmt::format("{}: is a file; give the output folder of a run (the folder holding results.jsonl)", dir));
}

} // namespace

int command_list(const list_options& options) {
  plugin_registry registry;
  load_plugins(registry, options.plugin_paths);
  const python_variants_added python = add_python_variants(registry, options.python);
  if (!python.interpreter.empty()) notes() << "speedlab: " << python.interpreter << '\n';
  for (const auto& n : python.notes) notes() << "speedlab: note: " << n << '\n';
  nlohmann::json j = nlohmann::json::array();
  std::string text;
  for (const auto& [name, w] : registry.workloads()) {
    nlohmann::json jw{{"name", name}, {"description", w.info.description}, {"plugin", w.file.string()},
                      {"example", w.info.example}};
    text += fmt::format("{}{}  {}\n  plugin: {} (build: {})\n", name, w.info.example ? " [example]" : "",
                        w.info.description, w.file.string(), w.build.words());
    jw["build"] = w.build; // {"optimized", "ndebug"}: null when the plugin does not say
    jw["build"]["words"] = w.build.words();
    if (w.build.unoptimized()) { // google/benchmark's "Library was built as DEBUG", per plugin
      const std::string warning = analysis::unoptimized_plugin_warning(name, w.file.filename().string(), w.build);
      jw["warnings"].push_back(warning);
      text += "  WARNING: " + warning + "\n";
    }
    text += "  parameters:\n";
    for (const auto& p : w.info.parameters) {
      const char* type = p.type == param_type::integer ? "integer" : p.type == param_type::real ? "real" : "text";
      jw["parameters"].push_back({{"name", p.name}, {"type", type}, {"description", p.description},
                                  {"default", p.default_value}, {"sweep", p.default_sweep}, {"choices", p.choices}});
      text += fmt::format("    {:<12} {:<8} default {:<10} {}{}{}{}\n", p.name, type, p.default_value, p.description,
                          p.size_axis ? " [size axis]" : "",
                          p.default_sweep.empty() ? "" : fmt::format("; sweep {}", p.default_sweep),
                          p.choices.empty() ? "" : fmt::format("; one of {}", fmt::join(p.choices, ", ")));
      jw["parameters"].back()["size_axis"] = p.size_axis;
    }
    for (const auto& c : w.info.constraints) {
      jw["constraints"].push_back(c.description);
      text += fmt::format("  constraint: {}\n", c.description);
    }
    text += "  variants:\n";
    for (const auto& v : w.info.variants) {
      std::string why;
      try {
        if (v.unavailable_reason) why = v.unavailable_reason();
      } catch (const std::exception& e) {
        why = e.what();
      }
      jw["variants"].push_back({{"name", v.name}, {"kind", to_string(v.kind)}, {"language", v.language},
                                {"description", v.description},
                                {"available", why.empty()}, {"unavailable_reason", why},
                                {"expected_invalid", v.expected_invalid}});
      text += fmt::format("    {:<14} {:<8} {}{}{}\n", v.name, to_string(v.kind), v.description,
                          v.expected_invalid ? " [wrong on purpose]" : "",
                          why.empty() ? "" : fmt::format("\n    {:<14} {:<8} cannot run here: {}", "", "", why));
    }
    text += "\n";
    j.push_back(std::move(jw));
  }
  // A CUDA-less build lists no CUDA variant, so none says why: the listing does.
  auto notes = registry.notes();
  if (!SPEEDLAB_HAS_CUDA) notes.push_back(device::gpu_unavailable_reason());
  if (options.json) {
    nlohmann::json out{
        {"workloads", j}, {"errors", nlohmann::json::array()}, {"skipped", nlohmann::json::array()}, {"notes", notes}};
    for (const auto& e : registry.errors())
      out["errors"].push_back({{"file", e.file.string()}, {"message", e.message}});
    for (const auto& e : registry.skipped())
      out["skipped"].push_back({{"file", e.file.string()}, {"reason", e.message}});
    std::cout << out.dump(2) << '\n';
  } else {
    std::cout << (text.empty() ? "no workloads loaded\n" : text);
    // Files in plugin folders that were passed over, and why (load errors are on stderr).
    if (!registry.skipped().empty()) std::cout << "files skipped in plugin folders:\n";
    for (const auto& e : registry.skipped()) std::cout << fmt::format("  {}: {}\n", e.file.string(), e.message);
    if (!SPEEDLAB_HAS_CUDA) std::cerr << "speedlab: note: " << notes.back() << '\n';
  }
  return registry.errors().empty() ? exit_ok : exit_failures;
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
          throw config_error(fmt::format("--devices: workload '{}' has a parameter of its own named '{}'; run it without "
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
  const earlier_run policy = options.force ? earlier_run::replace : options.resume ? earlier_run::resume : earlier_run::refuse;
  auto folder = std::make_unique<output_folder>(suite.output, policy);
  if (!folder->replaced().empty()) {
    const std::string what = fmt::format("--force: replaced the earlier run in {} (removed {})", folder->dir().string(),
                                         fmt::join(folder->replaced(), ", "));
    std::cerr << "speedlab: WARNING: " << what << '\n';
    notes.insert(what);
  }
  for (const auto& w : folder->warnings()) std::cerr << "speedlab: warning: " << w << '\n';
  if (options.resume)
    notes.insert(fmt::format("--resume: {} points kept from an earlier run in this folder", folder->kept_points().size()));
  return folder;
}

// The measurement settings compare checks (analysis/run_settings.hpp), as text: the suite's,
// then each workload's own `measure:` block as "measure[<workload>].<name>".
void add_measure_settings(std::map<std::string, std::string>& out, const measure_options& m, const std::string& prefix) {
  out[prefix + "warmup_runs"] = std::to_string(m.warmup_runs);
  out[prefix + "warmup_min_time_s"] = format::exact(m.warmup_min_time_s);
  out[prefix + "min_samples"] = std::to_string(m.min_samples);
  out[prefix + "max_samples"] = std::to_string(m.max_samples);
  out[prefix + "min_time_s"] = format::exact(m.min_time_s);
  out[prefix + "max_time_s"] = format::exact(m.max_time_s);
  out[prefix + "target_noise"] = format::exact(m.target_noise);
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
  if (auto it = device->properties.find("driver_version"); it != device->properties.end()) info.driver_version = it->second;
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
  run_request req{w, w->find_variant(pp.variant), plugin_point, threads, profilers, suite.self_timing,
                  suite.profiler_options, round == 0 ? folder.dir() : std::filesystem::path(), {}, {}};
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
  std::optional<point_result> r =
      suite.isolate ? run_isolated(plan.request, suite.timeout_s) : measure_point(plan.request);
  if (r) finish_round(*r, plan, suite);
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

python_settings python_settings_of(const suite_config& suite) {
  python_settings settings;
  settings.interpreter = suite.python;
  settings.files = suite.python_variants;
  settings.enabled = suite.python_enabled;
  settings.chosen_by = suite.python_chosen_by;
  return settings;
}

const char* signal_name(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? name : "?";
}

namespace {

// Device and host ceilings for the analysis, measured in a child (CUDA stays out of this
// process): the run's device.json, and with --devices each GPU's own (device-<N>.json).
std::map<int, analysis::device_model> obtain_device_models(const suite_config& suite, const std::vector<int>& devices,
                                                           int stopped_by, saved_run& saved, run_info& info) {
  std::map<int, analysis::device_model> device_models;
  if (!stopped_by && devices.empty()) saved.device = obtain_device_model(suite.calibrate, saved.dir, suite.timeout_s);
  for (std::size_t i = 0; i < devices.size() && !stop_signal(); ++i) {
    const int d = devices[i];
    const std::string visible = visible_devices_for(d, std::getenv("CUDA_VISIBLE_DEVICES"));
    auto model = obtain_device_model(suite.calibrate, saved.dir, suite.timeout_s, visible, fmt::format("device-{}.json", d));
    if (!model) continue;
    model->properties["device_index"] = std::to_string(d);
    if (i == 0) { // the run's device.json: the first listed GPU
      write_json_file(saved.dir / "device.json", nlohmann::json(*model));
      saved.device = *model;
    }
    device_models[d] = std::move(*model);
  }
  if (devices.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [d, m] : device_models) names.push_back(fmt::format("{}: {}", d, m.gpu_name));
    info.notes.push_back(fmt::format("--devices: every point ran on each of devices {} in turn ({}); each device's "
                                     "points are analysed against its own ceilings (device-<N>.json)",
                                     fmt::join(devices, ", "), fmt::join(names, "; ")));
  }
  return device_models;
}

// What a run measures: the planned points not in the folder and, with `--resume`, those
// saved with some of their rounds (their records, to go on from). A point saved for another
// number of rounds than this run plans is kept as saved.
struct resume_plan {
  std::vector<planned_point> points;
  std::vector<std::optional<point_result>> started; // per point: its saved rounds, if any
  std::size_t kept = 0, partial = 0, other_rounds = 0, rounds_kept = 0;
};

bool partly_measured(const point_result& p) { return p.valid() && p.rounds < p.rounds_planned; }

resume_plan points_to_measure(const std::vector<planned_point>& planned, const output_folder& folder, int rounds) {
  resume_plan plan;
  for (const auto& p : planned) {
    const point_result* saved = folder.kept_point(point_id(p.workload, p.variant, p.params));
    if (saved && partly_measured(*saved) && saved->rounds_planned == rounds) {
      ++plan.partial;
      plan.rounds_kept += static_cast<std::size_t>(saved->rounds);
      plan.points.push_back(p);
      plan.started.emplace_back(*saved);
    } else if (saved) {
      ++plan.kept;
      plan.other_rounds += partly_measured(*saved) ? 1 : 0;
    } else {
      plan.points.push_back(p);
      plan.started.emplace_back();
    }
  }
  return plan;
}

void say_resume(const resume_plan& plan, const std::filesystem::path& results) {
  std::string line = fmt::format("speedlab: --resume: {} points already in {} are kept", plan.kept + plan.partial,
                                 results.string());
  if (plan.partial)
    line += fmt::format(" ({} of them partly measured: their {} rounds are kept and their missing rounds measured)",
                        plan.partial, plan.rounds_kept);
  app::notes() << line << fmt::format("; measuring the {} others\n", plan.points.size() - plan.partial);
  if (plan.other_rounds)
    std::cerr << fmt::format("speedlab: --resume: {} partly measured points were planned for another number of rounds "
                             "than this run's; they are kept as saved (--force measures all again)\n",
                             plan.other_rounds);
}

// The folder's points after a run: those kept from before, each replaced by its new record
// when this run measured it on (--resume), then the new ones.
std::vector<point_result> kept_and_new(const std::vector<point_result>& kept, const std::vector<point_result>& fresh) {
  std::set<std::string> remeasured;
  for (const auto& p : fresh) remeasured.insert(p.id);
  std::vector<point_result> out;
  for (const auto& p : kept)
    if (!remeasured.count(p.id)) out.push_back(p);
  out.insert(out.end(), fresh.begin(), fresh.end());
  return out;
}

// How far the planned points got: all their rounds (or ended by a failure), some, none.
struct rounds_count {
  std::size_t planned = 0, complete = 0, partial = 0;
};

rounds_count count_rounds(const std::vector<planned_point>& planned, const std::vector<point_result>& saved) {
  std::map<std::string, const point_result*> by_id;
  for (const auto& p : saved) by_id[p.id] = &p;
  rounds_count c;
  c.planned = planned.size();
  for (const auto& p : planned) {
    const auto it = by_id.find(point_id(p.workload, p.variant, p.params));
    if (it == by_id.end()) continue;
    ++(partly_measured(*it->second) ? c.partial : c.complete);
  }
  return c;
}

std::string interrupted_note(int sig, const rounds_count& c) {
  const std::size_t none = c.planned - c.complete - c.partial;
  return fmt::format(
      "interrupted by SIG{}: {} of {} points have all their rounds{}{}; `speedlab run --resume` measures {}",
      signal_name(sig), c.complete, c.planned,
      c.partial ? fmt::format(", {} have only some (saved with the rounds they have)", c.partial) : "",
      none ? fmt::format(", {} were not measured", none) : "",
      c.partial ? (none ? "their missing rounds and the points not measured" : "their missing rounds")
                : (none ? "the points not measured" : "nothing more"));
}

} // namespace

namespace {
// What the run's environment leaves out: the Python variants' interpreter and notes; in a
// CUDA-less build, that (no CUDA variant is there to say it).
void add_environment_notes(const python_variants_added& python, std::set<std::string>& notes) {
  if (!python.interpreter.empty()) notes.insert(python.interpreter);
  notes.insert(python.notes.begin(), python.notes.end());
  if (!SPEEDLAB_HAS_CUDA) notes.insert(device::gpu_unavailable_reason());
}
} // namespace

int command_run(const run_options& options) {
  suite_config suite = prepare_run_suite(options);
  plugin_registry registry;
  load_plugins(registry, options.plugin_paths);
  const python_variants_added python = add_python_variants(registry, python_settings_of(suite));
  std::vector<planned_point> planned = plan_run(suite, options, registry);
  std::vector<int> devices;
  if (options.overrides.devices) {
    if (!suite.isolate)
      throw config_error("--devices runs each point in its own process on its GPU; drop --no-isolate (or isolate: false)");
    devices = parse_device_list(*options.overrides.devices, count_gpus(std::max(suite.timeout_s, 60.0)));
    planned = on_devices(planned, devices, registry);
    notes() << fmt::format("speedlab: --devices: each point runs on device{} {}\n", devices.size() > 1 ? "s" : "",
                           fmt::join(devices, ", "));
  }

  std::set<std::string> notes;
  const auto folder = open_output(suite, options, notes);
  run_info info = new_run_info(options, suite);
  record_plugin_builds(info, planned, registry);
  resume_plan todo = points_to_measure(planned, *folder, std::max(1, suite.rounds));
  const std::vector<planned_point>& points = todo.points;
  const int threads = suite.threads > 0 ? suite.threads : info.cpu_cores;
  info.threads = threads;
  const std::filesystem::path& out = folder->dir();
  app::notes() << fmt::format("speedlab: {} points from {} (output: {}, {})\n", planned.size(), suite.source,
                              out.string(), suite.isolate ? "each point in its own process" : "in-process");
  // Which interpreter the Python variants run with, and why, before any of them runs.
  if (!python.interpreter.empty()) app::notes() << "speedlab: " << python.interpreter << '\n';
  if (options.resume) say_resume(todo, out / layout::results);

  const auto started = std::chrono::steady_clock::now();
  const stop_on_signals stop_guard;
  for (const auto& [name, backend] : profiling::profiler_registry()) { // each backend says what its options mean
    const bool selected = std::find(suite.profilers.begin(), suite.profilers.end(), name) != suite.profilers.end();
    if (backend.options)
      if (std::string o = backend.options->note(suite.profiler_options, selected); !o.empty()) notes.insert(o);
  }
  add_environment_notes(python, notes);
  const std::vector<point_result> results =
      measure_points(points, suite, registry, *folder, threads, notes, std::move(todo.started));
  saved_run saved;
  saved.dir = out;
  saved.points = kept_and_new(folder->kept_points(), results);
  const int stopped_by = stop_signal();
  if (stopped_by) notes.insert(interrupted_note(stopped_by, count_rounds(planned, saved.points)));
  info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  info.notes.assign(notes.begin(), notes.end());
  for (const auto& n : info.notes) app::notes() << "speedlab: note: " << n << '\n';

  const std::map<int, analysis::device_model> device_models = obtain_device_models(suite, devices, stopped_by, saved, info);
  record_device(info, saved.device);
  saved.run = info;
  folder->write_run_info(info);

  const analysis::analysis_result result =
      device_models.size() > 1 ? analyze_per_device(saved, device_models) : analyze_saved(saved);
  std::cout << terminal_summary(saved.points, result);
  const auto written = write_reports(saved, result, suite.reports);
  std::cout << "\nwritten to " << out.string() << ": " << layout::results << ", " << layout::run;
  for (const auto& f : written.files) std::cout << ", " << f.filename().string();
  std::cout << '\n';

  if (const int sig = stop_signal()) { // during the points, or later (device model, reports)
    const rounds_count c = count_rounds(planned, saved.points);
    std::cerr << fmt::format("speedlab: interrupted by SIG{}; {} finished points{} are in {}\n", signal_name(sig),
                             c.complete, c.partial ? fmt::format(" and {} partly measured", c.partial) : "",
                             (out / layout::results).string());
    return 128 + sig;
  }
  std::size_t failures = 0;
  for (const auto& r : saved.points) failures += counts_as_failure(r) ? 1 : 0;
  if (failures) std::cerr << fmt::format("speedlab: {} of {} points failed or were invalid\n", failures, saved.points.size());
  return failures || written.failed ? exit_failures : exit_ok;
}

namespace {

// A saved run with at least one valid point, its warnings said; nothing valid is exit 2.
std::optional<saved_run> load_for_reading(const std::string& dir) {
  check_run_folder(dir);
  saved_run saved = load_run(dir);
  for (const auto& w : saved.warnings) std::cerr << "speedlab: warning: " << w << '\n';
  if (!saved.points.empty()) return saved;
  std::cerr << fmt::format("speedlab: error: {}: no valid point to read ({} lines skipped)\n",
                           (saved.dir / layout::results).string(), saved.skipped);
  return std::nullopt;
}

// What a profile folder's reading found damaged or missing, on stderr (at most 20 lines; the
// report's notes hold all). False, with an error, when nothing valid was left to analyse.
bool said_damage(const std::string& dir, const profile_damage& damage, bool writes) {
  constexpr std::size_t shown = 20;
  for (std::size_t i = 0; i < damage.messages.size() && i < shown; ++i)
    std::cerr << "speedlab: warning: " << damage.messages[i] << '\n';
  if (damage.messages.size() > shown)
    std::cerr << fmt::format("speedlab: warning: ... and {} more (all are among the analysis notes)\n",
                             damage.messages.size() - shown);
  if (!damage.nothing_valid) return true;
  std::cerr << fmt::format("speedlab: error: {}: no valid profile stream or summary left to analyse ({} problem(s) "
                           "above){}\n",
                           dir, damage.messages.size(), writes ? "; no report is written" : "");
  return false;
}

// The points in the folder's results.json (the json report of an earlier `run` or `report`);
// nullopt when there is none or it cannot be read (then it is only replaced).
std::optional<std::size_t> results_json_points(const std::filesystem::path& dir) {
  std::ifstream in(dir / "results.json");
  if (!in) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(in);
    if (j.is_object() && j.contains("points") && j["points"].is_array()) return j["points"].size();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// True, said on stderr, when the reports would be rewritten from fewer points than
// results.json holds (results.jsonl cut or damaged): the last complete copy is not replaced
// by less unless --force.
bool shrinks_results_json(const saved_run& saved) {
  if (!std::filesystem::exists(saved.dir / layout::results)) return false; // read from results.json itself
  const auto before = results_json_points(saved.dir);
  if (!before || saved.points.size() >= *before) return false;
  std::cerr << fmt::format(
      "speedlab: error: {} yields {} points, fewer than the {} in {}; results.json and the reports "
      "are not rewritten from it{}; `speedlab report --force` rewrites them from the {} points\n",
      (saved.dir / layout::results).string(), saved.points.size(), *before, (saved.dir / "results.json").string(),
      saved.warnings.empty() ? "" : " (what it skipped is named above)", saved.points.size());
  return true;
}

} // namespace

int command_report(const report_options& options) {
  const std::vector<std::string> formats =
      reports::canonical_formats(options.formats.empty() ? reports::reporter_names() : options.formats);
  check_names(formats, reports::reporter_names(), "report format");
  // A run writing into the folder owns it; the lock goes first so that its message shows.
  std::optional<folder_lock> lock;
  if (std::filesystem::is_directory(options.dir)) lock.emplace(options.dir);
  if (is_profile_folder(options.dir)) { // `speedlab profile`'s folder: profile.json and the streams
    if (options.summary) {
      for (const auto& f : write_profile_summaries(options.dir)) std::cout << f.string() << '\n';
      return exit_ok;
    }
    profile_damage damage;
    const auto written = report_profile_folder(options.dir, formats, &damage);
    if (!said_damage(options.dir, damage, true)) return exit_usage;
    for (const auto& f : written.files) std::cout << f.string() << '\n';
    return written.failed ? exit_failures : exit_ok;
  }
  if (options.summary) {
    std::cerr << fmt::format("speedlab: error: {}: --summary is for a profile folder (speedlab profile's, with "
                             "profile.json); this is not one\n",
                             options.dir);
    return exit_usage;
  }
  const auto saved = load_for_reading(options.dir);
  if (!saved) return exit_usage;
  if (!options.force && shrinks_results_json(*saved)) return exit_usage;
  const auto result = analyze_saved(*saved);
  const auto written = write_reports(*saved, result, formats);
  for (const auto& f : written.files) std::cout << f.string() << '\n';
  return written.failed ? exit_failures : exit_ok;
}

int command_analyze(const analyze_options& options) {
  if (is_profile_folder(options.dir)) {
    profile_damage damage;
    const analysis::program_analysis program = analyze_profile_folder(options.dir, &damage);
    if (!said_damage(options.dir, damage, false)) return exit_usage;
    if (options.json) {
      std::cout << analyze_profile_json(program).dump(2) << '\n';
      return exit_ok;
    }
    std::cout << program_summary(program) << '\n';
    print_findings(program.result);
    return exit_ok;
  }
  const auto loaded = load_for_reading(options.dir);
  if (!loaded) return exit_usage;
  const saved_run& saved = *loaded;
  const auto result = analyze_saved(saved);
  if (options.json) {
    std::cout << nlohmann::json(result).dump(2) << '\n';
    return exit_ok;
  }
  std::cout << terminal_summary(saved.points, result) << '\n';
  print_findings(result);
  // Along each size axis (the others fixed, in brackets) and, with several, their product.
  for (const auto& f : result.fits)
    if (f.basis == "total")
      std::cout << fmt::format("fit {} {} along {} [{}]: {} ns + {} ns/{}, r2 {:.3f}, {} points\n", f.workload,
                               f.variant, f.size_param, f.params_key, format::sig(f.fixed_ns, 4),
                               format::sig(f.per_unit_ns, 4), f.size_param, f.r2, f.points);
  for (const auto& c : result.crossovers)
    std::cout << fmt::format("crossover {} {} vs {} along {} [{}] ({}): {}{}\n", c.workload, c.variant, c.baseline,
                             c.size_param, c.params_key, c.with_transfers ? "with transfers" : "kernels only",
                             c.size ? fmt::format("{} = {} [{}, {}]", c.size_param, format::sig(*c.size, 4),
                                                    format::sig(c.size_low, 4), format::sig(c.size_high, 4))
                                     : "none",
                             c.note.empty() ? "" : " (" + c.note + ")");
  return exit_ok;
}

int command_calibrate(const calibrate_options_cli& options) {
  const analysis::device_model model = calibrate_now(options.full, !options.no_cache);
  if (options.json) {
    std::cout << nlohmann::json(model).dump(2) << '\n';
    return exit_ok;
  }
  std::cout << (model.gpu_name.empty() ? "GPU: none\n" : "GPU: " + model.gpu_name + "\n");
  auto print = [](const char* title, const std::map<std::string, analysis::ceiling>& m) {
    for (const auto& [name, c] : m)
      std::cout << fmt::format("  {:<6} {:<22} {:>12} {:<8} {} ({})\n", title, name, format::sig(c.value, 4), c.unit,
                               c.measured ? "measured" : "estimate", c.source);
  };
  print("gpu", model.gpu);
  print("host", model.host);
  return exit_ok;
}

} // namespace speedlab::app
