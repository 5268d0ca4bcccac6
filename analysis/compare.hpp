// `speedlab compare BASE NEW`: two runs' points matched by identity (the point id:
// workload/variant/parameters), the ratio of medians NEW / BASE with a 95% interval from the
// samples (the exact two-sample bootstrap of analysis_stats, the same one speedups use) and
// a verdict. The time split's parts are compared too, so a profile comparison can add its
// per-kernel rows beside them (part_delta with part = the kernel's name).
#pragma once

#include <string>
#include <vector>

#include "model/results.hpp"

namespace speedlab::analysis {

struct compare_options {
  // A change must exceed this fraction, with its whole interval, to count as faster/slower.
  // 10%: measured false-alarm rates on noisy CPU runs in docs/reports.md.
  double threshold = 0.10;
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
  std::string method;                         // "bootstrap", "median-ci", "none"
  // "slower", "faster", "same", "unclear" (too noisy to say), "broken" (valid in BASE,
  // failed or invalid in NEW), "fixed" (the other way round), "not measured" (neither valid).
  std::string verdict;
  std::vector<part_delta> parts;
};

struct comparison {
  run_info base_run, new_run;
  double threshold = 0.10;
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

comparison compare_runs(const run_info& base_run, const std::vector<point_result>& base,
                        const run_info& new_run, const std::vector<point_result>& next,
                        const compare_options& options = {});

} // namespace speedlab::analysis
