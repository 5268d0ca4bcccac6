#include "analysis/compare.hpp"

#include <algorithm>
#include <map>

#include "analysis/analyze.hpp"
#include "analysis/comparisons.hpp"
#include "analysis/run_settings.hpp"

namespace speedlab::analysis {

namespace {

int verdict_rank(const std::string& v) {
  static const char* order[] = {"broken", "slower", "unclear", "faster", "fixed", "same", "not measured"};
  for (int i = 0; i < 7; ++i)
    if (v == order[i]) return i;
  return 7;
}

std::string size_of(const point_result& p) {
  const std::string name = p.size_param();
  auto it = p.params.find(name);
  return it == p.params.end() ? "" : name + "=" + it->second;
}

std::vector<part_delta> split_parts(const point_result& b, const point_result& n) {
  if (!b.split_median || !n.split_median) return {};
  const auto &x = *b.split_median, &y = *n.split_median;
  const std::pair<const char*, double time_split::*> parts[] = {
      {"kernel", &time_split::kernel}, {"h2d", &time_split::h2d},       {"d2h", &time_split::d2h},
      {"copy_other", &time_split::copy_other}, {"memset", &time_split::memset}, {"sync", &time_split::sync},
      {"api", &time_split::api},       {"host", &time_split::host}};
  std::vector<part_delta> out;
  for (const auto& [name, member] : parts)
    if (x.*member > 0 || y.*member > 0) out.push_back({name, x.*member, y.*member});
  return out;
}

} // namespace

bool comparison::has_regression() const { return count("slower") + count("broken") > 0; }

std::size_t comparison::count(const std::string& verdict) const {
  return static_cast<std::size_t>(
      std::count_if(points.begin(), points.end(), [&](const point_delta& d) { return d.verdict == verdict; }));
}

std::string compare_verdict(double ratio, double lo, double hi, double threshold) {
  if (!(ratio > 0) || !(lo > 0) || !(hi >= lo)) return "unclear";
  const double up = 1 + threshold, down = 1 / (1 + threshold);
  if (ratio >= down && ratio <= up) return "same";
  // Clear only when the whole interval lies beyond the threshold.
  if (lo > up) return "slower";
  if (hi < down) return "faster";
  return "unclear";
}

comparison compare_runs(const run_info& base_run, const std::vector<point_result>& base, const run_info& new_run,
                        const std::vector<point_result>& next, const compare_options& options) {
  comparison c;
  c.base_run = base_run;
  c.new_run = new_run;
  c.threshold = options.threshold;
  c.warnings = settings_differences(base_run, base, new_run, next); // analysis/run_settings.hpp

  std::map<std::string, const point_result*> by_id;
  for (const auto& p : next) by_id.emplace(p.id, &p);
  std::map<std::string, bool> seen;
  analysis_options o; // the speedup comparison's sample limits
  for (const auto& b : base) {
    if (seen[b.id]) continue; // a repeated id keeps its first point
    seen[b.id] = true;
    auto it = by_id.find(b.id);
    if (it == by_id.end()) {
      c.only_base.push_back(b.id);
      continue;
    }
    const point_result& n = *it->second;
    point_delta d;
    d.id = b.id;
    d.workload = b.workload;
    d.variant = b.variant;
    d.size = size_of(b);
    d.base_status = to_string(b.status);
    d.new_status = to_string(n.status);
    d.base_median_ns = b.wall.median;
    d.new_median_ns = n.wall.median;
    d.base_samples = b.samples_ns.size();
    d.new_samples = n.samples_ns.size();
    const bool bv = b.valid() && b.wall.median > 0, nv = n.valid() && n.wall.median > 0;
    if (bv && nv) {
      // compare(variant, baseline) gives baseline / variant: with BASE as the "variant" that
      // is NEW / BASE, above 1 when NEW is slower.
      const speedup s = compare(b, n, o);
      d.ratio = s.ratio;
      d.ci_low = s.ci_low;
      d.ci_high = s.ci_high;
      d.method = s.method;
      d.verdict = s.method == "none" ? "unclear" : compare_verdict(d.ratio, d.ci_low, d.ci_high, options.threshold);
      d.parts = split_parts(b, n);
    } else {
      d.method = "none";
      // A variant wrong on purpose is invalid on both sides: nothing to compare.
      d.verdict = bv && !n.expected_invalid ? "broken" : nv ? "fixed" : "not measured";
    }
    c.points.push_back(std::move(d));
  }
  for (const auto& n : next)
    if (!seen.count(n.id) && std::find(c.only_new.begin(), c.only_new.end(), n.id) == c.only_new.end())
      c.only_new.push_back(n.id);
  std::stable_sort(c.points.begin(), c.points.end(), [](const point_delta& x, const point_delta& y) {
    if (verdict_rank(x.verdict) != verdict_rank(y.verdict)) return verdict_rank(x.verdict) < verdict_rank(y.verdict);
    return x.ratio > y.ratio;
  });
  return c;
}

} // namespace speedlab::analysis
