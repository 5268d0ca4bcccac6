#include "app/run/runner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analysis/time_split.hpp"
#include "app/run/nvtx_phase.hpp"
#include "app/run/output_folder.hpp"
#include "app/run/point_tracing.hpp"
#include "app/suite/stopping.hpp"
#include "model/statistics.hpp"
#include "profilers/profiler.hpp"

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

// point_device_tracing(): set for the point being measured when its device-tracing session started.
const profiling::profiler_options* g_device_tracing = nullptr;

struct tracing_scope {
  explicit tracing_scope(const profiling::profiler_options* options) { g_device_tracing = options; }
  ~tracing_scope() { g_device_tracing = nullptr; }
  tracing_scope(const tracing_scope&) = delete;
  tracing_scope& operator=(const tracing_scope&) = delete;
};

struct timing_scope {
  explicit timing_scope(std::map<std::string, double>* target) { g_repetition_timings = target; }
  ~timing_scope() { g_repetition_timings = nullptr; }
  timing_scope(const timing_scope&) = delete;
  timing_scope& operator=(const timing_scope&) = delete;
};

} // namespace

const profiling::profiler_options* point_device_tracing() { return g_device_tracing; }

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

namespace {

// The profiler sessions of one point; an unavailable backend is noted once and the run goes on.
class profiler_sessions {
public:
  profiler_sessions(const run_request& req, std::vector<std::string>& messages) {
    for (const auto& name : req.profilers) {
      auto prof = profiling::make_profiler(name);
      if (!prof) {
        if (!req.own_process_pass) messages.push_back(fmt::format("profiler '{}' is not built into this speedlab", name));
        continue;
      }
      // The point's process and the own-process pass each take only their backends.
      if (prof->own_process() != req.own_process_pass) continue;
      if (std::string why = prof->unavailable_reason(); !why.empty()) {
        messages.push_back(fmt::format("{}: {}", name, why));
        continue;
      }
      try {
        auto s = prof->create_session(req.profiler_options);
        if (s->own_pass()) {
          m_pass_sessions.push_back(std::move(s));
          m_pass_names.push_back(name);
        } else {
          m_sessions.push_back(std::move(s));
          m_names.push_back(name);
        }
      } catch (const std::exception& e) {
        messages.push_back(fmt::format("{}: could not start: {}", name, e.what()));
      }
    }
  }
  template <class Fn>
  void each(Fn&& fn) {
    for (auto& s : m_sessions) fn(*s);
  }
  // A session that records the device trace runs (backend_entry::traces_device).
  bool traces_device() const {
    return std::any_of(m_names.begin(), m_names.end(), [](const std::string& name) {
      const auto* b = profiling::find_backend(name);
      return b && b->traces_device;
    });
  }
  // What the sessions saw; a failing collect is a message, not the end of the point.
  profiling::profile_data collect() {
    profiling::profile_data data;
    for (std::size_t i = 0; i < m_sessions.size(); ++i) {
      try {
        m_sessions[i]->collect(data);
      } catch (const std::exception& e) {
        data.messages.push_back(fmt::format("{}: collect failed: {}", m_names[i], e.what()));
      }
    }
    m_sessions.clear();
    return data;
  }
  // Sessions that read kernels in a pass (session::own_pass): each gets one unmeasured repetition of its own,
  // after the timed sessions are collected, so they never distort a timing.
  template <class Fn>
  void own_passes(point_result& r, Fn&& repetition) {
    for (std::size_t i = 0; i < m_pass_sessions.size(); ++i) {
      profiling::profile_data pass;
      try {
        m_pass_sessions[i]->start();
        for (std::size_t k = 0; k < m_pass_sessions[i]->pass_repetitions(); ++k) {
          repetition(m_pass_names[i]);
          m_pass_sessions[i]->repetition_end();
        }
        m_pass_sessions[i]->stop();
        m_pass_sessions[i]->collect(pass);
      } catch (const std::exception& e) {
        pass.messages.push_back(fmt::format("{}: its pass failed: {}", m_pass_names[i], e.what()));
      }
      m_pass_sessions[i].reset();
      for (auto& msg : pass.messages) r.profiler_messages.push_back(std::move(msg));
      r.sections.add_missing(std::move(pass.sections));
    }
    m_pass_sessions.clear();
  }

private:
  std::vector<std::unique_ptr<profiling::session>> m_sessions;
  std::vector<std::string> m_names;
  std::vector<std::unique_ptr<profiling::session>> m_pass_sessions;
  std::vector<std::string> m_pass_names;
};

// One point's variant from setup to teardown: warm-up, the measured repetitions under the
// stopping rule, validation of the first and last; the phases' times and the repetition
// windows for the time split.
class point_run {
public:
  point_run(const run_request& req, point_result& r)
      : m_req(req), m_r(r), m_point(r.params),
        m_label(fmt::format("{}/{} {}", r.workload, r.variant, params_label(r.params))),
        m_stopping(find_stopping_criterion(req.point.measure.stopping)) {}

