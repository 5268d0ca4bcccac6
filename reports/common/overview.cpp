#include "reports/common/overview.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "analysis/finding_groups.hpp"
#include "reports/common/text.hpp"

namespace speedlab::reports {

namespace {

// Replaces the skipped rows of one workload (rows[first..]) by one row after its other rows,
// its variants grouped by reason in order of first appearance, each variant named once per
// reason (a variant skipped in several sweeps for the same reason is one name).
void fold_skipped(std::vector<overview_row>& rows, std::size_t first) {
  overview_row folded;
  std::vector<overview_row> kept;
  for (std::size_t i = first; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.point->status != point_status::skipped) {
      kept.push_back(r);
      continue;
    }
    if (!folded.point) {
      folded.point = r.point;
      folded.workload_index = r.workload_index;
      folded.sweep_index = r.sweep_index;
    }
    const std::string reason = r.point->reason.empty() ? "no reason given" : r.point->reason;
    auto g = std::find_if(folded.skipped.begin(), folded.skipped.end(),
                          [&](const skipped_variants& s) { return s.reason == reason; });
    if (g == folded.skipped.end()) g = folded.skipped.insert(folded.skipped.end(), {reason, {}});
    if (std::find(g->variants.begin(), g->variants.end(), r.point->variant) == g->variants.end())
      g->variants.push_back(r.point->variant);
  }
  if (!folded.point) return;
  rows.resize(first);
  rows.insert(rows.end(), kept.begin(), kept.end());
  rows.push_back(std::move(folded));
}

} // namespace

std::vector<overview_row> overview_rows(const std::vector<workload_view>& workloads, const analysis_index& index,
                                        const analysis::analysis_result& analysis) {
  const auto top = analysis::top_finding_by_point(analysis);
  std::vector<overview_row> rows;
  for (std::size_t wi = 0; wi < workloads.size(); ++wi) {
    const auto& w = workloads[wi];
    const std::size_t workload_first = rows.size();
    for (std::size_t si = 0; si < w.sweeps.size(); ++si) {
      const auto& s = w.sweeps[si];
      const std::size_t first = rows.size();
      for (const auto& v : w.variants) {
        // The largest valid size, else the largest (its status then says what went wrong).
        const point_result* pick = nullptr;
        for (const auto* p : s.points) {
          if (p->variant != v) continue;
          const bool better = !pick || (p->valid() && !pick->valid()) ||
                              (p->valid() == pick->valid() && p->size_value() >= pick->size_value());
          if (better) pick = p;
        }
        if (!pick) continue;
        overview_row r;
        r.point = pick;
        r.workload_index = wi;
        r.sweep_index = si;
        r.sizes = s.sizes.size();
        r.speedup = index.speedup(*pick);
        r.roof = index.roofline(*pick);
        if (auto it = top.find(pick->id); it != top.end()) r.top = &analysis.findings[it->second];
        rows.push_back(r);
      }
      // The winner of the sweep at its largest size (only among rows measured at that size).
      overview_row* best = nullptr;
      for (std::size_t i = first; i < rows.size(); ++i) {
        const auto& p = *rows[i].point;
        if (!p.valid() || !(p.wall.median > 0)) continue;
        if (!best || p.size_value() > best->point->size_value() ||
            (p.size_value() == best->point->size_value() && p.wall.median < best->point->wall.median))
          best = &rows[i];
      }
      if (best && rows.size() - first > 1) best->fastest = true;
    }
    fold_skipped(rows, workload_first);
  }
  return rows;
}

std::size_t overview_row::skipped_variant_count() const {
  std::set<std::string> names;
  for (const auto& g : skipped) names.insert(g.variants.begin(), g.variants.end());
  return names.size();
}

std::string skipped_label(const overview_row& r) {
  const std::size_t n = r.skipped_variant_count();
  return std::to_string(n) + (n == 1 ? " variant skipped" : " variants skipped");
}

