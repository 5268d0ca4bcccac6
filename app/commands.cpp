#include "app/commands.hpp"

#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.hpp"
#include "device/host_info.hpp"
#include "app/device_step.hpp"
#include "app/isolation.hpp"
#include "app/output_folder.hpp"
#include "app/plugin_loader.hpp"
#include "app/progress.hpp"
#include "app/terminal_summary.hpp"
#include "profilers/profiler.hpp"
#include "reports/reporter.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {
namespace {

// The `cupti:` settings that differ from the defaults, for the run's notes (empty if none).
std::string cupti_options_note(const profiling::profiler_options& o) {
  const profiling::profiler_options d;
  std::vector<std::string> parts;
  if (o.buffer_bytes != d.buffer_bytes) parts.push_back(fmt::format("buffer_mib={:g}", static_cast<double>(o.buffer_bytes) / 1048576.0));
  if (o.max_buffer_bytes != d.max_buffer_bytes)
    parts.push_back(fmt::format("max_buffer_mib={:g}", static_cast<double>(o.max_buffer_bytes) / 1048576.0));
  if (o.api_records != d.api_records) parts.push_back(fmt::format("api_records={}", o.api_records));
  if (o.driver_api != d.driver_api) parts.push_back(fmt::format("driver_api={}", o.driver_api));
  if (o.launches != d.launches)
    parts.push_back(std::string("launch_records=") +
                    (o.launches == profiling::profiler_options::launch_mode::callback ? "callback" : "none"));
  if (o.clock != d.clock) parts.push_back("clock=offset");
  if (parts.empty()) return {};
  std::string s = "cupti options:";
  for (const auto& p : parts) s += " " + p;
  if (!o.api_records) s += " (no CUDA API records: API and sync time count as host time)";
  return s;
}

void load_plugins(plugin_registry& registry, const std::vector<std::string>& cli_paths) {
  const auto paths = plugin_search_path(cli_paths);
  if (paths.empty()) std::cerr << "speedlab: warning: no plugin folder found (use --plugin-path or SPEEDLAB_PLUGIN_PATH)\n";
  for (const auto& p : paths) {
    if (std::filesystem::is_regular_file(p)) registry.load_file(p);
    else registry.load_directory(p);
  }
  for (const auto& e : registry.errors()) std::cerr << "speedlab: plugin " << e.file.string() << ": " << e.message << '\n';
}

bool counts_as_failure(const point_result& p) {
  if (p.status == point_status::ok || p.status == point_status::skipped) return false;
  if (p.status == point_status::invalid && p.expected_invalid) return false; // caught, as it should be
  return true;
}

// Analysis plus every requested reporter; returns the files written.
std::vector<std::filesystem::path> write_reports(const saved_run& saved, const analysis::analysis_result& result,
                                                 const std::vector<std::string>& formats) {
  reports::report_input input{saved.run, saved.points, result,
                              [&saved](const point_result& p) { return load_point_trace(saved.dir, p); }};
  std::vector<std::filesystem::path> written;
  for (const auto& name : formats) {
    auto reporter = reports::make_reporter(name);
    if (!reporter) {
      std::cerr << fmt::format("speedlab: unknown report format '{}'; valid formats: {}\n", name,
                               fmt::join(reports::reporter_names(), ", "));
      continue;
    }
    try {
      for (auto& f : reporter->write(input, saved.dir)) written.push_back(std::move(f));
    } catch (const std::exception& e) {
      std::cerr << fmt::format("speedlab: report '{}' failed: {}\n", name, e.what());
    }
  }
  return written;
}

analysis::analysis_result analyze_saved(const saved_run& saved) {
  const analysis::device_model device = saved.device.value_or(analysis::device_model{});
  return analysis::analyze(saved.points, device,
                           [&saved](const point_result& p) { return load_point_trace(saved.dir, p); });
}

void check_names(const std::vector<std::string>& wanted, const std::vector<std::string>& valid, const char* what) {
  for (const auto& w : wanted)
    if (std::find(valid.begin(), valid.end(), w) == valid.end()) {
      const std::string hint = did_you_mean(w, valid);
      throw config_error(fmt::format("unknown {} '{}'{}; valid: {}", what, w,
                                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), fmt::join(valid, ", ")));
    }
}

} // namespace

