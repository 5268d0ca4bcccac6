// report.md: the human report in GitHub-flavoured Markdown. Deterministic: the same input
// gives the same bytes (no clock reads, no unordered containers), so it is golden-tested.
#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "analysis/finding_groups.hpp"
#include "analysis/run_settings.hpp"
#include "model/atomic_file.hpp"
#include "reports/common/overview.hpp"
#include "model/statistics.hpp"
#include "reports/common/python_table.hpp"
#include "reports/common/report_data.hpp"
#include "reports/common/source_table.hpp"
#include "reports/common/text.hpp"
#include "reports/markdown/markdown_sections.hpp"
#include "reports/markdown/markdown_table.hpp"
#include "reports/reporter.hpp"

namespace speedlab::reports {

namespace {

std::string spread_cell(const summary_stats& s) {
  if (s.count == 0) return "—";
  return "IQR " + fmt_duration(s.q1) + " – " + fmt_duration(s.q3);
}

std::string ci_cell(const summary_stats& s) {
  if (s.count == 0) return "—";
  return fmt_duration(s.ci_low) + " – " + fmt_duration(s.ci_high);
}

std::string noise_cell(const summary_stats& s) {
  return s.count == 0 ? "—" : fmt_percent(100 * s.relative_noise());
}

std::string speedup_cell(const analysis::speedup* s) {
  if (!s) return "—";
  // The interval is numbers and brackets of our own: written as is, not escaped.
  return speedup_words(*s);
}

// Parameters other than the size; "—" when there are none.
std::string params_cell(const std::string& key) { return key.empty() ? "—" : md_code(key); }

std::string split_cell(double part, double wall) {
  if (wall <= 0 || part <= 0) return "—";
  return fmt_percent(100 * part / wall) + " (" + fmt_ms(part) + " ms)";
}

// The overview's time-split cell: the device split, else a CPU point's phases, else "—".
std::string time_split_words(const point_result& p) {
  if (p.split_median && p.split_median->wall_ns > 0) return split_words(*p.split_median);
  const std::string phases = phase_words(p);
  return phases.empty() ? "—" : phases;
}

// How many finding groups the short report (report.md) shows; the rest are in report-full.md.
constexpr std::size_t short_report_groups = 5;

class markdown_writer {
public:
  markdown_writer(const report_input& in)
      : m_in(in), m_index(in.analysis, in.points), m_workloads(group_workloads(in.points)),
        m_groups(analysis::group_findings(in.analysis, in.points)) {}

  // report.md: fits a pull-request comment (overview, the top findings, the run).
  std::string render_short() {
    title_line();
    overview();
    // The content's sections are what their reader came for: in the short report too.
    markdown_sections(m_out, m_in.content.sections);
    // Where the run has Python variants, their readers came for this table.
    cpp_over_python();
    groups(short_report_groups, false);
    source_lines();
    python_lines();
    m_out += "Everything else (every finding with its evidence, per-workload tables, time splits, crossovers, "
             "roofline, what-if bounds, measurement integrity) is in `report-full.md`.\n\n";
    header();
    summary();
    return std::move(m_out);
  }

  // report-full.md: the whole report.
  std::string render_full() {
    title_line();
    overview();
    groups(m_groups.size(), true);
    header();
    markdown_sections(m_out, m_in.content.sections);
    summary();
    for (const auto& w : m_workloads) workload(w);
    roofline();
    what_ifs();
    source_lines();
    python_lines();
    python_variants();
    timing_checks();
    integrity();
    return std::move(m_out);
  }

private:
  const report_input& m_in;
  analysis_index m_index;
  std::vector<workload_view> m_workloads;
  std::vector<analysis::finding_group> m_groups;
  std::string m_out;

  void title_line() {
    const auto& r = m_in.run;
    const auto c = count_statuses(m_in.points);
    m_out += "# speedlab report\n\n";
    // Before any figure: what makes the figures below less trustworthy.
    for (const auto& w : analysis::unoptimized_plugin_warnings(m_in.points)) m_out += "> **Warning:** " + md_text(w) + "\n\n";
    m_out += md_code(r.suite) + " on " + (r.gpu_name.empty() ? "no GPU" : md_text(r.gpu_name)) + ", started " +
             md_text(r.started_at) + fmt::format(": {} points ({} ok), {} findings in {} groups.\n\n", c.total, c.ok,
                                                 m_in.analysis.findings.size(), m_groups.size());
  }

