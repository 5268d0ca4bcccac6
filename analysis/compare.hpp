// `speedlab compare BASE NEW`: two runs' points matched by identity (the point id:
// workload/variant/parameters), the ratio NEW / BASE with an interval and a verdict. Points
// measured in rounds (two or more on each side) get the interval from the spread between
// rounds (analysis/round_compare.hpp), at a confidence that holds the whole comparison to
// alpha (Bonferroni over its points). Points with fewer rounds (--rounds 1, runs from before
// rounds) have only the 95% bootstrap interval of one process's samples, blind to the drift
// between runs: they are "unclear" unless the change is beyond a measured run-to-run
// allowance (one_round_allowance), and say so. The time split's parts are compared too, so a
// profile comparison can add its per-kernel rows beside them (part_delta with part = the
// kernel's name).
#pragma once

#include <string>
#include <vector>

#include "model/results.hpp"

namespace speedlab::analysis {

// The run-to-run allowance for points with fewer than 2 rounds on a side: their interval sees
// only the noise inside one process, so their direction is stated only when NEW / BASE (or
// BASE / NEW) is beyond this factor, which no self-comparison of two independent 1-round runs
// of `speedlab run --workload vector --workload reduction --variant serial --variant threads
// --param n=2^16..2^20:2` reached on the 2-core development machine while busy
// (docs/reports.md, "One-round points").
inline constexpr double one_round_allowance = 4.0;

// Separate runs whose point was measured while other programs held this share of the
// machine's cores more on one side (point_result::other_busy_cores): a change toward the
// busier side is "unclear", the load explaining it as well as the code.
inline constexpr double load_shift_share = 0.25;

struct compare_options {
  // The smallest change that matters: a point is slower/faster only when its ratio is beyond
  // it and the change is significant. Chosen from the self-comparisons measured in
  // docs/reports.md ("speedlab compare").
  double threshold = 0.05;
  // The chance that a comparison of two runs of the same code calls any point slower, over
  // all its points together (and, apart, the chance it calls any faster).
  double alpha = 0.05;
  // Points ok in BASE and absent from NEW are listed without being a regression
  // (`--allow-missing`); a point that failed or is invalid in NEW stays one.
  bool allow_missing = false;
  // Fewer than 2 rounds on a side: slower/faster only beyond this factor (see above).
  double one_round_allowance = analysis::one_round_allowance;
};

// One part of the time (a split part, later a kernel): median per repetition on each side.
struct part_delta {
  std::string part;         // "kernel", "h2d", ... (or a kernel name)
  double base_ns = 0, new_ns = 0;
};

struct point_delta {
  std::string id, workload, variant, size; // size: the size parameter's "name=value" or ""
  point_status base_status = point_status::ok, new_status = point_status::ok;
  double base_median_ns = 0, new_median_ns = 0;
  std::size_t base_samples = 0, new_samples = 0;
  double ratio = 0, ci_low = 0, ci_high = 0; // NEW / BASE: above 1 means slower
  // "paired" (round k of BASE with round k of NEW, one interleaved measurement: paired t,
  // trimmed from 10 rounds on, on the per-round log ratios), "rounds" (between-round spread, Welch's t), "bootstrap" or "median-ci" (one
  // process's samples: fewer than 2 rounds on a side), "none".
  std::string method;
  int base_rounds = 1, new_rounds = 1;       // rounds with samples on each side
  int base_rounds_planned = 1, new_rounds_planned = 1;
  double confidence = 0.95;                   // of [ci_low, ci_high]
  double p_value = -1;                        // "paired"/"rounds": two-sided t p, before the family correction
  bool significant = false;                   // the interval excludes 1 (no change)
  // slower, faster, same, unclear (too noisy to say, or no run-to-run spread), broken (valid
  // in BASE, failed or invalid in NEW), fixed (the other way round), not measured (neither
  // valid).
  speedlab::verdict verdict = speedlab::verdict::unclear;
  // Why the verdict, where the table alone does not say (a one-round side: what to do).
  std::string reason;
  // Cores other programs kept busy while each side was measured; -1 where not measured.
  double base_other_cores = -1, new_other_cores = -1;
  double base_other_span_s = 0, new_other_span_s = 0; // the seconds of rounds each figure covers
  bool load_discounted = false; // slower/faster toward the busier side, made unclear
  std::vector<part_delta> parts;
};

struct comparison {
  run_info base_run, new_run;
  double threshold = 0.05, alpha = 0.05;
  std::size_t family = 0;              // points compared by rounds: each at confidence 1 - 2 alpha / family
  // BASE and NEW are the two sides of one interleaved measurement (run_info::interleave_id):
  // points are compared round by round ("paired"); otherwise each side's rounds apart (Welch).
  bool paired = false;
  std::vector<std::string> method_notes; // how the intervals were made; fallbacks said here
  // Settings that differ (host, CPU, GPU, driver, threads, measurement settings, speedlab
  // version, plugin builds), each with the points it affects: analysis/run_settings.hpp.
  std::vector<std::string> warnings;
  std::vector<point_delta> points;     // regressions first (broken, slower), then unclear, faster, same
  std::vector<std::string> only_base, only_new; // point ids present on one side only
  // Of only_base, the points that were ok in BASE: lost in NEW, a regression unless allowed.
  std::vector<std::string> missing;
  bool allow_missing = false;
  double one_round_allowance = analysis::one_round_allowance;
  // A statistically clear regression beyond the threshold, a point that broke, or (unless
  // allow_missing) one ok in BASE and missing in NEW.
  bool has_regression() const;
  // Some point has a verdict on its time (same, slower, faster): otherwise the comparison
  // could not decide, and a gate must not pass on it.
  bool decided() const;
  std::size_t count(verdict v) const;
};

// Verdict of a point with fewer than 2 rounds on a side (its interval from one process):
// "slower" / "faster" only when the ratio is beyond `allowance` (a measured run-to-run
// factor) and its interval beyond the threshold; "unclear" otherwise, never "same" (a change
// within the drift between runs may hide either way).
verdict one_round_verdict(double ratio, double ci_low, double ci_high, double threshold, double allowance);

// Verdict of a ratio from rounds with its family-wise interval: "same" when the ratio is
// within the threshold (a change too small to matter, significant or not); "slower" /
// "faster" when it is beyond the threshold and the interval excludes 1 (no change);
// "unclear" when beyond the threshold but not significant.
verdict rounds_verdict(double ratio, double ci_low, double ci_high, double threshold);

// Why two runs are not the two sides of one interleaved measurement, or "" when they are
// (same interleave_id, one "base" and one "new"): what `compare --paired` refuses with.
std::string unpaired_reason(const run_info& base_run, const run_info& new_run);

comparison compare_runs(const run_info& base_run, const std::vector<point_result>& base,
                        const run_info& new_run, const std::vector<point_result>& next,
                        const compare_options& options = {});

} // namespace speedlab::analysis
