// What-if bounds from one point's median time split (Amdahl's law): how fast the run
// could get if one component changed, everything else staying as measured.
//   kernels take no time:        W' = W - K
//   copies use pinned memory:    W' = W - sum_dir P_dir x (1 - pageable_bw_dir / pinned_bw_dir)
//                                (P_dir: pageable copy time of the direction, from the trace)
//   copies overlap kernels:      W' = W - min(H + D, K)
//   data stays on the device:    W' = W - (H + D)
// max_speedup = W / W'.
#pragma once

#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/trace_summary.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

std::vector<what_if> what_ifs_for_point(const point_result& p, const trace_summary* t, const device_model& d);

// The pinned-memory projection: time saved per repetition, and the arithmetic.
struct pinned_projection {
  bool possible = false;  // pageable copies exist and both bandwidths are known
  double saved_ns = 0;
  bool measured = false;  // both bandwidth ratios come from calibration
  std::string arithmetic;
};
pinned_projection project_pinned(const time_split& s, const trace_summary& t, const device_model& d);

} // namespace speedlab::analysis