  // One row per workload x variant (x parameter set) at the largest size of its sweep.
  void overview() {
    m_out += "## Overview\n\n";
    const auto rows = overview_rows(m_workloads, m_index, m_in.analysis);
    if (rows.empty()) {
      m_out += "No points.\n\n";
      return;
    }
    m_out += "Largest size of each sweep (**fastest** marks its winner); speedup over the serial variant with its 95% interval; where the time "
             "goes (share of the median repetition; for CPU variants without device data, their phases); % of the roof that bounds it; its largest finding.";
    if (std::any_of(rows.begin(), rows.end(), [](const overview_row& r) { return r.folded(); }))
      m_out += " Skipped variants: one row per workload, each reason written once under the table (every skipped "
               "point is in results.json).";
    m_out += "\n\n";
    table_rows out;
    const auto reasons = skipped_reasons(rows);
    for (const auto& r : rows) {
      const auto& p = *r.point;
      if (r.folded()) {
        std::string why;
        for (const auto& g : r.skipped)
          why += (why.empty() ? "" : "; ") + md_code_list(g.variants) + " " + reason_mark(reasons, g.reason);
        out.push_back({md_code(p.workload), md_text(skipped_label(r)), "—", "skipped", "—", "—", "—", why});
        continue;
      }
      std::string where = md_code(p.params_key().empty() ? "—" : p.params_key());
      if (r.sizes > 1) where += fmt::format(" (largest of {})", r.sizes);
      out.push_back({md_code(p.workload), md_code(p.variant), where,
                     p.valid() && p.wall.count ? (r.fastest ? "**" + fmt_duration(p.wall.median) + " fastest**"
                                                            : fmt_duration(p.wall.median))
                                               : md_text(status_label(p)),
                     speedup_cell(r.speedup), md_text(time_split_words(p)),
                     r.roof && r.roof->roof_gbps + r.roof->roof_gflops > 0
                         ? md_text(roof_words(*r.roof))
                         : "—",
                     r.top ? md_text(short_finding(*r.top)) : "—"});
    }
    table(m_out, {"workload", "variant", "at", "median", "vs serial [95% CI]", "time split", "% of roof", "top finding"},
          out, {false, false, false, true, true, false, true, false});
    for (std::size_t i = 0; i < reasons.size(); ++i)
      m_out += (i ? "\\\n" : "Skipped because: ") + fmt::format("[{}] ", i + 1) + md_text(reasons[i]) +
               (i + 1 == reasons.size() ? "\n\n" : "");
  }

  // Findings grouped by rule and workload, ranked by what fixing them would save.
  void groups(std::size_t limit, bool evidence) {
    if (m_groups.empty()) return;
    m_out += "## Findings\n\n";
    m_out += fmt::format("{} findings in {} groups (one per rule and workload), ranked by what fixing them would save: "
                         "the estimated gain of each point times its share of the workload's measured time.",
                         m_in.analysis.findings.size(), m_groups.size());
    if (limit < m_groups.size()) m_out += fmt::format(" The top {} here; all in `report-full.md`.", limit);
    m_out += "\n\n";
    for (std::size_t i = 0; i < m_groups.size() && i < limit; ++i) group(i + 1, m_groups[i], evidence);
  }