std::string short_finding(const analysis::finding& f) {
  if (f.title.size() <= 60) return f.title;
  double v = 0;
  std::string unit;
  if (analysis::title_figure(f.title, v, unit)) return f.rule + ": " + fmt_sig(v) + unit;
  return f.rule;
}

const std::vector<split_part_view>& split_parts() {
  static const std::vector<split_part_view> parts = {
      {"kernel", "kernel", &time_split::kernel}, {"h2d", "H2D", &time_split::h2d},
      {"d2h", "D2H", &time_split::d2h},          {"copy_other", "other copy", &time_split::copy_other},
      {"memset", "memset", &time_split::memset}, {"sync", "sync", &time_split::sync},
      {"api", "API", &time_split::api},          {"host", "host", &time_split::host}};
  return parts;
}

std::string split_words(const time_split& s) {
  if (s.wall_ns <= 0) return "";
  std::vector<std::pair<double, const char*>> shares;
  for (const auto& p : split_parts())
    if (s.*p.field / s.wall_ns >= 0.02) shares.push_back({s.*p.field / s.wall_ns, p.label});
  std::stable_sort(shares.begin(), shares.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [share, label] : shares)
    out += (out.empty() ? "" : " · ") + std::string(label) + " " + fmt_sig(100 * share, 2) + "%";
  return out;
}

