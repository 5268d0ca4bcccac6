#include "analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/comparisons.hpp"
#include "analysis/round_compare.hpp"
#include "analysis/rules.hpp"
#include "analysis/run_settings.hpp"

namespace speedlab::analysis {

namespace {

// Regressions first (broken, slower), then unclear, faster, fixed, same, not measured.
constexpr verdict report_order[] = {verdict::broken, verdict::slower, verdict::unclear,     verdict::faster,
                                    verdict::fixed,  verdict::same,   verdict::not_measured};

int verdict_rank(verdict v) {
  return static_cast<int>(std::find(std::begin(report_order), std::end(report_order), v) - std::begin(report_order));
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

bool both_valid(const point_result& b, const point_result& n) {
  return b.valid() && b.wall.median > 0 && n.valid() && n.wall.median > 0;
}

bool has_rounds(const point_result& p) { return round_medians(p.samples_by_round()).size() >= 2; }

// Fewer than 2 rounds on a side: the ratio of medians with the 95% bootstrap interval of
// the samples, which sees only the noise inside one process; a direction only beyond the
// measured run-to-run allowance.
void one_process_interval(point_delta& d, const point_result& b, const point_result& n,
                          const compare_options& options) {
  // compare(variant, baseline) gives baseline / variant: with BASE as the "variant" that
  // is NEW / BASE, above 1 when NEW is slower.
  const speedup s = compare(b, n, analysis_options{});
  d.ratio = s.ratio;
  d.ci_low = s.ci_low;
  d.ci_high = s.ci_high;
  d.method = s.method;
  d.confidence = 0.95;
  d.significant = s.method != "none" && (d.ci_low > 1 || d.ci_high < 1);
  d.verdict = s.method == "none"
                  ? verdict::unclear
                  : one_round_verdict(d.ratio, d.ci_low, d.ci_high, options.threshold, options.one_round_allowance);
  const std::string rounds =
      fmt::format("{} round{} in BASE, {} in NEW", d.base_rounds, d.base_rounds == 1 ? "" : "s", d.new_rounds);
  if (d.verdict == verdict::unclear)
    d.reason = fmt::format("{}: no run-to-run spread, and the change is within the x{:g} run-to-run allowance for "
                           "1-round points; measure both runs with --rounds 5, or both sides at once with `speedlab "
                           "compare --base-plugins DIR --new-plugins DIR`",
                           rounds, options.one_round_allowance);
  else
    d.reason = fmt::format("{}: beyond the x{:g} run-to-run allowance for 1-round points", rounds,
                           options.one_round_allowance);
}

// A delta from an interval over rounds (unpaired or paired: the same fields, the same verdict rule).
void set_round_delta(point_delta& d, const round_interval& r, const char* method, double threshold,
                     double confidence) {
  d.method = method;
  d.ratio = r.ratio;
  d.ci_low = r.ci_low;
  d.ci_high = r.ci_high;
  d.confidence = confidence;
  d.p_value = r.p_value;
  d.significant = r.ci_low > 1 || r.ci_high < 1;
  d.verdict = rounds_verdict(r.ratio, r.ci_low, r.ci_high, threshold);
}

void rounds_interval(point_delta& d, const point_result& b, const point_result& n, double threshold,
                     double confidence) {
  const round_interval r =
      round_ratio_interval(round_medians(b.samples_by_round()), round_medians(n.samples_by_round()), confidence);
  set_round_delta(d, r, "rounds", threshold, confidence);
}

// Round k of BASE against round k of NEW (one interleaved measurement); false with fewer than
// 2 rounds in common (the caller falls back to the unpaired rule).
bool paired_interval(point_delta& d, const point_result& b, const point_result& n, double threshold,
                     double confidence) {
  const round_interval r = paired_ratio_interval(paired_round_medians(b, n), confidence);
  if (!r.ok) return false;
  set_round_delta(d, r, "paired", threshold, confidence);
  return true;
}

// Two runs measured apart, one while other programs held more of the machine: a change
// toward the busier side is the load's as much as the code's, so it is not stated.
void discount_machine_load(point_delta& d, double cores) {
  if (d.base_other_cores < 0 || d.new_other_cores < 0 || !(cores > 0)) return;
  if (d.base_other_span_s < other_busy_min_span_s || d.new_other_span_s < other_busy_min_span_s) return;
  const double more = d.new_other_cores - d.base_other_cores; // > 0: NEW's machine was busier
  const bool toward_busier = (d.verdict == verdict::slower && more > 0) || (d.verdict == verdict::faster && more < 0);
  if (!toward_busier || std::abs(more) < load_shift_share * cores) return;
  d.reason = fmt::format(
      "{} than BASE, but other programs kept {:.2f} of {:g} cores busy while NEW was measured and {:.2f} while BASE "
      "was: a change the busier machine explains as well as the code; measure both on a quiet machine, or both "
      "sides at once with `speedlab compare --base-plugins DIR --new-plugins DIR`",
      to_string(d.verdict), d.new_other_cores, cores, d.base_other_cores);
  d.verdict = verdict::unclear;
  d.load_discounted = true;
}

point_delta delta_of(const point_result& b, const point_result& n, const compare_options& options,
                     double family_confidence, bool paired, double cores) {
  point_delta d;
  d.id = b.id;
  d.workload = b.workload;
  d.variant = b.variant;
  d.size = size_of(b);
  d.base_status = b.status;
  d.new_status = n.status;
  d.base_median_ns = b.wall.median;
  d.new_median_ns = n.wall.median;
  d.base_samples = b.samples_ns.size();
  d.new_samples = n.samples_ns.size();
  d.base_rounds = static_cast<int>(round_medians(b.samples_by_round()).size());
  d.new_rounds = static_cast<int>(round_medians(n.samples_by_round()).size());
  d.base_rounds_planned = b.rounds_planned;
  d.new_rounds_planned = n.rounds_planned;
  d.base_other_cores = b.other_busy_cores;
  d.new_other_cores = n.other_busy_cores;
  d.base_other_span_s = b.other_busy_span_s;
  d.new_other_span_s = n.other_busy_span_s;
  if (both_valid(b, n)) {
    if (paired && paired_interval(d, b, n, options.threshold, family_confidence)) {
    } else if (has_rounds(b) && has_rounds(n)) rounds_interval(d, b, n, options.threshold, family_confidence);
    else
      one_process_interval(d, b, n, options);
    if (d.method != "paired") discount_machine_load(d, cores);
    d.parts = split_parts(b, n);
  } else {
    d.method = "none";
    const bool bv = b.valid() && b.wall.median > 0, nv = n.valid() && n.wall.median > 0;
    // A variant wrong on purpose is invalid on both sides: nothing to compare.
    d.verdict = bv && !n.expected_invalid ? verdict::broken : nv ? verdict::fixed : verdict::not_measured;
  }
  return d;
}

// What the reader must know about how the intervals were made.
void describe_method(comparison& c) {
  std::size_t fallback = 0, short_rounds = 0, paired = 0, discounted = 0;
  for (const auto& d : c.points) {
    discounted += d.load_discounted;
    fallback += d.method == "bootstrap" || d.method == "median-ci";
    paired += d.method == "paired";
    short_rounds += (d.method == "rounds" || d.method == "paired") &&
                    (d.base_rounds < d.base_rounds_planned || d.new_rounds < d.new_rounds_planned);
  }
  if (paired)
    c.method_notes.push_back(fmt::format(
        "paired test: BASE and NEW are the two sides of one interleaved measurement (id {}): round k of each point "
        "was measured on both sides together, in alternating order, so a load or frequency shift during the run "
        "hits both sides of a round alike and cancels in that round's ratio. {} points are judged by a paired t on "
        "the log of each round's NEW / BASE median ratio, from 10 rounds on Yuen's trimmed t (the lowest and highest "
        "10% of the rounds left out, so one round in which a side stalled does not widen the interval; degrees of "
        "freedom: rounds kept - 1); two runs measured apart "
        "would be judged by Welch's t on each side's rounds, whose interval must also cover the drift between the "
        "runs",
        c.base_run.interleave_id, paired));
  if (c.paired && paired < c.family)
    c.method_notes.push_back(fmt::format("{} points have fewer than 2 rounds measured on both sides and fall back to "
                                         "Welch's t on each side's rounds",
                                         c.family - paired));
  if (c.family)
    c.method_notes.push_back(fmt::format(
        "{} points compared by the spread between their rounds (separate processes): each interval at {:.4g}% "
        "confidence, so that all {} together have at most a {:.4g}% chance of calling any point slower where nothing "
        "changed, and as much of calling one faster (Bonferroni, each end of the interval at alpha / points); a "
        "change counts when it is beyond the {:.4g}% threshold and significant",
        c.family, 100 * (1 - c.alpha / static_cast<double>(c.family)), c.family, 100 * c.alpha, 100 * c.threshold));
  if (fallback)
    c.method_notes.push_back(fmt::format(
        "{} points have fewer than 2 rounds on a side (--rounds 1, the default suite's first look, runs from before "
        "rounds, or a run stopped after their first round): their 95% interval sees only the noise inside one "
        "process, not the drift between runs, so they are unclear unless NEW / BASE is beyond x{:g} either way, the "
        "run-to-run allowance measured for 1-round runs (docs/reports.md); measure both runs with --rounds 5 or "
        "more, or both sides at once with `speedlab compare --base-plugins DIR --new-plugins DIR`",
        fallback, c.one_round_allowance));
  if (discounted)
    c.method_notes.push_back(fmt::format(
        "{} points changed toward the run measured while other programs kept at least {:g}% more of the cores busy "
        "(other_busy_cores in results.json): unclear, since the load explains the change as well as the code",
        discounted, 100 * load_shift_share));
  if (short_rounds)
    c.method_notes.push_back(fmt::format("{} points have fewer rounds than planned (a stopped run): their intervals "
                                         "are wider",
                                         short_rounds));
}

} // namespace

std::string unpaired_reason(const run_info& b, const run_info& n) {
  if (b.interleave_id.empty() && n.interleave_id.empty()) return "neither run was measured interleaved (run.json has no interleave_id)";
  if (b.interleave_id.empty()) return "BASE was not measured interleaved (its run.json has no interleave_id)";
  if (n.interleave_id.empty()) return "NEW was not measured interleaved (its run.json has no interleave_id)";
  if (b.interleave_id != n.interleave_id)
    return fmt::format("BASE and NEW come from different interleaved measurements (interleave_id {} and {})",
                       b.interleave_id, n.interleave_id);
  if (b.interleave_side == n.interleave_side)
    return fmt::format("BASE and NEW are the same side ('{}') of interleaved measurement {}", b.interleave_side,
                       b.interleave_id);
  return {};
}

bool comparison::has_regression() const {
  return count(verdict::slower) + count(verdict::broken) > 0 || (!allow_missing && !missing.empty());
}

bool comparison::decided() const { return count(verdict::same) + count(verdict::slower) + count(verdict::faster) > 0; }

std::size_t comparison::count(verdict v) const {
  return static_cast<std::size_t>(
      std::count_if(points.begin(), points.end(), [&](const point_delta& d) { return d.verdict == v; }));
}

verdict one_round_verdict(double ratio, double lo, double hi, double threshold, double allowance) {
  if (!(ratio > 0) || !(lo > 0) || !(hi >= lo) || !(allowance >= 1)) return verdict::unclear;
  if (ratio > allowance && lo > 1 + threshold) return verdict::slower;
  if (ratio < 1 / allowance && hi < 1 / (1 + threshold)) return verdict::faster;
  return verdict::unclear;
}

verdict rounds_verdict(double ratio, double lo, double hi, double threshold) {
  if (!(ratio > 0) || !(lo > 0) || !(hi >= lo)) return verdict::unclear;
  const double up = 1 + threshold, down = 1 / (1 + threshold);
  if (ratio >= down && ratio <= up) return verdict::same;
  if (ratio > up && lo > 1) return verdict::slower;
  if (ratio < down && hi < 1) return verdict::faster;
  return verdict::unclear; // beyond the threshold, not significant
}

comparison compare_runs(const run_info& base_run, const std::vector<point_result>& base, const run_info& new_run,
                        const std::vector<point_result>& next, const compare_options& options) {
  comparison c;
  c.base_run = base_run;
  c.new_run = new_run;
  c.threshold = options.threshold;
  c.allow_missing = options.allow_missing;
  c.one_round_allowance = options.one_round_allowance;
  c.warnings = settings_differences(base_run, base, new_run, next); // analysis/run_settings.hpp
  c.paired = unpaired_reason(base_run, new_run).empty();

  std::map<std::string, const point_result*> by_id;
  for (const auto& p : next) by_id.emplace(p.id, &p);
  std::map<std::string, bool> seen;
  std::vector<std::pair<const point_result*, const point_result*>> pairs;
  for (const auto& b : base) {
    if (seen[b.id]) continue; // a repeated id keeps its first point
    seen[b.id] = true;
    auto it = by_id.find(b.id);
    if (it == by_id.end()) {
      c.only_base.push_back(b.id);
      if (b.valid() && b.wall.median > 0) c.missing.push_back(b.id);
    } else
      pairs.emplace_back(&b, it->second);
  }
  // The family: every point whose interval comes from rounds shares alpha.
  for (const auto& [b, n] : pairs) c.family += both_valid(*b, *n) && has_rounds(*b) && has_rounds(*n);
  c.alpha = options.alpha;
  // Each end of the interval errs with probability alpha / family: the gate's question (any
  // point slower where nothing changed) is one-sided, and so is "any point faster".
  const double confidence = 1 - 2 * options.alpha / static_cast<double>(std::max<std::size_t>(1, c.family));
  const double cores = std::min(base_run.cpu_cores, new_run.cpu_cores); // what load_shift_share is a share of
  for (const auto& [b, n] : pairs) c.points.push_back(delta_of(*b, *n, options, confidence, c.paired, cores));
  describe_method(c);
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