int command_list(const list_options& options) {
  plugin_registry registry;
  load_plugins(registry, options.plugin_paths);
  nlohmann::json j = nlohmann::json::array();
  std::string text;
  for (const auto& [name, w] : registry.workloads()) {
    nlohmann::json jw{{"name", name}, {"description", w.info.description}, {"plugin", w.file.string()}};
    text += fmt::format("{}  {}\n  plugin: {}\n  parameters:\n", name, w.info.description, w.file.filename().string());
    for (const auto& p : w.info.parameters) {
      const char* type = p.type == param_type::integer ? "integer" : p.type == param_type::real ? "real" : "text";
      jw["parameters"].push_back({{"name", p.name}, {"type", type}, {"description", p.description},
                                  {"default", p.default_value}, {"sweep", p.default_sweep}, {"choices", p.choices}});
      text += fmt::format("    {:<12} {:<8} default {:<10} {}{}{}\n", p.name, type, p.default_value, p.description,
                          p.default_sweep.empty() ? "" : fmt::format("; sweep {}", p.default_sweep),
                          p.choices.empty() ? "" : fmt::format("; one of {}", fmt::join(p.choices, ", ")));
    }
    text += "  variants:\n";
    for (const auto& v : w.info.variants) {
      std::string why;
      try {
        if (v.unavailable_reason) why = v.unavailable_reason();
      } catch (const std::exception& e) {
        why = e.what();
      }
      jw["variants"].push_back({{"name", v.name}, {"kind", to_string(v.kind)}, {"description", v.description},
                                {"available", why.empty()}, {"unavailable_reason", why},
                                {"expected_invalid", v.expected_invalid}});
      text += fmt::format("    {:<14} {:<8} {}{}{}\n", v.name, to_string(v.kind), v.description,
                          v.expected_invalid ? " [wrong on purpose]" : "",
                          why.empty() ? "" : fmt::format("\n    {:<14} {:<8} cannot run here: {}", "", "", why));
    }
    text += "\n";
    j.push_back(std::move(jw));
  }
  if (options.json) {
    nlohmann::json out{{"workloads", j}, {"errors", nlohmann::json::array()}};
    for (const auto& e : registry.errors()) out["errors"].push_back({{"file", e.file.string()}, {"message", e.message}});
    std::cout << out.dump(2) << '\n';
  } else {
    std::cout << (text.empty() ? "no workloads loaded\n" : text);
  }
  return registry.errors().empty() ? exit_ok : exit_failures;
}

