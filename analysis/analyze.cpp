#include "analysis/analyze.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/comparisons.hpp"
#include "analysis/crossover.hpp"
#include "analysis/program_analysis.hpp"
#include "model/device_keys.hpp"
#include "analysis/roofline.hpp"
#include "analysis/rules.hpp"
#include "analysis/timing_check.hpp"
#include "analysis/trace_summary.hpp"
#include "analysis/what_if.hpp"

namespace speedlab::analysis {

namespace {

void device_notes(const std::vector<point_result>& points, const device_model& d, std::vector<std::string>& notes) {
  bool gpu_points = false, cpu_points = false;
  for (const auto& p : points) {
    gpu_points = gpu_points || p.kind == variant_kind::cuda;
    cpu_points = cpu_points || p.kind == variant_kind::serial || p.kind == variant_kind::threads;
  }
  if (gpu_points) {
    if (d.gpu_name.empty() || !find_ceiling(d.gpu, keys::dram_bw))
      notes.push_back("no GPU ceilings in the device model: GPU points are placed without roofs");
    else if (!d.gpu.at(keys::dram_bw).measured)
      notes.push_back("GPU ceilings are datasheet-style estimates (no calibration): percent-of-bound figures are "
                      "approximate; run `speedlab calibrate`");
    if (!find_ceiling(d.gpu, keys::launch_latency) || !d.gpu.at(keys::launch_latency).measured)
      notes.push_back("launch latency not measured: launch-bound uses an assumed 5 us unless calibrated");
  }
  if (cpu_points && !find_ceiling(d.host, keys::memory_bw))
    notes.push_back("host memory bandwidth unknown (no calibration): CPU points have no memory roof");
}

// Other programs' load over the whole run: every point's figure pooled by its span, so the
// 10 ms ticks of /proc/stat even out (-1: none measured).
double pooled_machine_load(const std::vector<point_result>& points) {
  double busy = 0, span = 0;
  for (const auto& p : points)
    if (p.other_busy_cores >= 0 && p.other_busy_span_s > 0) {
      busy += p.other_busy_cores * p.other_busy_span_s;
      span += p.other_busy_span_s;
    }
  return span > 0 ? busy / span : -1;
}

// The run's load once, where a reader would misread the timings without it (from a quarter
// of a core); the rules name it where it explains a point.
void machine_load_note(const std::vector<point_result>& points, double pooled, const device_model& d,
                       std::vector<std::string>& notes) {
  if (pooled < 0.25) return;
  double span = 0;
  for (const auto& p : points) span += p.other_busy_cores >= 0 ? p.other_busy_span_s : 0;
  const ceiling* cores = find_ceiling(d.host, keys::cores);
  notes.push_back(fmt::format(
      "other programs kept {:.1f}{} cores busy while the points ran ({:.0f} s of rounds): their times include "
      "waiting for cores, multi-threaded points most; measure on a quiet machine to judge the code (each point's "
      "other_busy_cores in results.json)",
      pooled, cores ? fmt::format(" of {:g}", cores->value) : std::string(), span));
}

// The axes a crossover or fit names: "n", or "rows*cols" for the product of two.
std::vector<std::string> axes_of(const std::string& size_param) {
  std::vector<std::string> axes;
  for (std::size_t pos = 0, star; pos <= size_param.size(); pos = star + 1) {
    star = std::min(size_param.find('*', pos), size_param.size());
    axes.push_back(size_param.substr(pos, star - pos));
  }
  return axes;
}

// Whether a crossover or fit is about p's own series: same workload and variant, the same
// parameters off its size axis.
template <class Sweep>
bool in_series(const point_result& p, const Sweep& s) {
  if (s.workload != p.workload || s.variant != p.variant) return false;
  const auto axes = axes_of(s.size_param);
  for (const auto& a : axes)
    if (!p.params.count(a)) return false;
  return p.params_key_without(axes) == s.params_key;
}

template <class Sweep>
std::vector<const Sweep*> of_series(const point_result& p, const std::vector<Sweep>& all) {
  std::vector<const Sweep*> out;
  for (const auto& s : all)
    if (in_series(p, s)) out.push_back(&s);
  return out;
}

// One trace in memory at a time: summarize it (and its activity, when asked), then drop it.
struct point_trace {
  std::optional<trace_summary> summary;
  std::optional<activity_summary> activity;
};
point_trace load_point_trace(const point_result& p, const trace_loader& load_trace, const analysis_options& options,
                             std::vector<std::string>& notes) {
  point_trace out;
  if (!load_trace) return out;
  try {
    if (auto t = load_trace(p)) {
      out.summary = summarize_trace(*t);
      if (options.activity_from_traces && t->has_gpu_activity()) {
        program_options po;
        po.gap_min_ns = options.gap_min_ns;
        out.activity = summarize_activity(std::move(*t), po);
      }
    }
  } catch (const std::exception& e) {
    notes.push_back("trace of " + p.id + " could not be read: " + e.what());
  }
  return out;
}

} // namespace

analysis_result analyze(const std::vector<point_result>& points, const device_model& device,
                        const trace_loader& load_trace) {
  return analyze(points, device, load_trace, analysis_options{});
}

analysis_result analyze(const std::vector<point_result>& points, const device_model& device,
                        const trace_loader& load_trace, const analysis_options& options) {
  analysis_result r;
  r.device = device;
  device_notes(points, device, r.notes);
  const double run_load = pooled_machine_load(points);
  machine_load_note(points, run_load, device, r.notes);

  const baseline_index index(points);
  r.speedups = all_speedups(points, index, options);
  r.cpp_over_python = cpp_over_python(points, options);
  std::unordered_map<std::string, std::size_t> speedup_at; // "point id \x1f baseline id"
  for (std::size_t i = 0; i < r.speedups.size(); ++i)
    speedup_at.emplace(r.speedups[i].point_id + '\x1f' + r.speedups[i].baseline_point_id, i);
  auto find_speedup = [&](const point_result& p, const point_result* base) -> const speedup* {
    if (!base) return nullptr;
    auto it = speedup_at.find(p.id + '\x1f' + base->id);
    return it == speedup_at.end() ? nullptr : &r.speedups[it->second];
  };

  // Sweeps before rules: a rule reads the crossovers of its point's sweep.
  if (options.fits || options.crossovers) {
    sweep_analysis s = analyze_sweeps(points);
    if (options.fits) r.fits = std::move(s.fits);
    if (options.crossovers) r.crossovers = std::move(s.crossovers);
  }

  std::vector<const rule*> rules;
  for (const auto& [name, rule] : rule_registry())
    if (!options.disabled_rules.count(name)) rules.push_back(rule.get());

  for (const auto& p : points) {
    if (!p.valid()) continue;
    const point_trace loaded = load_point_trace(p, load_trace, options, r.notes);
    const trace_summary* ts = loaded.summary ? &*loaded.summary : nullptr;
    const activity_summary* activity = loaded.activity ? &*loaded.activity : nullptr;
    std::optional<point_result> steady; // with an activity the rules judge its steady state
    if (activity) steady = steady_point(p, activity);
    std::vector<roofline_point> rows;
    if (options.roofline) {
      rows = roofline_for_point(p, ts, device);
      for (auto& row : counter_roofline_for_point(p, device)) rows.push_back(std::move(row));
    }
    if (options.what_ifs)
      for (auto& w : what_ifs_for_point(p, ts, device)) r.what_ifs.push_back(std::move(w));

    const baselines b = index.at(p);
    rule_context ctx{.point = steady ? &*steady : &p,
                     .device = device,
                     .options = options,
                     .subject = p.id,
                     .trace = ts,
                     .serial = b.serial == &p ? nullptr : b.serial,
                     .threads = b.threads == &p ? nullptr : b.threads,
                     .crossovers = of_series(p, r.crossovers),
                     .fits = of_series(p, r.fits),
                     .activity = activity};
    ctx.vs_serial = find_speedup(p, ctx.serial);
    ctx.vs_threads = find_speedup(p, ctx.threads);
    ctx.run_other_busy_cores = run_load;
    for (const auto& row : rows) ctx.roofline.push_back(&row);
    run_rules(ctx, r.findings, r.notes);
    for (auto& row : rows) r.roofline.push_back(std::move(row));
  }

  r.timing_checks = timing_checks(points);
  return r;
}

} // namespace speedlab::analysis