  void setup() {
    progress("setup");
    const run_context ctx = make_run_context(m_r.threads, m_req.self_timing);
    phase("setup", [&] { m_run = m_req.variant->create(m_point, ctx); m_run->setup(); });
  }

  // Warm-up: module loading, first-touch and caches stay out of the numbers.
  void warm_up() {
    const auto& m = m_req.point.measure;
    const auto start = clock_type::now();
    for (std::size_t i = 0;; ++i) {
      const double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
      if (i >= m.warmup_runs && elapsed >= m.warmup_min_time_s) break;
      if (past_time_limit(m, elapsed, i)) break;
      progress("warmup");
      repetition(false);
      ++m_r.warmup_runs;
    }
  }

  void warm_up_once() {
    progress("warmup");
    repetition(false);
  }

  void measure(profiler_sessions& sessions) {
    m_sessions_begin = now_ns();
    sessions.each([](profiling::session& s) { s.start(); });
    while (measured_step(sessions)) {
      m_r.stop_reason = stop_check();
      if (!m_r.stop_reason.empty()) break;
    }
    end_measure();
    sessions.each([](profiling::session& s) { s.stop(); });
    m_sessions_end = now_ns();
  }

  // One measured repetition inside the sessions; the first is validated (inside the sessions
  // but outside every repetition window, so the time split never counts it). False when that
  // validation failed. Its time, with the validation's, counts towards the stopping rule.
  bool measured_step(profiler_sessions& sessions) {
    const auto start = clock_type::now();
    progress("measure");
    sessions.each([](profiling::session& s) { s.repetition_begin(); });
    repetition(true);
    sessions.each([](profiling::session& s) { s.repetition_end(); });
    bool ok = true;
    if (m_r.samples_ns.size() == 1) {
      m_r.first_validation = validate();
      if (!m_r.first_validation.ok) {
        m_r.stop_reason = "first validation failed";
        ok = false;
      }
    }
    m_measure_s += std::chrono::duration<double>(clock_type::now() - start).count();
    return ok;
  }

  // The stopping rule (app/suite/stopping.hpp) on this point's own samples and measuring time.
  std::string stop_check() const { return m_stopping.stop_reason(m_req.point.measure, {m_r.samples_ns, m_measure_s}); }
  // The rule's limits, which end the point whatever its partner (measure_point_pair) still needs.
  bool at_limit() const { return !limit_reason(m_req.point.measure, {m_r.samples_ns, m_measure_s}).empty(); }

  // After the last measured repetition: the last validation, the self-timed series aligned.
  void end_measure() {
    if (m_r.first_validation.ok) m_r.last_validation = m_r.samples_ns.size() > 1 ? validate() : m_r.first_validation;
    for (auto& [name, series] : m_r.self_timed_ns) series.resize(m_r.samples_ns.size(), 0.0);
  }