  void group(std::size_t n, const analysis::finding_group& g, bool evidence) {
    const auto& top = m_in.analysis.findings[g.findings.front()];
    m_out += fmt::format("### {}. [{}] ", n, to_string(g.severity)) + md_code(g.rule) +
             (g.workload.empty() ? "" : " in " + md_code(g.workload)) + ": " +
             md_text(g.headline.empty() ? top.title : g.headline) + "\n\n";
    std::string facts = fmt::format("- {} point{}", g.findings.size(), g.findings.size() == 1 ? "" : "s");
    if (const auto range = figure_range(g); !range.empty()) facts += ", " + md_text(range);
    if (const auto gain = gain_range(g); !gain.empty()) facts += "; " + md_text(gain) + " if fixed";
    if (g.saved_share > 0)
      facts += "; would save about " + fmt_percent(100 * g.saved_share) + " of the workload's measured time";
    m_out += facts + ".\n";
    m_out += "- Largest: " + md_text(top.title) + (top.point_id.empty() ? "" : " (" + md_code(top.point_id) + ")") + ".\n";
    if (!top.threshold.empty()) m_out += "- Threshold: " + md_text(top.threshold) + ".\n";
    if (!top.explanation.empty()) m_out += "- " + md_text(top.explanation) + "\n";
    if (!top.next_experiment.empty()) m_out += "- **Next experiment:** " + md_text(top.next_experiment) + "\n";
    m_out += "\n";
    // The points it covers: a line in the short report, a table with evidence in the full one.
    if (!evidence) {
      std::string points;
      const std::size_t shown = std::min<std::size_t>(g.findings.size(), 8);
      for (std::size_t i = 0; i < shown; ++i) {
        const auto& f = m_in.analysis.findings[g.findings[i]];
        const auto* p = m_index.point(f.point_id);
        // A finding of no point (a rank's, the critical path's) by its variant ("rank 1").
        points += (points.empty() ? "" : ", ") + md_code(p                    ? point_label(*p)
                                                         : f.point_id.empty() ? f.variant
                                                                              : f.point_id);
      }
      if (g.findings.size() > shown) points += fmt::format(" and {} more", g.findings.size() - shown);
      m_out += "Points: " + points + ".\n\n";
      return;
    }
    table_rows rows;
    for (std::size_t i : g.findings) {
      const auto& f = m_in.analysis.findings[i];
      const auto* p = m_index.point(f.point_id);
      rows.push_back({md_code(f.point_id.empty() ? f.workload : f.point_id), md_text(to_string(f.severity)),
                      md_text(f.title), p && p->wall.count ? fmt_duration(p->wall.median) : "—",
                      f.estimated_gain > 1 ? fmt_ratio(f.estimated_gain) : "—"});
    }
    table(m_out, {"point", "severity", "finding", "median", "gain if fixed"}, rows, {false, false, false, true, true});
    for (std::size_t i : g.findings) {
      const auto& f = m_in.analysis.findings[i];
      if (f.evidence.empty()) continue;
      m_out += "<details><summary>Evidence: " + md_text(f.point_id.empty() ? f.workload : f.point_id) +
               "</summary>\n\n";
      table_rows ev;
      for (const auto& e : f.evidence) ev.push_back({md_text(e.name), md_text(e.value)});
      table(m_out, {"evidence", "value"}, ev);
      m_out += "</details>\n\n";
    }
  }

  void header() {
    const auto& r = m_in.run;
    m_out += "## Run\n\n";
    table_rows rows = {
        {"suite", md_code(r.suite)},
        {"started (UTC)", md_text(r.started_at)},
        {"host", md_code(r.hostname)},
        {"CPU", md_text(r.cpu_model) + (r.cpu_cores ? fmt::format(" ({} cores)", r.cpu_cores) : "")},
        {"GPU", r.gpu_name.empty() ? "none" : md_text(r.gpu_name)},
        {"speedlab", md_text(r.speedlab_version)},
        {"command", md_code(r.command_line)},
        {"wall time", fmt_duration(r.wall_s * 1e9)},
    };
    std::string profilers;
    for (const auto& p : r.profilers) profilers += (profilers.empty() ? "" : ", ") + md_code(p);
    rows.push_back({"profilers", profilers.empty() ? "none" : profilers});
    table(m_out, {"run", ""}, rows);
    if (!r.notes.empty() || !m_in.analysis.notes.empty()) {
      m_out += "**Notes**\n\n";
      for (const auto& n : r.notes) m_out += "- " + md_text(n) + "\n";
      for (const auto& n : m_in.analysis.notes) m_out += "- " + md_text(n) + "\n";
      m_out += "\n";
    }
  }

