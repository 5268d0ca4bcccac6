// JSON for the analysis model (analysis.json in the output folder, device.json, the
// calibration cache). Missing keys keep their defaults so older files still load.
#include "analysis/analysis.hpp"

#include "model/json_support.hpp" // std::optional as null, SPEEDLAB_JSON_FIELDS

namespace speedlab::analysis {

SPEEDLAB_JSON_FIELDS(evidence_item, name, value)
SPEEDLAB_JSON_FIELDS(finding, rule, title, severity, point_id, workload, variant, threshold, evidence, explanation,
                     next_experiment, estimated_gain, compared_with)
SPEEDLAB_JSON_FIELDS(roofline_point, point_id, workload, variant, kernel, processor, intensity,
                     achieved_gbps, achieved_gflops, roof_gbps, roof_gflops, bound, percent_of_bound,
                     time_ns, roof_measured, roof_source, note, level, work_source, above_roof, kernel_mangled,
                     counter_bound, counter_bound_kind, counter_bound_pct, units)
SPEEDLAB_JSON_FIELDS(speedup, workload, params_key, variant, baseline, ratio, ci_low, ci_high, verdict,
                     method, point_id, baseline_point_id)
SPEEDLAB_JSON_FIELDS(cost_fit, workload, variant, size_param, basis, fixed_ns, per_unit_ns, r2, points,
                     fixed_se, per_unit_se, covariance, params_key, size_min, size_max)
SPEEDLAB_JSON_FIELDS(crossover, workload, variant, baseline, size_param, with_transfers, size, size_low,
                     size_high, in_range, extrapolated, note, params_key, method, faster_above)
SPEEDLAB_JSON_FIELDS(what_if, point_id, workload, variant, scenario, measured_ns, projected_ns,
                     max_speedup, arithmetic)
SPEEDLAB_JSON_FIELDS(timing_check, point_id, workload, variant, name, compared_with, repetitions, self_median_ns,
                     profiler_median_ns, median_difference, max_abs_difference, verdict, note)
SPEEDLAB_JSON_FIELDS(analysis_result, device, roofline, findings, speedups, cpp_over_python, fits, crossovers,
                     what_ifs, timing_checks, notes)

} // namespace speedlab::analysis