  void set_session_span(std::uint64_t begin, std::uint64_t end) {
    m_sessions_begin = begin;
    m_sessions_end = end;
  }

  // The device records of a variant that works in another process, from the span the
  // sessions ran, into the sessions' data (only when the point's device activity is traced).
  void collect_out_of_process(profiling::profile_data& data) {
    if (!point_device_tracing()) return;
    auto* source = dynamic_cast<out_of_process_trace*>(m_run.get());
    if (!source) return;
    try {
      source->collect_trace(data, m_sessions_begin, m_sessions_end);
    } catch (const std::exception& e) {
      data.messages.push_back(std::string("the variant's own process: its device records were not collected: ") +
                              e.what());
    }
  }

  // The own-pass sessions' repetitions (profiler_sessions::own_passes), after the timed ones.
  void own_passes(profiler_sessions& sessions) {
    sessions.own_passes(m_r, [&](const std::string& backend) {
      progress(backend.c_str());
      repetition(false);
    });
  }

  void teardown() {
    progress("teardown");
    phase("teardown", [&] { m_run->teardown(); m_run.reset(); });
    for (const auto& [name, values] : m_phase_ns) m_r.phase_median_ns[name] = stats::quantile(values, 0.5);
  }

  std::vector<trace::repetition_window> take_windows() { return std::move(m_windows); }

private:
  void progress(const char* phase_name) const {
    if (m_req.progress) m_req.progress(phase_name);
  }

  template <class Fn>
  void phase(const char* name, Fn&& fn) {
    auto [s, e] = timed_phase(m_label, name, std::forward<Fn>(fn));
    m_phase_ns[name].push_back(static_cast<double>(e - s));
  }

  void repetition(bool measured) {
    std::map<std::string, double> timings;
    const timing_scope scope(measured ? &timings : nullptr);
    const std::uint64_t start = now_ns();
    auto [s1, e1] = timed_phase(m_label, "transfer_in", [&] { m_run->transfer_in(); });
    auto [s2, e2] = timed_phase(m_label, "compute", [&] { m_run->compute(); });
    auto [s3, e3] = timed_phase(m_label, "transfer_out", [&] { m_run->transfer_out(); });
    const std::uint64_t end = now_ns();
    if (!measured) return;
    for (const auto& [name, ns] : timings) {
      auto& series = m_r.self_timed_ns[name];
      series.resize(m_r.samples_ns.size(), 0.0); // repetitions that reported none
      series.push_back(ns);
    }
    m_phase_ns["transfer_in"].push_back(static_cast<double>(e1 - s1));
    m_phase_ns["compute"].push_back(static_cast<double>(e2 - s2));
    m_phase_ns["transfer_out"].push_back(static_cast<double>(e3 - s3));
    m_windows.push_back({start, end, e1, e2});
    m_r.samples_ns.push_back(static_cast<double>(end - start));
  }

  validation_record validate() {
    progress("validate");
    validation result;
    phase("validate", [&] { result = m_run->validate(); });
    return to_record(result);
  }

