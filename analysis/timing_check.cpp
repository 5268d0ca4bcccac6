#include "analysis/timing_check.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/analysis_stats.hpp"

namespace speedlab::analysis {
namespace {

// The time-split component a self-timing name stands for, with its description.
std::optional<std::pair<double time_split::*, const char*>> counterpart(const std::string& name) {
  if (name == "kernel") return std::make_pair(&time_split::kernel, "kernel time (profiler)");
  if (name == "h2d") return std::make_pair(&time_split::h2d, "host->device copy time (profiler)");
  if (name == "d2h") return std::make_pair(&time_split::d2h, "device->host copy time (profiler)");
  return std::nullopt;
}

} // namespace

std::vector<timing_check> timing_checks(const std::vector<point_result>& points) {
  std::vector<timing_check> out;
  for (const auto& p : points) {
    if (!p.valid()) continue;
    for (const auto& [name, series] : p.self_timed_ns) {
      timing_check c;
      c.point_id = p.id;
      c.workload = p.workload;
      c.variant = p.variant;
      c.name = name;
      std::vector<double> own, theirs, diffs;
      const auto part = counterpart(name);
      const bool aligned = p.splits.size() == series.size();
      for (std::size_t i = 0; i < series.size(); ++i) {
        if (series[i] <= 0) continue; // not reported in that repetition
        own.push_back(series[i]);
        if (!part || !aligned) continue;
        const double profiled = p.splits[i].*(part->first);
        if (profiled <= 0) continue;
        theirs.push_back(profiled);
        diffs.push_back((profiled - series[i]) / series[i]);
      }
      c.self_median_ns = stats::median(own);
      if (!part) {
        c.verdict = timing_verdict::no_counterpart;
        c.note = "speedlab measures nothing under this name; shown as reported";
      } else if (diffs.empty()) {
        c.compared_with = part->second;
        c.verdict = timing_verdict::not_compared;
        c.note = p.splits.empty() ? "no profiler data for this point (run with the cupti profiler)"
                                  : "the profiler's repetitions do not line up with the reported ones";
      } else {
        c.compared_with = part->second;
        c.repetitions = diffs.size();
        c.profiler_median_ns = stats::median(theirs);
        c.median_difference = stats::median(diffs);
        for (double d : diffs) c.max_abs_difference = std::max(c.max_abs_difference, std::fabs(d));
        c.verdict = std::fabs(c.median_difference) <= timing_agreement_tolerance ? timing_verdict::agree
                                                                                 : timing_verdict::differ;
        if (c.verdict == timing_verdict::differ && c.median_difference < 0 && name == "kernel")
          c.note = "the own timing is longer: an event pair on an idle GPU also times the launch call (the start "
                   "event runs before the kernel is queued) and the GPU's gap around the kernel; hold the stream "
                   "until both events are queued (speedlab/cuda_event_timer.hpp) and compare longer kernels";
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

} // namespace speedlab::analysis