  void summary() {
    const auto c = count_statuses(m_in.points);
    m_out += "## Summary\n\n";
    m_out += fmt::format("- {} points: {} ok, {} invalid ({} expected), {} failed, {} crashed, {} timed out, {} skipped.\n",
                         c.total, c.ok, c.invalid, c.expected_invalid, c.failed, c.crashed, c.timeout, c.skipped);
    std::map<severity, int> sev;
    for (const auto& f : m_in.analysis.findings) ++sev[f.severity];
    m_out += fmt::format("- {} findings: {} critical, {} warning, {} info.\n", m_in.analysis.findings.size(),
                         sev[severity::critical], sev[severity::warning], sev[severity::info]);
    std::string names;
    for (const auto& w : m_workloads) names += (names.empty() ? "" : ", ") + md_code(w.name);
    m_out += "- Workloads: " + (names.empty() ? std::string("none") : names) + ".\n\n";
  }

  void workload(const workload_view& w) {
    m_out += "## Workload " + md_code(w.name) + "\n\n";
    skipped_lines(w);
    const std::string baseline = m_index.baseline(w.name);
    for (const auto& s : w.sweeps) {
      if (w.sweeps.size() > 1 || !s.params_key.empty()) m_out += "### Parameters " + md_code(s.params_key) + "\n\n";
      pivot(w, s);
      details(s, baseline);
    }
    if (w.has_splits) splits(w);
    else m_out += "No device time split for this workload (no GPU profiler data).\n\n";
    crossovers(w);
    fits(w);
  }

  // The workload's skipped points: one line per reason, not a row per point.
  void skipped_lines(const workload_view& w) {
    for (const auto& g : fold_skipped_points(w.points))
      m_out += fmt::format("Skipped ({} point{}): ", g.points, g.points == 1 ? "" : "s") + md_code_list(g.variants) +
               ": " + md_text(g.reason) + "\n\n";
  }

  static std::string md_code_list(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + md_code(n);
    return out;
  }

  // Variant x size: the median time, the quick read.
  void pivot(const workload_view& w, const sweep_view& s) {
    if (s.sizes.size() < 2) return;
    m_out += "Median time per repetition:\n\n";
    std::vector<std::string> header = {"variant"};
    for (const auto& size : s.sizes) header.push_back(md_code(size));
    table_rows rows;
    for (const auto& v : w.variants) {
      std::vector<std::string> r = {md_code(v)};
      bool any = false;
      for (const auto& size : s.sizes) {
        std::string cell = "—";
        for (const auto* p : s.points)
          if (p->variant == v && size_label(*p) == size) {
            cell = p->valid() ? fmt_duration(p->wall.median) : status_label(*p);
            any = any || p->status != point_status::skipped; // skipped variants: one line above
          }
        r.push_back(cell);
      }
      if (any) rows.push_back(r);
    }
    std::vector<bool> right(header.size(), true);
    right[0] = false;
    table(m_out, header, rows, right);
  }

  void details(const sweep_view& s, const std::string& baseline) {
    const std::string vs = baseline.empty() ? "speedup" : "vs " + md_code(baseline);
    table_rows rows;
    for (const auto* p : s.points) {
      if (p->status == point_status::skipped) continue; // one line per reason above
      const auto* roof = m_index.roofline(*p);
      const bool have = p->wall.count > 0;
      rows.push_back({md_code(p->variant), md_code(size_label(*p)), md_text(status_label(*p)),
                      have ? fmt_duration(p->wall.median) : "—", spread_cell(p->wall), ci_cell(p->wall),
                      noise_cell(p->wall), have ? fmt_rate(primary_rate(*p, roof)) : "—",
                      roof && roof->roof_gbps + roof->roof_gflops > 0
                          ? md_text(roof_words(*roof))
                          : "—",
                      speedup_cell(m_index.speedup(*p))});
    }
    table(m_out, {"variant", "size", "status", "median", "spread", "95% CI", "noise", "throughput", "% of roof", vs},
          rows, {false, false, false, true, true, true, true, true, true, true});
  }