std::string phase_words(const point_result& p) {
  // Only a CPU variant's phases are all host time; a GPU variant's need its device split.
  if ((p.kind != variant_kind::serial && p.kind != variant_kind::threads) || !(p.wall.median > 0)) return "";
  std::vector<std::pair<double, std::string>> shares;
  for (const char* phase : {"transfer_in", "compute", "transfer_out"}) {
    auto it = p.phase_median_ns.find(phase);
    if (it != p.phase_median_ns.end() && it->second / p.wall.median >= 0.02)
      shares.push_back({std::min(1.0, it->second / p.wall.median), phase});
  }
  if (shares.empty()) return "";
  std::stable_sort(shares.begin(), shares.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::string out = "CPU: ";
  for (std::size_t i = 0; i < shares.size(); ++i)
    out += (i ? " · " : "") + shares[i].second + " " + fmt_sig(100 * shares[i].first, 2) + "%";
  return out;
}

std::vector<skipped_points> fold_skipped_points(const std::vector<const point_result*>& points) {
  std::vector<skipped_points> out;
  for (const auto* p : points) {
    if (p->status != point_status::skipped) continue;
    const std::string reason = p->reason.empty() ? "no reason given" : p->reason;
    auto g = std::find_if(out.begin(), out.end(),
                          [&](const skipped_points& s) { return s.workload == p->workload && s.reason == reason; });
    if (g == out.end()) g = out.insert(out.end(), {p->workload, reason, {}, 0});
    if (std::find(g->variants.begin(), g->variants.end(), p->variant) == g->variants.end())
      g->variants.push_back(p->variant);
    ++g->points;
  }
  // Workloads together, in order of first appearance.
  std::vector<std::string> order;
  for (const auto& s : out)
    if (std::find(order.begin(), order.end(), s.workload) == order.end()) order.push_back(s.workload);
  std::stable_sort(out.begin(), out.end(), [&](const skipped_points& a, const skipped_points& b) {
    return std::find(order.begin(), order.end(), a.workload) < std::find(order.begin(), order.end(), b.workload);
  });
  return out;
}

std::vector<skipped_points> fold_skipped_points(const std::vector<point_result>& points) {
  std::vector<const point_result*> all;
  for (const auto& p : points) all.push_back(&p);
  return fold_skipped_points(all);
}

std::vector<std::string> skipped_reasons(const std::vector<overview_row>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    for (const auto& g : r.skipped)
      if (std::find(out.begin(), out.end(), g.reason) == out.end()) out.push_back(g.reason);
  return out;
}

std::string reason_mark(const std::vector<std::string>& reasons, const std::string& reason) {
  const auto it = std::find(reasons.begin(), reasons.end(), reason);
  return fmt::format("[{}]", it - reasons.begin() + 1);
}

std::vector<skipped_reason> skipped_by_reason(const std::vector<point_result>& points) {
  std::vector<skipped_reason> out;
  for (auto& g : fold_skipped_points(points)) {
    auto r = std::find_if(out.begin(), out.end(), [&](const skipped_reason& x) { return x.reason == g.reason; });
    if (r == out.end()) r = out.insert(out.end(), {g.reason, 0, {}});
    r->points += g.points;
    r->workloads.push_back(std::move(g));
  }
  return out;
}

std::string figure_range(const analysis::finding_group& g) {
  if (g.figure_unit.empty()) return "";
  if (g.figure_unit.rfind("x ", 0) == 0) { // "1.34–2.05x slower": the sense once, after the range
    const std::string lo = fmt_sig(g.figure_min), hi = fmt_sig(g.figure_max);
    return (lo == hi ? hi : lo + "–" + hi) + g.figure_unit;
  }
  const std::string lo = fmt_sig(g.figure_min) + g.figure_unit, hi = fmt_sig(g.figure_max) + g.figure_unit;
  return lo == hi ? lo : lo + "–" + hi;
}

namespace {
// Why a CPU point stands past its memory roof, in a few words ("" when it does not).
std::string above_roof_words(const analysis::roofline_point& r) {
  if (r.above_roof == "cache") return " (above: cache)";
  if (r.above_roof == "calibration") return " (above: roof low?)";
  return "";
}
} // namespace

std::string roof_percent(const analysis::roofline_point& r) {
  return fmt_percent(r.percent_of_bound) + above_roof_words(r);
}

std::string roof_words(const analysis::roofline_point& r) {
  const std::string roof = fmt_percent(r.percent_of_bound) + " " + r.bound + above_roof_words(r);
  if (r.counter_bound.empty()) return roof;
  // Both, named: the counters' busiest unit first, then the roofline of the work.
  return "bound: " + counter_bound_words(r) + "; " + work_words(r) + ": " + fmt_percent(r.percent_of_bound) + " of " +
         (r.bound == "memory" ? "the memory roof" : "the FLOP roof");
}

std::string counter_bound_words(const analysis::roofline_point& r) {
  if (r.counter_bound.empty()) return "";
  return r.counter_bound + " " + fmt_percent(r.counter_bound_pct) + " of peak (counters)";
}

std::string work_words(const analysis::roofline_point& r) {
  return r.work_source == "counters" ? "counted work" : "declared work";
}

std::string speedup_interval(const analysis::speedup& s) {
  if (s.method == "none") return " (no interval: under 3 repetitions)";
  const std::string interval = format::speed_interval(s.ci_low, s.ci_high);
  return interval.empty() ? "" : " " + interval;
}

std::string speedup_ratio_words(const analysis::speedup& s) {
  return s.method == "none" ? format::speed(s.ratio) : format::speed_verdict(s.ratio, s.verdict);
}

std::string speedup_words(const analysis::speedup& s) { return speedup_ratio_words(s) + speedup_interval(s); }

std::string gain_range(const analysis::finding_group& g) {
  if (g.gain_max <= 1) return "";
  const std::string lo = fmt_ratio(g.gain_min), hi = fmt_ratio(g.gain_max);
  return "up to " + (lo == hi ? hi : lo + "–" + hi) + " faster";
}

std::string point_label(const point_result& p) {
  const std::string key = p.params_key();
  return key.empty() ? p.variant : p.variant + " " + key;
}

std::string sweep_anchor(std::size_t workload_index, std::size_t sweep_index) {
  return "sweep-" + std::to_string(workload_index) + "-" + std::to_string(sweep_index);
}

} // namespace speedlab::reports
