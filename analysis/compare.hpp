// `speedlab compare BASE NEW`: two runs' points matched by identity (the point id:
// workload/variant/parameters), the ratio NEW / BASE with an interval and a verdict. Points
// measured in rounds (two or more on each side) get the interval from the spread between
// rounds (analysis/round_compare.hpp), at a confidence that holds the whole comparison to
// alpha (Bonferroni over its points); points with fewer rounds (runs from before rounds) fall
// back to the ratio of medians with the 95% bootstrap interval of one process's samples (the
// exact two-sample bootstrap of analysis_stats, the one speedups use), and say so. The time split's parts are compared too, so a profile comparison can add its
// per-kernel rows beside them (part_delta with part = the kernel's name).
#pragma once

#include <string>
#include <vector>

#include "model/results.hpp"

namespace speedlab::analysis {

struct compare_options {
  // The smallest change that matters: a point is slower/faster only when its ratio is beyond
  // it and the change is significant. Chosen from the self-comparisons measured in
  // docs/reports.md ("speedlab compare").
  double threshold = 0.05;
  // The chance that a comparison of two runs of the same code calls any point slower, over
  // all its points together (and, apart, the chance it calls any faster).
  double alpha = 0.05;
};

// One part of the time (a split part, later a kernel): median per repetition on each side.
struct part_delta {
  std::string part;         // "kernel", "h2d", ... (or a kernel name)
  double base_ns = 0, new_ns = 0;
};

struct point_delta {
  std::string id, workload, variant, size; // size: the size parameter's "name=value" or ""
  std::string base_status, new_status;
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
  // "slower", "faster", "same", "unclear" (too noisy to say), "broken" (valid in BASE,
  // failed or invalid in NEW), "fixed" (the other way round), "not measured" (neither valid).
  std::string verdict;
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
  // A statistically clear regression beyond the threshold (or a point that broke).
  bool has_regression() const;
  std::size_t count(const std::string& verdict) const;
};

// Verdict of a ratio NEW / BASE with its 95% interval: "slower" when the whole interval lies
// above 1 + threshold, "faster" when it lies below 1 / (1 + threshold); "same" when the ratio
// itself is within the threshold; "unclear" otherwise (beyond it, but not clearly).
std::string compare_verdict(double ratio, double ci_low, double ci_high, double threshold);

// Verdict of a ratio from rounds with its family-wise interval: "same" when the ratio is
// within the threshold (a change too small to matter, significant or not); "slower" /
// "faster" when it is beyond the threshold and the interval excludes 1 (no change);
// "unclear" when beyond the threshold but not significant.
std::string rounds_verdict(double ratio, double ci_low, double ci_high, double threshold);

// Why two runs are not the two sides of one interleaved measurement, or "" when they are
// (same interleave_id, one "base" and one "new"): what `compare --paired` refuses with.
std::string unpaired_reason(const run_info& base_run, const run_info& new_run);

comparison compare_runs(const run_info& base_run, const std::vector<point_result>& base,
                        const run_info& new_run, const std::vector<point_result>& next,
                        const compare_options& options = {});

} // namespace speedlab::analysis