  void splits(const workload_view& w) {
    m_out += "### Where the time goes\n\n";
    m_out += "Median repetition, share of its wall time (and milliseconds). GPU-busy parts first, then what "
             "the host thread did while the GPU was idle.\n\n";
    table_rows rows;
    for (const auto* p : w.points) {
      if (!p->split_median) continue;
      const auto& s = *p->split_median;
      rows.push_back({md_code(p->variant), md_code(size_label(*p)), fmt_ms(s.wall_ns) + " ms",
                      split_cell(s.kernel, s.wall_ns), split_cell(s.h2d, s.wall_ns), split_cell(s.d2h, s.wall_ns),
                      split_cell(s.copy_other, s.wall_ns), split_cell(s.memset, s.wall_ns),
                      split_cell(s.sync, s.wall_ns), split_cell(s.api, s.wall_ns), split_cell(s.host, s.wall_ns)});
    }
    table(m_out, {"variant", "size", "wall", "kernel", "h2d", "d2h", "other copy", "memset", "sync", "api", "host"},
          rows, {false, false, true, true, true, true, true, true, true, true, true});
  }

  void crossovers(const workload_view& w) {
    table_rows rows;
    for (const auto& x : m_in.analysis.crossovers) {
      if (x.workload != w.name) continue;
      std::string size = x.size ? md_code(x.size_param + "≈" + fmt_sig(*x.size)) : "none";
      std::string interval = x.size ? fmt_sig(x.size_low) + " – " + fmt_sig(x.size_high) : "—";
      std::string where = x.in_range ? "inside the sweep" : x.extrapolated ? "extrapolated" : "outside the sweep";
      rows.push_back({md_code(x.variant), md_code(x.baseline), params_cell(x.params_key), x.with_transfers ? "yes" : "no",
                      size, interval, x.size ? where : "—", md_text(x.note)});
    }
    if (rows.empty()) return;
    m_out += "### Crossover sizes\n\n";
    table(m_out, {"variant", "beats", "parameters", "copies included", "crossover", "interval", "where", "note"}, rows);
  }

  void fits(const workload_view& w) {
    table_rows rows;
    for (const auto& f : m_in.analysis.fits) {
      if (f.workload != w.name) continue;
      rows.push_back({md_code(f.variant), params_cell(f.params_key), md_text(f.basis), fmt_duration(f.fixed_ns),
                      fmt_sig(f.per_unit_ns) + " ns/" + md_text(f.size_param.empty() ? "unit" : f.size_param),
                      fmt_sig(f.r2, 4), std::to_string(f.points)});
    }
    if (rows.empty()) return;
    m_out += "### Cost model (time = fixed + per unit x size)\n\n";
    table(m_out, {"variant", "parameters", "basis", "fixed", "per unit", "R²", "points"}, rows,
          {false, false, false, true, true, true, true});
  }

  void roofline() {
    if (m_in.analysis.roofline.empty()) return;
    m_out += "## Roofline placements\n\n";
    table_rows rows;
    for (const auto& r : m_in.analysis.roofline) {
      rows.push_back({md_code(r.point_id), r.kernel.empty() ? "(whole compute phase)" : md_code(r.kernel),
                      md_text(r.processor), fmt_sig(r.intensity), fmt_sig(r.achieved_gbps),
                      fmt_sig(r.achieved_gflops),
                      fmt_sig(r.roof_gbps) + " GB/s, " + fmt_sig(r.roof_gflops) + " GFLOP/s" +
                          (r.roof_measured ? " (measured)" : " (estimate)"),
                      md_text(r.bound + " (" + work_words(r) + ")"), md_text(roof_percent(r)),
                      r.counter_bound.empty() ? "—" : md_text(counter_bound_words(r))});
    }
    // Two bounds, named apart: the roofline of the work (declared by the plugin, or counted)
    // and, with counters, the busiest unit of ncu's speed-of-light breakdown.
    table(m_out,
          {"point", "kernel", "on", "flop/byte", "GB/s", "GFLOP/s", "roofs", "roofline bound", "% of roof",
           "bound: busiest unit"},
          rows, {false, false, false, true, true, true, false, false, true, false});
  }

  void what_ifs() {
    if (m_in.analysis.what_ifs.empty()) return;
    m_out += "## What-if bounds\n\n";
    table_rows rows;
    for (const auto& w : m_in.analysis.what_ifs)
      rows.push_back({md_code(w.point_id), md_text(w.scenario), fmt_duration(w.measured_ns),
                      fmt_duration(w.projected_ns), fmt_ratio(w.max_speedup), md_text(w.arithmetic)});
    table(m_out, {"point", "if", "measured", "at best", "max speedup", "arithmetic"}, rows,
          {false, false, true, true, true, false});
  }

