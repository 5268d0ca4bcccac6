#include "app/runner.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/nvtx_phase.hpp"
#include "model/statistics.hpp"
#include "profilers/profiler.hpp"
#include "analysis/time_split.hpp"

namespace speedlab::app {
namespace {

using clock_type = std::chrono::steady_clock;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count());
}

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string params_label(const std::map<std::string, std::string>& params) {
  std::string s;
  for (const auto& [k, v] : params) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

// Times one phase on the steady clock inside an NVTX range; returns [start, end].
template <class Fn>
std::pair<std::uint64_t, std::uint64_t> timed_phase(const std::string& label, const char* phase, Fn&& fn) {
  nvtx_range range(label + ": " + phase);
  const std::uint64_t start = now_ns();
  fn();
  return {start, now_ns()};
}

validation_record to_record(const validation& v) { return {true, v.ok, v.message, v.max_error}; }

// Where report_timing() writes: the measured repetition in progress, else nowhere (warm-up
// and validation timings are not kept). Points run one at a time per process.
std::map<std::string, double>* g_repetition_timings = nullptr;

void timing_sink(const char* name, double ns) {
  if (g_repetition_timings && name) (*g_repetition_timings)[name] = ns;
}

struct timing_scope {
  explicit timing_scope(std::map<std::string, double>* target) { g_repetition_timings = target; }
  ~timing_scope() { g_repetition_timings = nullptr; }
  timing_scope(const timing_scope&) = delete;
  timing_scope& operator=(const timing_scope&) = delete;
};

} // namespace

run_context make_run_context(int threads, bool self_timing) {
  run_context c{threads, 0, &plugin_range_push, &plugin_range_pop};
  c.self_timing = self_timing;
  c.timing_sink = &timing_sink;
  return c;
}

std::string point_id(const std::string& workload, const std::string& variant,
                     const std::map<std::string, std::string>& params) {
  return workload + "/" + variant + "/" + params_label(params);
}

std::string safe_file_name(const std::string& id) {
  std::string out;
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return out;
}

std::string stop_reason(const measure_options& m, const std::vector<double>& samples_ns, double elapsed_s) {
  const std::size_t n = samples_ns.size();
  if (n >= m.max_samples) return fmt::format("max_samples ({}) reached", m.max_samples);
  if (elapsed_s >= m.max_time_s && n >= 1) return fmt::format("max_time ({} s) reached", m.max_time_s);
  if (n >= m.min_samples && elapsed_s >= m.min_time_s) {
    const double noise = stats::summarize(samples_ns).relative_noise();
    if (noise <= m.target_noise)
      return fmt::format("converged: median CI half-width {:.2f}% <= {:.2f}%", 100 * noise, 100 * m.target_noise);
  }
  return {};
}

