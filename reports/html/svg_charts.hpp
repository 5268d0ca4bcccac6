// Inline SVG charts for report.html, generated from the report's data (no script, no
// external resources). Every string that comes from results goes through the escaping
// html::writer; chart text therefore cannot inject markup.
#pragma once

#include <optional>
#include <string>

#include "analysis/critical_path.hpp"
#include "analysis/python_lines.hpp"
#include "analysis/rank_analysis.hpp"
#include "reports/common/report_data.hpp"
#include "reports/html/html_writer.hpp"

namespace speedlab::reports::html {

// Colour of a time-split part ("kernel", "h2d", ...), shared by charts and legends.
const char* split_colour(std::string_view part);

// A small stacked bar of one time split (160 px, parts in split_colour), for table cells.
void split_bar(writer& w, const time_split& s);

// Median time versus size (log-log), one line per variant with 95% CI whiskers, and the
// analysis' crossover sizes (copies included) with their interval. False when nothing to draw.
bool time_chart(writer& w, const workload_view& wl, const sweep_view& sweep, const analysis::analysis_result& analysis);

// Stacked horizontal bars: where each repetition's wall time goes, one bar per point with a
// split. Returns false (and writes nothing) when no point has one.
bool split_chart(writer& w, const workload_view& wl);

// Speedup over the baseline versus size (log-log), one line per variant, 95% CI whiskers,
// break-even line and the analysis' crossover sizes. False when there is nothing to draw.
bool speedup_chart(writer& w, const workload_view& wl, const sweep_view& sweep, const analysis_index& index,
                   const analysis::analysis_result& analysis);

// Roofline (log-log): each processor's roofs and every placement. Placements that cannot sit
// on log axes (no flops) are listed under the chart. False without placements.
bool roofline_chart(writer& w, const analysis::analysis_result& analysis);

// The phases of one repetition of a point on lanes: runner phases, NVTX ranges, CUDA API
// calls per host thread, GPU work per stream, synchronization. False without a trace window.
bool timeline_chart(writer& w, const point_result& p, const trace::device_trace& t);

// Ranks of a profiled job by time: one row per rank on the ranks' common clock, each step a
// bar split into compute, communication and idle (neighbouring steps merged when there are
// more than fit), the straggler's row highlighted and named, each rank's median compute and
// wait per step at the right. False with fewer than two ranks.
bool rank_timeline_chart(writer& w, const analysis::rank_analysis& ranks);

// The critical path of the median step (analysis/critical_path.hpp): one lane per rank and
// thread or stream it visits, each segment coloured by kind, its name in the tooltip (escaped
// as all chart text). False without a step to draw.
bool critical_path_chart(writer& w, const analysis::critical_path& path);
// The folded Python stacks (analysis/python_lines.hpp) as an icicle flame graph: the
// outermost frame on top, each frame as wide as the GPU time it launched plus the time it
// blocked; false (nothing drawn) without weight.
bool python_flame_chart(writer& w, const analysis::python_lines& lines);

} // namespace speedlab::reports::html