  // The lessons' Python code beside the C++ variants: who wins by how much, and what the
  // bridge adds to each request (speedlab's timer around the request minus the Python
  // side's perf_counter around the call).
  void python_variants() {
    cpp_over_python();
    bridge_costs();
  }

  void cpp_over_python() {
    if (!m_in.analysis.cpp_over_python.empty()) {
      m_out += "## Best C++ over best Python\n\n";
      m_out += "Per workload and parameters, the fastest valid C++ variant against the fastest valid Python one "
               "(median wall per repetition; 95% interval of the ratio).\n\n";
      table_rows rows;
      for (const auto& s : m_in.analysis.cpp_over_python)
        rows.push_back({md_code(s.workload), params_cell(s.params_key), md_code(s.variant), md_code(s.baseline),
                        speedup_cell(&s)});
      table(m_out, {"workload", "parameters", "best C++", "best Python", "C++ speedup"}, rows,
            {false, false, false, false, true});
    }
  }

  void bridge_costs() {
    table_rows rows;
    for (const auto& p : m_in.points) {
      if (p.language != "python" || !p.valid()) continue;
      auto own = p.self_timed_ns.find("python compute");
      auto phase = p.phase_median_ns.find("compute");
      if (own == p.self_timed_ns.end() || own->second.empty() || phase == p.phase_median_ns.end()) continue;
      const double own_median = stats::quantile(own->second, 0.5);
      rows.push_back({md_code(p.id), fmt_duration(phase->second), fmt_duration(own_median),
                      fmt_duration(phase->second - own_median)});
    }
    if (rows.empty()) return;
    m_out += "### The Python bridge's cost per request\n\n";
    m_out += "compute as speedlab timed the request, as the Python side timed the call (time.perf_counter_ns), "
             "and the difference: the bridge's round trip (JSON over a socket), medians.\n\n";
    table(m_out, {"point", "speedlab", "python", "bridge"}, rows, {false, true, true, true});
  }

  // The source pass's top lines per kernel (only runs with the source backend).
  void source_lines() {
    const auto rows = source_rows(m_in.points);
    if (rows.empty()) return;
    m_out += "## Source lines\n\n";
    m_out += std::string(source_table_intro) + "\n\n";
    table_rows cells;
    for (const auto& r : rows)
      cells.push_back({md_code(r.point), md_code(r.kernel), md_code(r.line), r.share, md_text(r.stalls), r.sectors,
                       r.text.empty() ? "—" : md_code(r.text)});
    table(m_out, {"point", "kernel", "line", "samples", "stalls", "sectors/request", "source"}, cells,
          {false, false, false, true, false, true, false});
  }

  // The lines of the Python variants' code behind their CUDA calls (traced Python workers only).
  void python_lines() { markdown_sections(m_out, python_point_sections(m_in.points)); }

  void timing_checks() {
    if (m_in.analysis.timing_checks.empty()) return;
    m_out += "## The variants' own timings beside the profiler's\n\n";
    m_out += "Difference = (profiler - own) / own, per repetition; the median decides (agree: within 5%).\n\n";
    table_rows rows;
    for (const auto& c : m_in.analysis.timing_checks)
      rows.push_back({md_code(c.point_id), md_code(c.name), fmt_duration(c.self_median_ns),
                      c.repetitions ? fmt_duration(c.profiler_median_ns) : "—",
                      c.repetitions ? fmt_signed_percent(100 * c.median_difference) : "—",
                      c.repetitions ? fmt_percent(100 * c.max_abs_difference) : "—", std::to_string(c.repetitions),
                      md_text(to_string(c.verdict) + (c.note.empty() ? "" : ": " + c.note))});
    table(m_out, {"point", "own timing", "own (median)", "profiler (median)", "difference", "largest difference (abs)",
                  "repetitions", "verdict"},
          rows, {false, false, true, true, true, true, true, false});
  }

  void integrity() {
    m_out += "## Measurement integrity\n\n";
    device();
    profilers();
    noise();
    problems();
  }

