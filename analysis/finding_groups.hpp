// Findings grouped and ranked for a reader: one group per rule and workload (the points it
// covers, the range of their figures), ranked by what fixing it would save. The rules emit
// one finding per point; a report of 69 points would otherwise repeat "pageable-memory" for
// every point it touches. Reporters render these groups; they do not rank.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

struct finding_group {
  std::string rule, workload;
  speedlab::severity severity = speedlab::severity::info; // the most severe of its findings, raised by magnitude
  std::string headline;             // the rule's one-line summary
  std::string title;                // the title of its largest finding
  std::vector<std::size_t> findings; // indices into analysis_result::findings, largest saving first
  std::vector<std::string> variants; // the variants it touches, in findings order, unique
  // The figure each title leads with ("93.9%", "1.82x"): its range over the group.
  double figure_min = 0, figure_max = 0;
  std::string figure_unit;           // "%", "x", "x slower", "x faster" or empty when the titles carry no figure
  double gain_min = 1, gain_max = 1; // estimated speedup if fixed, over the group's points
  // What fixing it would save: sum over its points of median time x (1 - 1/gain), and that
  // as a share of the workload's measured time (sum of its valid points' medians).
  double saved_ns = 0, saved_share = 0;
  double time_share = 0; // the group's points' time as a share of the workload's
};

// The figure a finding title leads with: the first number followed by '%' or 'x'
// ("93.9% of the run ..." -> 93.9 "%"). False when there is none.
bool title_figure(const std::string& title, double& value, std::string& unit);

// Severity from magnitude: the larger of a point's saving share (1 - 1/gain) and the share of
// its run the finding is about ("64.7% of the run ..."): >= 50% critical, >= 10% warning,
// never below the rule's own severity.
severity severity_for_saving(double saving, severity rule_severity);

// The critical path's rule (analysis/critical_path.hpp): its group ranks first, the culprit
// at its head and its consequences (the ranks that wait for it) under it.
inline constexpr const char* critical_path_rule = "critical-path";

// Groups ranked: the critical path's first, then larger saved_share first, then severity, then rule and workload names.
std::vector<finding_group> group_findings(const analysis_result& a, const std::vector<point_result>& points);

// The finding with the largest saving for each point (index into analysis_result::findings).
std::map<std::string, std::size_t> top_finding_by_point(const analysis_result& a);

} // namespace speedlab::analysis
