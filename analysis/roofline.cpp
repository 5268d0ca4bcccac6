#include "analysis/roofline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/counters.hpp"
#include "model/device_keys.hpp"
#include "analysis/rule_support.hpp"
#include "analysis/text.hpp"

namespace speedlab::analysis {

void place(roofline_point& r, double bytes, double flops, double time_ns, const ceiling* bw,
           const ceiling* fl, double flop_scale) {
  r.time_ns = time_ns;
  r.achieved_gbps = time_ns > 0 ? bytes / time_ns : 0; // bytes per ns = GB/s
  r.achieved_gflops = time_ns > 0 ? flops / time_ns : 0;
  r.intensity = bytes > 0 ? flops / bytes : 0;
  r.roof_gbps = bw ? bw->value : 0;
  r.roof_gflops = fl ? fl->value * flop_scale : 0;
  // The bound is the lower of the two roofs at this intensity.
  bool memory = false, known = false;
  if (bytes > 0 && flops > 0 && r.roof_gbps > 0 && r.roof_gflops > 0) {
    memory = r.intensity < r.roof_gflops / r.roof_gbps;
    known = true;
  } else if (bytes > 0 && r.roof_gbps > 0 && (flops <= 0 || r.roof_gflops <= 0)) {
    memory = known = true;      // no flops declared (copies, transposes) or no flop roof
  } else if (flops > 0 && r.roof_gflops > 0) {
    memory = false;
    known = true;
  }
  if (!known) {
    r.bound = "unknown";
    r.percent_of_bound = 0;
    return;
  }
  r.bound = memory ? "memory" : "compute";
  const ceiling* roof = memory ? bw : fl;
  r.percent_of_bound = memory ? 100 * r.achieved_gbps / r.roof_gbps : 100 * r.achieved_gflops / r.roof_gflops;
  r.roof_measured = roof->measured;
  r.roof_source = roof->source;
  r.percent_of_bound = text::finite(r.percent_of_bound);
}

namespace {

void set_counter_bound(roofline_point& r, const counters::counter_figures& f) {
  const auto* b = f.bound();
  if (!b) return;
  r.counter_bound = b->unit;
  r.counter_bound_kind = b->memory ? "memory" : "compute";
  r.counter_bound_pct = b->pct;
  r.units = f.units;
}

roofline_point base(const point_result& p, const char* processor) {
  roofline_point r;
  r.point_id = p.id;
  r.workload = p.workload;
  r.variant = p.variant;
  r.processor = processor;
  return r;
}

double phase(const point_result& p, const char* name) {
  auto it = p.phase_median_ns.find(name);
  return it == p.phase_median_ns.end() ? 0 : it->second;
}

// Kernels of the compute phase share its work model in proportion to their time.
void add_kernel_rows(const point_result& p, const trace_summary& t, double bytes, double flops, const ceiling* bw,
                     const ceiling* fl, std::vector<roofline_point>& out) {
  if (t.kernels.empty()) return;
  double phase_ns = 0;
  bool by_phase = false;
  for (const auto& k : t.kernels) phase_ns += k.compute_phase_ns;
  if (phase_ns > 0) by_phase = true;
  else
    for (const auto& k : t.kernels) phase_ns += k.total_ns;
  std::size_t n = 0;
  for (const auto& k : t.kernels) n += (by_phase ? k.compute_phase_ns : k.total_ns) > 0;
  if (!(phase_ns > 0)) return;
  for (const auto& k : t.kernels) {
    const double k_ns = by_phase ? k.compute_phase_ns : k.total_ns;
    if (!(k_ns > 0)) continue;
    const double share = k_ns / phase_ns;
    roofline_point kr = base(p, "gpu");
    kr.kernel = k.name;
    place(kr, bytes * share, flops * share, t.per_rep(k_ns), bw, fl);
    kr.note = n > 1 ? "the compute phase's work shared among " + std::to_string(n) + " kernels in proportion to their time"
                    : "all of the compute phase's work";
    out.push_back(std::move(kr));
  }
}

} // namespace

std::vector<roofline_point> roofline_for_point(const point_result& p, const trace_summary* t,
                                               const device_model& d) {
  std::vector<roofline_point> out;
  const double bytes = p.work.bytes(), flops = p.work.flops;
  if (!(bytes > 0) && !(flops > 0)) return out;
  const char* flop_key = p.work.fp64 ? keys::fp64_peak : keys::fp32_peak;

  if (p.kind == variant_kind::cuda) {
    const ceiling* bw = find_ceiling(d.gpu, keys::dram_bw);
    const ceiling* fl = find_ceiling(d.gpu, flop_key);
    double kernel_ns = p.split_median ? p.split_median->kernel : 0;
    roofline_point r = base(p, "gpu");
    if (kernel_ns > 0) {
      r.note = "kernel time of one repetition";
    } else {
      kernel_ns = phase(p, "compute");
      r.note = "compute phase wall time (no kernel timing)";
    }
    if (!(kernel_ns > 0)) return out;
    place(r, bytes, flops, kernel_ns, bw, fl);
    out.push_back(r);

    if (t) add_kernel_rows(p, *t, bytes, flops, bw, fl, out);
    attach_counter_bounds(out, p);
    return out;
  }

  // CPU variants: the compute phase's time, else the repetition's wall time.
  double ns = phase(p, "compute");
  roofline_point r = base(p, "cpu");
  if (!(ns > 0)) {
    ns = p.wall.median;
    r.note = "repetition wall time (no compute phase timing)";
  }
  if (!(ns > 0)) return out;
  const ceiling* cores = find_ceiling(d.host, keys::physical_cores);
  if (!cores) cores = find_ceiling(d.host, keys::cores);
  const ceiling* bw = nullptr;
  double flop_scale = 1;
  const int threads = std::max(1, p.threads);
  const ceiling* fl = find_ceiling(d.host, flop_key);
  if (p.kind == variant_kind::serial || threads == 1) {
    bw = find_ceiling(d.host, keys::memory_bw_1thread);
    if (!bw) {
      bw = find_ceiling(d.host, keys::memory_bw);
      r.note += (r.note.empty() ? "" : "; ") + std::string("one thread against all-core memory bandwidth");
    }
    if (cores) flop_scale = 1.0 / cores->value; // the peak of one core
  } else {
    bw = find_ceiling(d.host, keys::memory_bw);
    if (cores) flop_scale = std::min(1.0, threads / cores->value);
  }
  place(r, bytes, flops, ns, bw, fl, flop_scale);
  if (r.bound == "memory" && r.percent_of_bound > 100) {
    // Past the memory roof: from cache when the working set fits in the last-level cache (as
    // the host rules judge it), else the calibrated roof is below what this code reaches.
    const auto llc = property_number(d, keys::prop_llc_bytes);
    const bool in_cache = llc && *llc > 0 && bytes < 2 * *llc;
    r.above_roof = in_cache ? "cache" : "calibration";
    const std::string why =
        in_cache ? fmt::format("above the memory roof: the working set, {}, is under twice the {} last-level cache, so "
                               "much of it came from cache",
                               text::bytes(bytes), text::bytes(*llc))
                 : "above the memory roof measured by calibration: recalibrate (`speedlab calibrate --full`)";
    r.note += (r.note.empty() ? "" : "; ") + why;
  }
  out.push_back(r);
  return out;
}

void attach_counter_bounds(std::vector<roofline_point>& rows, const point_result& p) {
  if (!p.sections.has<counters::counter_pass>()) return;
  const auto kernels = detail::counter_kernels(p);
  for (auto& r : rows) {
    if (r.processor != "gpu" || !r.level.empty()) continue;
    // A kernel's row: that kernel's longest launch shape; the whole phase: the kernel that
    // takes most of a repetition.
    const detail::counter_kernel* pick = nullptr;
    for (const auto& k : kernels) {
      if (!r.kernel.empty() && !detail::same_kernel(r.kernel, k.counters.kernel)) continue;
      const double weight = r.kernel.empty() ? k.time_per_rep() : k.ns;
      if (!pick || weight > (r.kernel.empty() ? pick->time_per_rep() : pick->ns)) pick = &k;
    }
    if (!pick) continue;
    set_counter_bound(r, pick->f);
    if (!r.kernel.empty() && r.kernel != pick->counters.kernel) r.kernel_mangled = pick->counters.kernel;
  }
}

ceiling dram_roof_for_mix(const device_model& d, double read, double written) {
  const ceiling* r = find_ceiling(d.gpu, keys::dram_read_bw);
  const ceiling* w = find_ceiling(d.gpu, keys::dram_write_bw);
  const ceiling* copy = find_ceiling(d.gpu, keys::dram_bw);
  const double total = read + written;
  if (r && w && total > 0) {
    const double gbps = total / (read / r->value + written / w->value);
    return ceiling{gbps, "GB/s", r->measured && w->measured,
                   fmt::format("DRAM for this mix ({:.0f}% read): read-only {:.0f} and write-only {:.0f} GB/s, each "
                               "direction at its own rate",
                               100 * read / total, r->value, w->value)};
  }
  if (copy) {
    ceiling c = *copy;
    c.source += " (no read-only/write-only calibration: the copy figure)";
    return c;
  }
  return ceiling{};
}

std::vector<roofline_point> counter_roofline_for_point(const point_result& p, const device_model& d) {
  std::vector<roofline_point> out;
  const auto* pass = p.sections.get<counters::counter_pass>();
  if (!pass) return out;
  for (const auto& k : counters::per_distinct_kernel(pass->kernels)) {
    const counters::counter_figures f = counters::derive(k.metrics);
    if (!f.duration_ns || !(*f.duration_ns > 0)) continue;
    const bool fp64 = f.fp64_dominant();
    const double flops = f.flops().value_or(0);
    const ceiling* flop_roof = find_ceiling(d.gpu, fp64 ? keys::fp64_peak : keys::fp32_peak);
    auto row = [&](const char* level, double bytes, const ceiling* roof, std::string note) {
      roofline_point r = base(p, "gpu");
      r.kernel = counters::demangled_name(k.kernel);
      if (r.kernel != k.kernel) r.kernel_mangled = k.kernel;
      r.level = level;
      r.work_source = "counters";
      place(r, bytes, flops, *f.duration_ns, roof, flop_roof);
      set_counter_bound(r, f);
      r.note = std::move(note);
      out.push_back(std::move(r));
    };
    const std::string flop_note = fmt::format("{} FLOPs from instruction counts (an FMA counts twice)",
                                              fp64 ? "FP64" : "FP32");
    if (auto bytes = f.dram_bytes()) {
      const ceiling roof = dram_roof_for_mix(d, f.dram_read_bytes.value_or(0), f.dram_write_bytes.value_or(0));
      row("dram", *bytes, roof.value > 0 ? &roof : nullptr,
          fmt::format("DRAM bytes read + written as counted; {}", flop_note));
    }
    if (f.l2_bytes) row("l2", *f.l2_bytes, find_ceiling(d.gpu, keys::l2_bw), "L2 bytes (lts__t_bytes); " + flop_note);
    if (f.l1_bytes) row("l1", *f.l1_bytes, find_ceiling(d.gpu, keys::l1_bw), "L1/TEX bytes (l1tex__t_bytes); " + flop_note);
  }
  return out;
}

} // namespace speedlab::analysis