  void device() {
    const auto& d = m_in.analysis.device;
    m_out += "### Device\n\n";
    if (d.gpu_name.empty()) m_out += "No GPU model: CPU-only results.\n\n";
    else m_out += "GPU: " + md_text(d.gpu_name) + "\n\n";
    if (!d.properties.empty()) {
      table_rows rows;
      for (const auto& [k, v] : d.properties) rows.push_back({md_code(k), md_text(v)});
      table(m_out, {"property", "value"}, rows);
    }
    table_rows ceilings;
    for (const auto* group : {&d.gpu, &d.host})
      for (const auto& [k, c] : *group)
        ceilings.push_back({group == &d.gpu ? "GPU" : "host", md_code(k), fmt::format("{}{}{}", fmt_sig(c.value), c.unit.empty() ? "" : " ", md_text(c.unit)),
                            c.measured ? "measured" : "estimate", md_text(c.source)});
    if (!ceilings.empty()) table(m_out, {"on", "ceiling", "value", "kind", "source"}, ceilings, {false, false, true, false, false});
  }

  void profilers() {
    m_out += "### Profilers\n\n";
    std::map<std::string, int> backends;
    for (const auto& p : m_in.points) ++backends[p.profiler.empty() ? "none" : p.profiler];
    std::string used;
    for (const auto& [b, n] : backends) used += (used.empty() ? "" : ", ") + md_code(b) + fmt::format(" ({} points)", n);
    m_out += "- Backends that produced the data: " + used + ".\n";

    // Messages, deduplicated, with how many points said them.
    std::map<std::string, std::vector<std::string>> messages;
    for (const auto& p : m_in.points)
      for (const auto& m : p.profiler_messages) messages[m].push_back(p.id);
    if (messages.empty()) m_out += "- No profiler messages.\n";
    m_out += "\n";
    if (!messages.empty()) {
      table_rows rows;
      for (const auto& [m, ids] : messages) {
        std::string where = md_code(ids.front());
        if (ids.size() > 1) where += fmt::format(" and {} more", ids.size() - 1);
        rows.push_back({md_text(m), std::to_string(ids.size()), where});
      }
      table(m_out, {"profiler message", "points", "first point"}, rows, {false, true, false});
    }

    // Facts from the device traces: overhead, dropped records, buffers.
    table_rows traces, dropped;
    for (const auto& p : m_in.points) {
      if (p.trace_file.empty() && !p.dropped_records) continue;
      std::string error;
      auto facts = collect_trace_facts(load_trace_safely(m_in.load_trace, p, error));
      if (!error.empty())
        traces.push_back({md_code(p.id), "unreadable: " + md_text(error), "—", "—", "—", "—", "—"});
      if (facts.has_trace) {
        double overhead = 0;
        std::string kinds;
        for (const auto& [k, ns] : facts.overhead_ns) {
          overhead += ns;
          kinds += (kinds.empty() ? "" : ", ") + md_text(k);
        }
        const std::string share = facts.traced_span_ns > 0 ? fmt_percent(100 * overhead / facts.traced_span_ns) : "—";
        traces.push_back({md_code(p.id), md_text(facts.backend),
                          fmt::format("{} / {} / {} / {}", facts.kernels, facts.memcpys, facts.memsets, facts.api_calls),
                          std::to_string(facts.ranges), overhead > 0 ? fmt_duration(overhead) + " (" + kinds + ")" : "none",
                          share, facts.buffer_bytes ? fmt_bytes(static_cast<double>(facts.buffer_bytes)) : "—"});
      }
      const auto drops = std::max<std::uint64_t>(p.dropped_records, facts.dropped_records);
      if (drops) dropped.push_back({md_code(p.id), std::to_string(drops)});
    }
    if (!traces.empty()) {
      m_out += "Device traces (kernels / copies / memsets / API calls, NVTX ranges, profiler overhead and its share "
               "of the traced repetitions, peak buffer memory):\n\n";
      table(m_out, {"point", "backend", "records", "ranges", "overhead", "share", "buffers"}, traces,
            {false, false, true, true, true, true, true});
    }
    m_out += "#### Dropped records\n\n";
    if (dropped.empty()) m_out += "None: every activity record the profiler produced was kept.\n\n";
    else {
      m_out += "Records were lost; the time split of these points undercounts GPU activity.\n\n";
      table(m_out, {"point", "dropped records"}, dropped, {false, true});
    }
  }