  const run_request& m_req;
  point_result& m_r;
  const point m_point;
  const std::string m_label;
  const stopping_criterion& m_stopping;
  std::unique_ptr<variant_run> m_run;
  std::map<std::string, std::vector<double>> m_phase_ns;
  std::vector<trace::repetition_window> m_windows; // the runner's own timers, for the time split
  std::uint64_t m_sessions_begin = 0, m_sessions_end = 0; // steady clock around the sessions' span
  double m_measure_s = 0; // time in measured repetitions and their validation: the stopping rule's clock
};

// What the profilers saw: CPU utilization, the time split per repetition and its summary,
// and the device trace written to traces/ (output_folder.hpp).
void add_profile(point_result& r, profiling::profile_data data, std::vector<trace::repetition_window> windows,
                 const std::filesystem::path& output_dir) {
  for (auto& msg : data.messages) r.profiler_messages.push_back(std::move(msg));
  r.sections.add_missing(std::move(data.sections)); // each backend's own results
  if (!data.host.empty()) {
    std::vector<double> util;
    for (const auto& h : data.host)
      if (h.wall_ns > 0) util.push_back(static_cast<double>(h.process_cpu_ns) / static_cast<double>(h.wall_ns));
    r.cpu_utilization = stats::quantile(std::move(util), 0.5);
  }
  data.device.repetitions = std::move(windows);
  r.dropped_records = data.device.dropped_records;
  if (!data.device.has_gpu_activity()) return;
  r.profiler = data.device.backend;
  r.splits = analysis::compute_time_splits(data.device);
  if (!r.splits.empty()) {
    const auto summary = analysis::summarize_time_splits(r.splits);
    r.split_median = summary.median;
    r.split_q1 = summary.q1;
    r.split_q3 = summary.q3;
  }
  if (output_dir.empty()) return;
  try {
    r.trace_file = write_point_trace(output_dir, r.id, data.device);
  } catch (const std::exception& e) {
    r.profiler_messages.push_back(std::string("the device trace was not saved: ") + e.what());
  }
}

} // namespace

point_result new_point_result(const run_request& req) {
  const auto& v = *req.variant;
  point_result r;
  r.workload = req.workload->info.name;
  r.variant = v.name;
  r.kind = v.kind;
  r.language = v.language;
  r.params = req.point.params;
  r.size_axes = req.point.size_axes;
  r.id = point_id(r.workload, r.variant, r.params);
  r.expected_invalid = v.expected_invalid;
  r.threads = v.kind == variant_kind::threads ? req.threads : 1;
  return r;
}

// The own-process pass: its sessions exist before setup (they must see every module load);
// one warm-up repetition takes the first-launch costs, then one repetition of their own.
template <class Finish>
static point_result own_process_pass(const run_request& req, point_result& r, Finish& finish) {
  profiler_sessions sessions(req, r.profiler_messages);
  point_run run(req, r);
  run.setup();
  run.warm_up_once();
  run.own_passes(sessions);
  run.teardown();
  return finish(point_status::ok, {});
}

std::vector<std::string> own_process_backends(const run_request& req) {
  std::vector<std::string> names;
  for (const auto& name : req.profilers)
    if (auto prof = profiling::make_profiler(name); prof && prof->own_process()) names.push_back(name);
  return names;
}

bool wants_own_process_pass(const run_request& req) {
  // Only CUDA variants running their kernels in this process have code to sample (a Python
  // variant's kernels run in its worker).
  if (!req.variant || req.variant->kind != variant_kind::cuda || req.variant->language != "c++") return false;
  return !own_process_backends(req).empty();
}

void merge_own_process_pass(point_result& into, const point_result& pass, const run_request& req) {
  for (const auto& msg : pass.profiler_messages) into.profiler_messages.push_back(msg);
  if (pass.status != point_status::ok)
    into.profiler_messages.push_back(fmt::format("{}: its pass in a process of its own ended {}: {}",
                                                 fmt::join(own_process_backends(req), ", "), to_string(pass.status),
                                                 pass.reason));
  into.sections.add_missing(result_sections(pass.sections));
}

namespace {

// The point's record before anything runs: its work model; the reason it cannot run here
// (a skip), or "".
std::string prepare_point(const run_request& req, point_result& r) {
  const auto& w = *req.workload;
  const auto& v = *req.variant;
  if (v.unavailable_reason)
    if (std::string why = v.unavailable_reason(); !why.empty()) return why;
  const point p(r.params);
  const work_model wm = v.work ? v.work(p) : (w.info.work ? w.info.work(p) : work_model{});
  r.work = {wm.bytes_read,           wm.bytes_written,        wm.flops, wm.items,
            wm.host_to_device_bytes, wm.device_to_host_bytes, wm.fp64};
  return {};
}

// Status and reason of a point whose measurement ran to the end.
void settle_status(point_result& r) {
  r.wall = stats::summarize(r.samples_ns);
  if (!r.first_validation.ok || !r.last_validation.ok) {
    const auto& bad = r.first_validation.ok ? r.last_validation : r.first_validation;
    r.status = point_status::invalid;
    r.reason = "validation failed: " + bad.message;
  } else {
    r.status = point_status::ok;
    r.reason.clear();
  }
}

} // namespace

