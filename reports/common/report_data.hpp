// Read-only views over a report_input that every human-facing reporter needs: points
// grouped by workload and sweep, the analysis entries that belong to a point, derived
// rates and the order things are listed in. Nothing here measures or analyses; it only
// looks things up, so markdown and HTML show the same numbers.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"
#include "model/trace.hpp"

namespace speedlab::reports {

// Rates over the whole repetition (median wall time, transfers included).
double wall_gbps(const point_result& p);   // bytes read + written per ns = GB/s; 0 if unknown
double wall_gflops(const point_result& p); // 0 if no flop count
double wall_items_per_s(const point_result& p);

// The one rate a table shows for a point: GFLOP/s where the analysis says the point is
// compute-bound or only flops are known, GB/s where bytes are known, items/s otherwise.
struct rate {
  double value = 0;
  std::string unit; // empty: no work figures
};
rate primary_rate(const point_result& p, const analysis::roofline_point* roof);
std::string fmt_rate(const rate& r);

// "n=1024" (the size parameter) or all parameters when there is no size.
std::string size_label(const point_result& p);
// "ok", "invalid (expected)", "crashed", ...
std::string status_label(const point_result& p);

// One sweep inside a workload: the points that share every parameter but the size.
struct sweep_view {
  std::string params_key; // params without the size ("" when the size is the only one)
  std::vector<std::string> sizes;              // size labels, ascending by size value
  std::vector<const point_result*> points;     // by variant order, then size
};

struct workload_view {
  std::string name;
  std::vector<std::string> variants;           // first-appearance order in the results
  std::vector<sweep_view> sweeps;              // first-appearance order
  std::vector<const point_result*> points;     // all, in table order
  bool has_splits = false;
};

std::vector<workload_view> group_workloads(const std::vector<point_result>& points);

// Lookups into analysis_result by point.
class analysis_index {
public:
  analysis_index(const analysis::analysis_result& a, const std::vector<point_result>& points);
  // The whole-compute placement of a point (kernel empty) or, failing that, its first.
  const analysis::roofline_point* roofline(const point_result& p) const;
  const analysis::speedup* speedup(const point_result& p) const;
  const point_result* point(const std::string& id) const;
  // Baseline variant named by the speedups of a workload ("serial" usually); empty if none.
  std::string baseline(const std::string& workload) const;

private:
  std::map<std::string, const point_result*> m_points;
  std::map<std::string, const analysis::roofline_point*> m_roofline;
  std::map<std::string, const analysis::speedup*> m_speedup_by_point;
  std::map<std::string, std::string> m_baseline;
};

// Counts by status for the summary line.
struct status_counts {
  std::size_t total = 0, ok = 0, invalid = 0, expected_invalid = 0, failed = 0, crashed = 0,
              timeout = 0, skipped = 0;
};
status_counts count_statuses(const std::vector<point_result>& points);

// The point's device trace via in.load_trace; nullopt when there is none. A trace that cannot
// be read (corrupt file, ...) also gives nullopt, with the reason in `error`, so one bad file
// does not take the whole report down.
std::optional<trace::device_trace> load_trace_safely(
    const std::function<std::optional<trace::device_trace>(const point_result&)>& load, const point_result& p,
    std::string& error);

// Per-point facts from the device trace that the integrity section reports.
struct trace_facts {
  bool has_trace = false, has_gpu = false;
  std::string backend, note;
  std::size_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, ranges = 0;
  std::uint64_t dropped_records = 0, buffer_bytes = 0;
  std::map<std::string, double> overhead_ns; // by kind
  double traced_span_ns = 0;                 // first to last repetition window
  std::string error;                         // why the trace could not be read
};
trace_facts collect_trace_facts(const std::optional<trace::device_trace>& t);

} // namespace speedlab::reports