  void noise() {
    m_out += "### Noise\n\n";
    m_out += "Noise is the half-width of the 95% confidence interval of the median, relative to the median.\n\n";
    std::vector<const point_result*> measured;
    for (const auto& p : m_in.points)
      if (p.wall.count > 0 && p.wall.median > 0) measured.push_back(&p);
    if (measured.empty()) {
      m_out += "No measured points.\n\n";
      return;
    }
    std::vector<double> noise;
    for (const auto* p : measured) noise.push_back(p->wall.relative_noise());
    std::sort(noise.begin(), noise.end());
    const double median = noise[noise.size() / 2];
    std::size_t above = 0;
    for (double n : noise) above += n > 0.05;
    m_out += fmt::format("- Median noise over {} measured points: {}; worst: {}; {} above 5%.\n", measured.size(),
                         fmt_percent(100 * median), fmt_percent(100 * noise.back()), above);
    std::map<std::string, int> stops;
    for (const auto* p : measured) ++stops[p->stop_reason.empty() ? "unspecified" : p->stop_reason];
    std::string s;
    for (const auto& [reason, n] : stops) s += (s.empty() ? "" : "; ") + md_text(reason) + fmt::format(" ({})", n);
    m_out += "- Stopping rules that ended the measurements: " + s + ".\n\n";
    table_rows rows;
    for (const auto* p : measured)
      if (p->wall.relative_noise() > 0.05)
        rows.push_back({md_code(p->id), noise_cell(p->wall), std::to_string(p->wall.count), md_text(p->stop_reason)});
    if (!rows.empty()) table(m_out, {"noisy point", "noise", "samples", "stopped by"}, rows, {false, true, true, false});
  }

  void problems() {
    m_out += "### Failed and invalid points\n\n";
    table_rows rows;
    for (const auto& p : m_in.points) {
      if (p.valid() || p.status == point_status::skipped) continue;
      std::string validation = !p.last_validation.message.empty() ? p.last_validation.message : p.first_validation.message;
      rows.push_back({md_code(p.id), md_text(status_label(p)),
                      p.expected_invalid ? "deliberately wrong variant: invalid as intended" : md_text(p.reason),
                      md_text(validation)});
    }
    // Skipped points: one row per reason, naming each workload's variants (results.json
    // keeps every point).
    for (const auto& r : skipped_by_reason(m_in.points)) {
      std::string where;
      for (const auto& g : r.workloads)
        where += (where.empty() ? "" : "; ") + md_code(g.workload) + " (" + md_code_list(g.variants) + ")";
      rows.push_back({fmt::format("{} point{}: ", r.points, r.points == 1 ? "" : "s") + where, "skipped",
                      md_text(r.reason), ""});
    }
    if (rows.empty()) {
      m_out += "None: every point ran and validated.\n\n";
      return;
    }
    table(m_out, {"point", "status", "reason", "validation"}, rows);
    std::size_t checked = 0, passed = 0;
    for (const auto& p : m_in.points)
      if (p.last_validation.checked) {
        ++checked;
        passed += p.last_validation.ok;
      }
    m_out += fmt::format("Validation: {} of {} checked points passed.\n", passed, checked);
  }
};

class markdown_reporter final : public reporter {
public:
  markdown_reporter()
      : reporter("markdown", "report.md: overview and the top findings (fits a pull-request comment); report-full.md: "
                             "everything (GitHub Markdown)") {}
  std::vector<std::filesystem::path> write(const report_input& in, const std::filesystem::path& dir) override {
    const auto path = dir / "report.md", full = dir / "report-full.md";
    write_file_atomically(path, markdown_writer(in).render_short());
    write_file_atomically(full, markdown_writer(in).render_full());
    return {path, full};
  }
};

} // namespace

std::unique_ptr<reporter> make_markdown_reporter() { return std::make_unique<markdown_reporter>(); }

} // namespace speedlab::reports