point_result measure_point(const run_request& req) {
  const auto& w = *req.workload;
  const auto& v = *req.variant;
  const auto& m = req.point.measure;
  point_result r;
  r.workload = w.info.name;
  r.variant = v.name;
  r.kind = to_string(v.kind);
  r.params = req.point.params;
  r.id = point_id(r.workload, r.variant, r.params);
  r.expected_invalid = v.expected_invalid;
  r.threads = v.kind == variant_kind::threads ? req.threads : 1;
  r.started_unix_s = unix_now_s();
  const auto point_start = clock_type::now();
  auto progress = [&](const std::string& phase) {
    if (req.progress) req.progress(phase);
  };
  const point p(r.params);
  const std::string label = fmt::format("{}/{} {}", r.workload, r.variant, params_label(r.params));

  auto finish = [&](point_status status, std::string reason) {
    r.status = status;
    r.reason = std::move(reason);
    r.duration_s = std::chrono::duration<double>(clock_type::now() - point_start).count();
    return r;
  };

  try {
    if (v.unavailable_reason) {
      if (std::string why = v.unavailable_reason(); !why.empty()) return finish(point_status::skipped, why);
    }
    const work_model wm = v.work ? v.work(p) : (w.info.work ? w.info.work(p) : work_model{});
    r.work = {wm.bytes_read, wm.bytes_written, wm.flops, wm.items, wm.host_to_device_bytes, wm.device_to_host_bytes,
              wm.fp64};

    // Profiler sessions: an unavailable backend is noted once and the run goes on.
    std::vector<std::unique_ptr<profiling::session>> sessions;
    std::vector<std::string> session_names;
    // Sessions that replay kernels (counters): one unmeasured repetition of their own, after
    // the timed sessions are collected, so they never distort a timing.
    std::vector<std::unique_ptr<profiling::session>> pass_sessions;
    std::vector<std::string> pass_names;
    for (const auto& name : req.profilers) {
      auto prof = profiling::make_profiler(name);
      if (!prof) {
        r.profiler_messages.push_back(fmt::format("profiler '{}' is not built into this speedlab", name));
        continue;
      }
      if (std::string why = prof->unavailable_reason(); !why.empty()) {
        r.profiler_messages.push_back(fmt::format("{}: {}", name, why));
        continue;
      }
      try {
        auto s = prof->create_session(req.profiler_options);
        if (s->own_pass()) {
          pass_sessions.push_back(std::move(s));
          pass_names.push_back(name);
        } else {
          sessions.push_back(std::move(s));
          session_names.push_back(name);
        }
      } catch (const std::exception& e) {
        r.profiler_messages.push_back(fmt::format("{}: could not start: {}", name, e.what()));
      }
    }

    const run_context ctx = make_run_context(r.threads, req.self_timing);
    std::unique_ptr<variant_run> run;
    std::map<std::string, std::vector<double>> phase_ns;
    progress("setup");
    {
      auto [s, e] = timed_phase(label, "setup", [&] { run = v.create(p, ctx); run->setup(); });
      phase_ns["setup"].push_back(static_cast<double>(e - s));
    }

    std::vector<trace::repetition_window> windows; // the runner's own timers, for the time split
    auto repetition = [&](bool measured) {
      std::map<std::string, double> timings;
      const timing_scope scope(measured ? &timings : nullptr);
      const std::uint64_t start = now_ns();
      auto [s1, e1] = timed_phase(label, "transfer_in", [&] { run->transfer_in(); });
      auto [s2, e2] = timed_phase(label, "compute", [&] { run->compute(); });
      auto [s3, e3] = timed_phase(label, "transfer_out", [&] { run->transfer_out(); });
      const std::uint64_t end = now_ns();
      if (measured) {
        for (const auto& [name, ns] : timings) {
          auto& series = r.self_timed_ns[name];
          series.resize(r.samples_ns.size(), 0.0); // repetitions that reported none
          series.push_back(ns);
        }
        phase_ns["transfer_in"].push_back(static_cast<double>(e1 - s1));
        phase_ns["compute"].push_back(static_cast<double>(e2 - s2));
        phase_ns["transfer_out"].push_back(static_cast<double>(e3 - s3));
        windows.push_back({start, end, e1, e2});
        r.samples_ns.push_back(static_cast<double>(end - start));
      }
    };
    auto validate = [&]() {
      progress("validate");
      validation result;
      auto [s, e] = timed_phase(label, "validate", [&] { result = run->validate(); });
      phase_ns["validate"].push_back(static_cast<double>(e - s));
      return to_record(result);
    };

    // Warm-up: module loading, first-touch and caches stay out of the numbers.
    const auto warm_start = clock_type::now();
    for (std::size_t i = 0;; ++i) {
      const double elapsed = std::chrono::duration<double>(clock_type::now() - warm_start).count();
      if (i >= m.warmup_runs && elapsed >= m.warmup_min_time_s) break;
      if (elapsed >= m.max_time_s && i >= 1) break;
      progress("warmup");
      repetition(false);
      ++r.warmup_runs;
    }

    for (auto& s : sessions) s->start();
    const auto measure_start = clock_type::now();
    std::optional<validation_record> failed_first;
    for (;;) {
      progress("measure");
      for (auto& s : sessions) s->repetition_begin();
      repetition(true);
      for (auto& s : sessions) s->repetition_end();
      if (r.samples_ns.size() == 1) {
        // Validation runs inside the session but outside every repetition window, so the
        // time split never counts it.
        r.first_validation = validate();
        if (!r.first_validation.ok) {
          r.stop_reason = "first validation failed";
          break;
        }
      }
      const double elapsed = std::chrono::duration<double>(clock_type::now() - measure_start).count();
      r.stop_reason = stop_reason(m, r.samples_ns, elapsed);
      if (!r.stop_reason.empty()) break;
    }
    if (r.first_validation.ok) r.last_validation = r.samples_ns.size() > 1 ? validate() : r.first_validation;
    for (auto& s : sessions) s->stop();
    for (auto& [name, series] : r.self_timed_ns) series.resize(r.samples_ns.size(), 0.0);

    // Collect what the profilers saw.
    profiling::profile_data data;
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      try {
        sessions[i]->collect(data);
      } catch (const std::exception& e) {
        data.messages.push_back(fmt::format("{}: collect failed: {}", session_names[i], e.what()));
      }
    }
    sessions.clear();
    for (auto& msg : data.messages) r.profiler_messages.push_back(std::move(msg));
    if (!data.host.empty()) {
      std::vector<double> util;
      for (const auto& h : data.host)
        if (h.wall_ns > 0) util.push_back(static_cast<double>(h.process_cpu_ns) / static_cast<double>(h.wall_ns));
      r.cpu_utilization = stats::quantile(std::move(util), 0.5);
    }
    data.device.repetitions = std::move(windows);
    r.dropped_records = data.device.dropped_records;
    if (data.device.has_gpu_activity()) {
      r.profiler = data.device.backend;
      r.splits = analysis::compute_time_splits(data.device);
      if (!r.splits.empty()) {
        const auto summary = analysis::summarize_time_splits(r.splits);
        r.split_median = summary.median;
        r.split_q1 = summary.q1;
        r.split_q3 = summary.q3;
      }
      if (!req.output_dir.empty()) {
        const auto dir = req.output_dir / "traces";
        std::filesystem::create_directories(dir);
        const std::string file = safe_file_name(r.id) + ".json";
        std::ofstream out(dir / file);
        out << nlohmann::json(data.device).dump();
        if (out) r.trace_file = "traces/" + file;
      }
    }

    for (std::size_t i = 0; i < pass_sessions.size(); ++i) {
      progress("counters");
      profiling::profile_data pass;
      try {
        pass_sessions[i]->start();
        repetition(false);
        pass_sessions[i]->stop();
        pass_sessions[i]->collect(pass);
      } catch (const std::exception& e) {
        pass.messages.push_back(fmt::format("{}: its pass failed: {}", pass_names[i], e.what()));
      }
      pass_sessions[i].reset();
      for (auto& msg : pass.messages) r.profiler_messages.push_back(std::move(msg));
      if (pass.counters && !r.counters) r.counters = std::move(pass.counters);
    }

    progress("teardown");
    {
      auto [s, e] = timed_phase(label, "teardown", [&] { run->teardown(); run.reset(); });
      phase_ns["teardown"].push_back(static_cast<double>(e - s));
    }
    for (const auto& [phase, values] : phase_ns) r.phase_median_ns[phase] = stats::quantile(values, 0.5);
    r.wall = stats::summarize(r.samples_ns);

    const bool valid = r.first_validation.ok && r.last_validation.ok;
    if (!valid) {
      const auto& bad = r.first_validation.ok ? r.last_validation : r.first_validation;
      return finish(point_status::invalid, "validation failed: " + bad.message);
    }
    return finish(point_status::ok, {});
  } catch (const std::exception& e) {
    return finish(point_status::failed, std::string("exception: ") + e.what());
  } catch (...) {
    return finish(point_status::failed, "a non-standard exception was thrown");
  }
}

} // namespace speedlab::app
