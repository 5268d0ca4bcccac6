#include "analysis/what_if.hpp"

#include <algorithm>

#include "model/device_keys.hpp"
#include "analysis/text.hpp"

namespace speedlab::analysis {

namespace {

what_if make(const point_result& p, std::string scenario, double wall, double saved, std::string terms) {
  what_if w;
  w.point_id = p.id;
  w.workload = p.workload;
  w.variant = p.variant;
  w.scenario = std::move(scenario);
  w.measured_ns = wall;
  w.projected_ns = std::max(0.0, wall - saved);
  w.max_speedup = w.projected_ns > 0 ? wall / w.projected_ns : 0;
  w.arithmetic = fmt::format("{} wall - {} = {}; {} / {} = {} at most", text::time(wall), terms,
                             text::time(w.projected_ns), text::time(wall), text::time(w.projected_ns),
                             w.projected_ns > 0 ? text::factor(w.max_speedup) : std::string("unbounded"));
  w.max_speedup = text::finite(w.max_speedup);
  return w;
}

} // namespace

pinned_projection project_pinned(const time_split& s, const trace_summary& t, const device_model& d) {
  pinned_projection out;
  std::string terms;
  bool all_measured = true;
  auto direction = [&](const copy_stats& c, double split_ns, const char* pinned_key, const char* pageable_key,
                       const char* label) {
    if (c.pageable_count == 0 || !(c.ns > 0) || !(split_ns > 0)) return;
    const ceiling* pinned = find_ceiling(d.gpu, pinned_key);
    const ceiling* pageable = find_ceiling(d.gpu, pageable_key);
    if (!pinned || !pageable || !(pinned->value > pageable->value)) return;
    all_measured = all_measured && pinned->measured && pageable->measured;
    // The split's copy time of this direction, in the share the trace says was pageable.
    const double pageable_ns = split_ns * (c.pageable_ns / c.ns);
    const double ratio = pageable->value / pinned->value;
    const double saved = pageable_ns * (1 - ratio);
    out.saved_ns += saved;
    out.possible = true;
    if (!terms.empty()) terms += " - ";
    terms += fmt::format("{} pageable {} x (1 - {} / {})", text::time(pageable_ns), label,
                         text::gbps(pageable->value), text::gbps(pinned->value));
  };
  direction(t.h2d, s.h2d, keys::h2d_pinned_bw, keys::h2d_pageable_bw, "H2D");
  direction(t.d2h, s.d2h, keys::d2h_pinned_bw, keys::d2h_pageable_bw, "D2H");
  out.measured = out.possible && all_measured;
  out.arithmetic = terms;
  return out;
}

std::vector<what_if> what_ifs_for_point(const point_result& p, const trace_summary* t, const device_model& d) {
  std::vector<what_if> out;
  if (!p.split_median || !(p.split_median->wall_ns > 0)) return out;
  const time_split& s = *p.split_median;
  const double W = s.wall_ns, K = s.kernel, H = s.h2d, D = s.d2h;
  if (K > 0) out.push_back(make(p, "kernels take no time", W, K, text::time(K) + " kernels"));
  if (t) {
    const pinned_projection pin = project_pinned(s, *t, d);
    if (pin.possible) {
      what_if w = make(p, "copies use pinned memory", W, pin.saved_ns, "(" + pin.arithmetic + ")");
      if (!pin.measured) w.arithmetic += " (bandwidths not all measured: estimates)";
      out.push_back(std::move(w));
    }
  }
  if (H + D > 0 && K > 0)
    out.push_back(make(p, "copies overlap kernels", W, std::min(H + D, K),
                       fmt::format("min({} copies, {} kernels)", text::time(H + D), text::time(K))));
  if (H + D > 0)
    out.push_back(make(p, "data stays on the device", W, H + D,
                       fmt::format("({} H2D + {} D2H)", text::time(H), text::time(D))));
  return out;
}

} // namespace speedlab::analysis