point_result measure_point(const run_request& req) {
  point_result r = new_point_result(req);
  r.started_unix_s = unix_now_s();
  const auto point_start = clock_type::now();
  auto finish = [&](point_status status, std::string reason) {
    r.status = status;
    r.reason = std::move(reason);
    r.duration_s = std::chrono::duration<double>(clock_type::now() - point_start).count();
    return r;
  };

  try {
    if (std::string why = prepare_point(req, r); !why.empty()) return finish(point_status::skipped, why);
    if (req.own_process_pass) return own_process_pass(req, r, finish);
    profiler_sessions sessions(req, r.profiler_messages);
    const tracing_scope tracing(sessions.traces_device() ? &req.profiler_options : nullptr);
    point_run run(req, r);
    run.setup();
    run.warm_up();
    run.measure(sessions);
    profiling::profile_data data = sessions.collect();
    run.collect_out_of_process(data);
    add_profile(r, std::move(data), run.take_windows(), req.output_dir);
    run.own_passes(sessions);
    run.teardown();
    settle_status(r);
    return finish(r.status, r.reason);
  } catch (const point_skipped& e) {
    return finish(point_status::skipped, e.what());
  } catch (const std::exception& e) {
    return finish(point_status::failed, std::string("exception: ") + e.what());
  } catch (...) {
    return finish(point_status::failed, "a non-standard exception was thrown");
  }
}

