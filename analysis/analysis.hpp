// What analysis concludes from results: roofline placements, findings
// from rules, speedups with verdicts, cost-model fits, crossover sizes and what-if bounds.
// Reporters render this; they never compute it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/device_model.hpp"
#include "model/counters.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

// The device model (ceilings and properties) is part of the results model: analysis reads it,
// device/ fills it. The names stay reachable as analysis::ceiling / analysis::device_model.
using speedlab::ceiling;
using speedlab::device_model;

struct evidence_item {
  std::string name;
  std::string value;
};

struct finding {
  std::string rule;          // "transfer-bound", ...
  std::string title;         // one line
  speedlab::severity severity = speedlab::severity::info;
  std::string point_id;      // empty for findings across points
  std::string workload, variant;
  std::string threshold;     // the rule's threshold, in words
  std::vector<evidence_item> evidence;
  std::string explanation;   // plain words
  std::string next_experiment;
  double estimated_gain = 0; // projected speedup factor of the run if fixed (1 = none)
  // The point this finding judges point_id against (its baseline), empty when it compares
  // with none. A Python variant's baseline is Python, unless the title says "C++".
  std::string compared_with;
};

struct roofline_point {
  std::string point_id, workload, variant, kernel; // kernel empty: the whole compute phase
  std::string processor;     // "gpu" or "cpu"
  double intensity = 0;      // flop per byte
  double achieved_gbps = 0, achieved_gflops = 0;
  double roof_gbps = 0, roof_gflops = 0;
  std::string bound;         // "memory" or "compute" ("unknown" without the needed ceilings)
  double percent_of_bound = 0;
  double time_ns = 0;        // the time the rates are computed from (per repetition)
  bool roof_measured = false; // the roof that bounds this point comes from calibration
  std::string roof_source;    // where that roof came from
  std::string note;           // how the work was attributed (kernels sharing one work model)
  // Placements from hardware counters (the counters backend): one per memory level the
  // kernel's bytes were read at ("dram", "l2", "l1"); empty for the work-model placement.
  std::string level;
  std::string work_source = "work model"; // or "counters": bytes and FLOPs as the hardware counted them
  // A CPU point past its memory roof (percent_of_bound > 100): "cache" when its working set
  // is under twice the last-level cache (as the host rules judge it), else "calibration" (the measured roof is below what this
  // code reaches); "" otherwise.
  std::string above_roof;
  // The kernel's name as the counters pass read it (mangled), where it differs from `kernel`.
  std::string kernel_mangled;
  // The bound by the hardware counters, where a counters pass read the units of ncu's
  // speed-of-light breakdown for this kernel (for a whole compute phase: its longest kernel):
  // the busiest unit ("ALU pipe", "DRAM", ...), its % of peak, "memory" or "compute", and
  // every unit read, busiest first. Empty without such counters: then only the roofline of
  // the work above bounds the row.
  std::string counter_bound, counter_bound_kind;
  double counter_bound_pct = 0;
  std::vector<counters::unit_load> units;
};

struct speedup {
  std::string workload, params_key, variant, baseline;
  double ratio = 0, ci_low = 0, ci_high = 0;
  speedlab::verdict verdict = speedlab::verdict::unclear; // same, slower, faster or unclear
  std::string method;        // "bootstrap", "median-ci", "none" (too few samples)
  std::string point_id, baseline_point_id;
};

struct cost_fit {
  std::string workload, variant, size_param, basis; // basis: "total", "kernel", "transfers", "without_transfers"
  double fixed_ns = 0, per_unit_ns = 0, r2 = 0;
  std::size_t points = 0;
  // Standard errors and covariance of (fixed, per_unit), for the crossover intervals.
  double fixed_se = 0, per_unit_se = 0, covariance = 0;
  std::string params_key;                           // the other parameters of the sweep
  double size_min = 0, size_max = 0;                // swept range
};

struct crossover {
  std::string workload, variant, baseline, size_param;
  bool with_transfers = true;
  std::optional<double> size;         // where the variant starts to beat the baseline
  double size_low = 0, size_high = 0; // interval from the fits' uncertainty
  bool in_range = false;              // inside the swept sizes
  bool extrapolated = false;
  std::string note;                   // "faster at every swept size", ...
  std::string params_key;             // the other parameters of the sweep
  std::string method;                 // "bracket+fit", "bracket-interpolation", "fit", "fit-extrapolation", "none"
  bool faster_above = true;           // false: the variant wins below the size instead
};

struct what_if {
  std::string point_id, workload, variant, scenario; // "kernels take no time", ...
  double measured_ns = 0, projected_ns = 0, max_speedup = 1;
  std::string arithmetic;             // the Amdahl arithmetic, shown to the reader
};

// A variant's own timing of some work beside the profiler's figure for the same
// repetitions (analysis/timing_check.hpp).
struct timing_check {
  std::string point_id, workload, variant;
  std::string name;                 // as the variant reported it: "kernel", "h2d", "d2h", ...
  std::string compared_with;        // the profiler's figure it was set against; empty: none
  std::size_t repetitions = 0;      // repetitions with both figures
  double self_median_ns = 0, profiler_median_ns = 0;
  double median_difference = 0;     // median of (profiler - own) / own over those repetitions
  double max_abs_difference = 0;
  // agree (within 5%), differ, not compared, no counterpart
  timing_verdict verdict = timing_verdict::not_compared;
  std::string note;
};

struct analysis_result {
  device_model device;
  std::vector<roofline_point> roofline;
  std::vector<finding> findings;
  std::vector<speedup> speedups;
  // Per workload and parameters: the fastest C++ variant over the fastest Python one
  // (ratio = Python median / C++ median, above 1: C++ is faster), where both ran validly.
  std::vector<speedup> cpp_over_python;
  std::vector<cost_fit> fits;
  std::vector<crossover> crossovers;
  std::vector<what_if> what_ifs;
  std::vector<timing_check> timing_checks;
  std::vector<std::string> notes;     // things the reader must know (ceilings are estimates, ...)
};

void to_json(nlohmann::json& j, const analysis_result& a);
void from_json(const nlohmann::json& j, analysis_result& a);

} // namespace speedlab::analysis