int command_run(const run_options& options) {
  suite_config suite = options.suite_file ? load_suite_file(*options.suite_file)
                                          : parse_suite(default_suite_yaml(), "<built-in default suite>");
  apply_overrides(suite, options.overrides);
  // A backend this build left out is a note, so one suite serves every build; an unknown
  // name stays an error (check_names below).
  std::erase_if(suite.profilers, [](const std::string& name) {
    const std::string why = profiling::profiler_not_built_reason(name);
    if (!why.empty())
      std::cerr << fmt::format("speedlab: note: profiler '{}' is not in this build ({}); running without it\n", name, why);
    return !why.empty();
  });
  check_names(suite.profilers, profiling::profiler_names(), "profiler");
  check_names(suite.reports, reports::reporter_names(), "report format");

  plugin_registry registry;
  load_plugins(registry, options.plugin_paths);
  if (!options.suite_file && options.overrides.workloads.empty()) {
    // The built-in suite names every lesson; a plugin that is not built here is left out.
    std::erase_if(suite.workloads, [&](const workload_request& w) {
      if (registry.find(w.name)) return false;
      std::cerr << fmt::format("speedlab: note: workload '{}' of the default suite is not loaded; skipping it\n", w.name);
      return true;
    });
  }
  const std::vector<planned_point> points = plan_points(suite, registry);
  if (points.empty()) throw config_error("the suite has no points to run");

  const std::filesystem::path out = suite.output;
  std::filesystem::create_directories(out);
  std::filesystem::remove_all(out / "traces");
  results_writer writer(out);

  run_info info;
  info.speedlab_version = SPEEDLAB_VERSION;
  info.started_at = device::iso_utc_now();
  info.hostname = device::host_name();
  info.cpu_model = device::read_cpuinfo().model;
  info.cpu_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  info.command_line = options.command_line;
  info.suite = suite.source;
  info.profilers = suite.profilers;
  const int threads = suite.threads > 0 ? suite.threads : info.cpu_cores;

  std::cerr << fmt::format("speedlab: {} points from {} (output: {}, {})\n", points.size(), suite.source, out.string(),
                           suite.isolate ? "each point in its own process" : "in-process");
  const auto started = std::chrono::steady_clock::now();
  progress_display progress(points.size(), stderr_is_terminal());
  std::vector<point_result> results;
  std::set<std::string> notes;
  if (std::string o = cupti_options_note(suite.profiler_options); !o.empty()) notes.insert(o);
  if (std::find(suite.profilers.begin(), suite.profilers.end(), "counters") != suite.profilers.end())
    notes.insert(fmt::format("counters: metric set '{}', the first {} launch(es) of each distinct (kernel, grid, "
                             "block), read in one unmeasured repetition after the timed ones",
                             suite.profiler_options.metric_set, suite.profiler_options.counters_per_kernel));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& pp = points[i];
    const loaded_workload* w = registry.find(pp.workload);
    run_request req{w, w->find_variant(pp.variant), pp, threads, suite.profilers, suite.self_timing,
                    suite.profiler_options, out, {}};
    progress.starting(i, point_id(pp.workload, pp.variant, pp.params));
    point_result r = suite.isolate ? run_isolated(req, suite.timeout_s) : measure_point(req);
    writer.append(r);
    for (const auto& m : r.profiler_messages) notes.insert(m);
    progress.finished(i, r);
    results.push_back(std::move(r));
  }
  progress.done();
  info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  info.notes.assign(notes.begin(), notes.end());
  for (const auto& n : info.notes) std::cerr << "speedlab: note: " << n << '\n';

  // Device and host ceilings for the analysis, measured in a child (CUDA stays out of this process).
  saved_run saved;
  saved.dir = out;
  saved.points = results;
  saved.device = obtain_device_model(suite.calibrate, out, suite.timeout_s);
  if (saved.device) info.gpu_name = saved.device->gpu_name;
  saved.run = info;
  write_json_file(out / "run.json", nlohmann::json(info));

  const analysis::analysis_result result = analyze_saved(saved);
  std::cout << terminal_summary(results, result);
  const auto files = write_reports(saved, result, suite.reports);
  std::cout << "\nwritten to " << out.string() << ": results.jsonl, run.json";
  for (const auto& f : files) std::cout << ", " << f.filename().string();
  std::cout << '\n';

  std::size_t failures = 0;
  for (const auto& r : results) failures += counts_as_failure(r) ? 1 : 0;
  if (failures) std::cerr << fmt::format("speedlab: {} of {} points failed or were invalid\n", failures, results.size());
  return failures ? exit_failures : exit_ok;
}

int command_report(const report_options& options) {
  saved_run saved = load_run(options.dir);
  for (const auto& w : saved.warnings) std::cerr << "speedlab: warning: " << w << '\n';
  std::vector<std::string> formats = options.formats.empty() ? reports::reporter_names() : options.formats;
  check_names(formats, reports::reporter_names(), "report format");
  const auto result = analyze_saved(saved);
  const auto files = write_reports(saved, result, formats);
  for (const auto& f : files) std::cout << f.string() << '\n';
  return exit_ok;
}

int command_analyze(const analyze_options& options) {
  saved_run saved = load_run(options.dir);
  for (const auto& w : saved.warnings) std::cerr << "speedlab: warning: " << w << '\n';
  const auto result = analyze_saved(saved);
  if (options.json) {
    std::cout << nlohmann::json(result).dump(2) << '\n';
    return exit_ok;
  }
  std::cout << terminal_summary(saved.points, result) << '\n';
  for (const auto& f : result.findings) {
    std::cout << fmt::format("[{}] {} ({}{})\n", f.severity, f.title, f.rule, f.point_id.empty() ? "" : ", " + f.point_id);
    for (const auto& e : f.evidence) std::cout << fmt::format("    {}: {}\n", e.name, e.value);
    std::cout << fmt::format("    why: {}\n    next: {}\n", f.explanation, f.next_experiment);
  }
  for (const auto& c : result.crossovers)
    std::cout << fmt::format("crossover {} {} vs {} ({}): {}{}\n", c.workload, c.variant, c.baseline,
                             c.with_transfers ? "with transfers" : "kernels only",
                             c.size ? fmt::format("{} = {:.4g} [{:.4g}, {:.4g}]", c.size_param, *c.size, c.size_low, c.size_high) : "none",
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
      std::cout << fmt::format("  {:<6} {:<22} {:>12.4g} {:<8} {} ({})\n", title, name, c.value, c.unit,
                               c.measured ? "measured" : "estimate", c.source);
  };
  print("gpu", model.gpu);
  print("host", model.host);
  return exit_ok;
}

} // namespace speedlab::app
