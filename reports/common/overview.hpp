// The overview every human report opens with: one row per workload x variant (x parameter
// set) at the largest measured size of its sweep, with the figures a reader needs at a
// glance. A lookup over the analysis, shared so Markdown and HTML show the same rows.
// Skipped variants (no GPU, a Python package missing) fold into one row per workload that
// names them with their reasons; every skipped point stays in the full report's tables.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/finding_groups.hpp"
#include "reports/common/report_data.hpp"

namespace speedlab::reports {

// Skipped variants of one workload that share a reason, in the workload's variant order.
struct skipped_variants {
  std::string reason; // the points' reason ("no reason given" when they gave none)
  std::vector<std::string> variants;
};

struct overview_row {
  const point_result* point = nullptr;             // a folded row: its first skipped point
  std::size_t workload_index = 0, sweep_index = 0;
  std::size_t sizes = 1;                           // sizes in its sweep (>1: a sweep one click away)
  const analysis::speedup* speedup = nullptr;      // over serial, when there is one
  const analysis::roofline_point* roof = nullptr;
  const analysis::finding* top = nullptr;          // its finding with the largest saving
  bool fastest = false;                            // lowest valid median of its sweep's rows
  // Not empty: the row folds every skipped variant of its workload (all its sweeps), by reason.
  std::vector<skipped_variants> skipped;
  bool folded() const { return !skipped.empty(); }
  std::size_t skipped_variant_count() const; // distinct variants (one may be skipped for two reasons)
};

std::vector<overview_row> overview_rows(const std::vector<workload_view>& workloads, const analysis_index& index,
                                        const analysis::analysis_result& analysis);

// "3 variants skipped": the variant cell of a folded row.
std::string skipped_label(const overview_row& r);

// A finding in a few words: its title when short, else the rule and the figure it leads with.
std::string short_finding(const analysis::finding& f);

// The parts of a time split in display order with their labels ("kernel", "H2D", ...).
struct split_part_view {
  const char* key;   // "kernel", "h2d", ... (CSS/colour key)
  const char* label; // "kernel", "H2D", ...
  double time_split::*field;
};
const std::vector<split_part_view>& split_parts();
// "H2D 72% · D2H 22% · kernel 3%": the parts of at least 2% of the wall time, largest first.
std::string split_words(const time_split& s);

// A CPU point (serial or threads kind, no device time split): its runner phases as shares of the median repetition,
// "CPU: compute 99%" (parts of at least 2%, largest first); "" without phase timings.
std::string phase_words(const point_result& p);

// A workload's skipped points folded by reason, for the workload sections and the table
// of failed points: the reason once, the variants it covers, how many points.
struct skipped_points {
  std::string workload, reason;
  std::vector<std::string> variants; // in order of first appearance
  std::size_t points = 0;
};
// In the order of the points (workload, then reason by first appearance).
std::vector<skipped_points> fold_skipped_points(const std::vector<point_result>& points);
std::vector<skipped_points> fold_skipped_points(const std::vector<const point_result*>& points);

// The distinct skip reasons of the overview's folded rows, in order of first appearance: a
// row names each by its number ("[1]") and the reasons are written once, under the table
// (nine workloads skipped for the same four reasons would repeat them nine times).
std::vector<std::string> skipped_reasons(const std::vector<overview_row>& rows);
// "[2]": the number of a reason in that list.
std::string reason_mark(const std::vector<std::string>& reasons, const std::string& reason);

// The skipped points grouped by reason across workloads: one row per reason in the table of
// failed points.
struct skipped_reason {
  std::string reason;
  std::size_t points = 0;
  std::vector<skipped_points> workloads; // each workload's variants skipped for it
};
std::vector<skipped_reason> skipped_by_reason(const std::vector<point_result>& points);

// A finding group's figures in words: "9.2%–93.9%" (one value when all agree, "" without).
std::string figure_range(const analysis::finding_group& g);
// The counters' bound of a row, "ALU pipe 81.2% of peak (counters)"; "" without one.
std::string counter_bound_words(const analysis::roofline_point& r);
// Which work a row's roofline placement is of: "declared work" (the plugin's work model) or
// "counted work" (bytes and FLOPs from the counters).
std::string work_words(const analysis::roofline_point& r);
// A point's place under its roof: "83.9% memory", or for a CPU point past its memory roof
// "182.3% memory (above: cache)" (its working set fits in the last-level cache) or
// "105.4% memory (above: roof low?)" (the calibrated roof is below what it reaches).
// With the counters' bound, both, named: "bound: ALU pipe 81.2% of peak (counters);
// declared work: 4.2% of the FLOP roof".
std::string roof_words(const analysis::roofline_point& r);
// The percentage alone, with the same marker: "182.3% (above: cache)".
std::string roof_percent(const analysis::roofline_point& r);

// A speedup in words: "2.12x faster [2.01–2.25]" (the ratio, its verdict and 95% interval),
// or "196x (no interval: under 3 repetitions)" when one side has too few repetitions for
// one: a verdict of "unclear" with a collapsed interval would read as a measured one.
std::string speedup_words(const analysis::speedup& s);
// The ratio and its verdict alone: "2.12x faster", "1.02x faster (same within noise)"; the
// ratio without a verdict when there is no interval.
std::string speedup_ratio_words(const analysis::speedup& s);
// The interval part alone: " [2.01–2.25]", " (no interval: under 3 repetitions)" or "".
std::string speedup_interval(const analysis::speedup& s);

// "up to 1.07x–2.85x faster" or "" when no finding estimates a gain.
std::string gain_range(const analysis::finding_group& g);
// "variant n=1024": a point named inside its workload.
std::string point_label(const point_result& p);

// Anchor of a sweep's section in report.html ("sweep-0-1").
std::string sweep_anchor(std::size_t workload_index, std::size_t sweep_index);

} // namespace speedlab::reports