namespace {

// One side of a pair measured in one process (measure_point_pair).
struct paired_side {
  const run_request* req = nullptr;
  point_result r;
  std::optional<point_run> run;
  clock_type::time_point start;
  bool active = true;            // still measuring
  bool failed = false;           // an exception (or a skip) ended it: status and reason are set
  std::vector<std::size_t> reps; // its repetitions' places among the sessions' (host usage)
};

void end_side(paired_side& s, point_status status, std::string reason) {
  s.r.status = status;
  s.r.reason = std::move(reason);
  s.failed = true;
  s.active = false;
}

// Runs fn for one side; what its plugin throws ends that side alone, as measure_point's
// catch ends a point, and the other side goes on.
template <class Fn>
void on_side(paired_side& s, Fn&& fn) {
  if (s.failed) return;
  try {
    fn();
  } catch (const point_skipped& e) {
    end_side(s, point_status::skipped, e.what());
  } catch (const std::exception& e) {
    end_side(s, point_status::failed, std::string("exception: ") + e.what());
  } catch (...) {
    end_side(s, point_status::failed, "a non-standard exception was thrown");
  }
}

// Which side runs at step k, place o (0 or 1): AB BA AB BA ..., starting with `first`, so a
// linear drift within the process falls on both sides alike.
std::size_t side_at(int first, std::size_t k, int o) {
  return static_cast<std::size_t>(first) ^ (k & 1U) ^ static_cast<std::size_t>(o);
}

// The measured repetitions of both sides, alternating, each side under its own stopping rule;
// a side whose rule says stop goes on while its partner still measures (their samples stay
// interleaved) unless it reached its own limits (max_samples, max_time).
void measure_alternately(std::array<paired_side, 2>& sides, profiler_sessions& sessions, int first) {
  const std::uint64_t begin = now_ns();
  sessions.each([](profiling::session& s) { s.start(); });
  std::size_t rep = 0;
  for (std::size_t k = 0; sides[0].active || sides[1].active; ++k) {
    for (int o = 0; o < 2; ++o) {
      paired_side& s = sides[side_at(first, k, o)];
      if (!s.active) continue;
      on_side(s, [&] {
        const bool ok = s.run->measured_step(sessions);
        s.reps.push_back(rep++);
        if (!ok) s.active = false; // first validation failed: its stop_reason says so
      });
    }
    std::array<std::string, 2> why;
    for (std::size_t i = 0; i < 2; ++i)
      if (sides[i].active) why[i] = sides[i].run->stop_check();
    for (std::size_t i = 0; i < 2; ++i) {
      paired_side &s = sides[i], &other = sides[1 - i];
      if (!s.active || why[i].empty()) continue;
      if (s.run->at_limit() || !other.active || !why[1 - i].empty()) {
        s.r.stop_reason = why[i];
        s.active = false;
      }
    }
  }
  for (auto& s : sides) on_side(s, [&] { s.run->end_measure(); });
  sessions.each([](profiling::session& s) { s.stop(); });
  const std::uint64_t end = now_ns();
  for (auto& s : sides)
    if (s.run) s.run->set_session_span(begin, end);
}

// One side's share of what the sessions saw: every record (the device trace holds both sides'
// activity; its time split counts only this side's repetition windows) and its own
// repetitions' host usage.
profiling::profile_data side_share(const profiling::profile_data& all, const paired_side& s) {
  profiling::profile_data d;
  d.device = all.device;
  d.messages = all.messages;
  if (!all.host.empty())
    for (std::size_t i : s.reps)
      if (i < all.host.size()) d.host.push_back(all.host[i]);
  return d;
}

void finish_side(paired_side& s, const profiling::profile_data& all) {
  on_side(s, [&] {
    if (!s.run) return;
    profiling::profile_data d = side_share(all, s);
    s.run->collect_out_of_process(d);
    add_profile(s.r, std::move(d), s.run->take_windows(), s.req->output_dir);
    s.run->teardown();
    settle_status(s.r);
  });
  s.r.duration_s = std::chrono::duration<double>(clock_type::now() - s.start).count();
}

} // namespace

std::array<point_result, 2> measure_point_pair(const run_request& a, const run_request& b, int first) {
  std::array<paired_side, 2> sides;
  sides[0].req = &a;
  sides[1].req = &b;
  for (auto& s : sides) {
    s.r = new_point_result(*s.req);
    s.r.started_unix_s = unix_now_s();
    s.start = clock_type::now();
    on_side(s, [&] {
      if (std::string why = prepare_point(*s.req, s.r); !why.empty()) end_side(s, point_status::skipped, why);
    });
  }
  // The profiler backends are per process: one set of sessions for both sides (A's request;
  // the two sides come from one suite, so they name the same backends).
  std::vector<std::string> session_notes;
  profiler_sessions sessions(a, session_notes);
  for (auto& s : sides)
    s.r.profiler_messages.insert(s.r.profiler_messages.end(), session_notes.begin(), session_notes.end());
  const tracing_scope tracing(sessions.traces_device() ? &a.profiler_options : nullptr);
  for (int o = 0; o < 2; ++o) {
    paired_side& s = sides[side_at(first, 0, o)];
    on_side(s, [&] {
      s.run.emplace(*s.req, s.r);
      s.run->setup();
    });
  }
  for (int o = 0; o < 2; ++o) {
    paired_side& s = sides[side_at(first, 1, o)];
    on_side(s, [&] { s.run->warm_up(); });
  }
  measure_alternately(sides, sessions, first);
  const profiling::profile_data data = sessions.collect();
  for (auto& s : sides) finish_side(s, data);
  for (auto& s : sides)
    s.r.profiler_messages.push_back("measured in one process with its partner of the other side, repetition by "
                                    "repetition (compare --base-plugins/--new-plugins)");
  return {std::move(sides[0].r), std::move(sides[1].r)};
}

} // namespace speedlab::app
