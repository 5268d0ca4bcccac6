#include "analysis/finding_groups.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "analysis/rules.hpp"

namespace speedlab::analysis {

bool title_figure(const std::string& title, double& value, std::string& unit);

namespace {

// Fraction of a point's time a fix would save.
double saving_of(const finding& f) { return f.estimated_gain > 1 ? 1 - 1 / f.estimated_gain : 0; }

// The share of a repetition a finding is about, when its title says so ("64.7% of the run").
double run_share(const finding& f) {
  double v = 0;
  std::string unit;
  if (f.title.find("of the run") == std::string::npos || !title_figure(f.title, v, unit) || unit != "%") return 0;
  return v / 100;
}

} // namespace

bool title_figure(const std::string& title, double& value, std::string& unit) {
  for (std::size_t i = 0; i < title.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(title[i]))) continue;
    if (i > 0 && (std::isalnum(static_cast<unsigned char>(title[i - 1])) || title[i - 1] == '_')) continue;
    std::size_t j = i;
    while (j < title.size() && (std::isdigit(static_cast<unsigned char>(title[j])) || title[j] == '.')) ++j;
    if (j < title.size() && (title[j] == '%' || title[j] == 'x') &&
        (j + 1 == title.size() || !std::isalnum(static_cast<unsigned char>(title[j + 1])))) {
      value = std::strtod(title.substr(i, j - i).c_str(), nullptr);
      unit = std::string(1, title[j]);
      // "1.34x slower" and "6.31x faster" are figures of opposite sense: never one range.
      for (const char* sense : {" slower", " faster"})
        if (unit == "x" && title.compare(j + 1, std::strlen(sense), sense) == 0) unit += sense;
      return true;
    }
    i = j;
  }
  return false;
}

severity severity_for_saving(double saving, severity rule_severity) {
  const severity by_size = saving >= 0.5 ? severity::critical : saving >= 0.1 ? severity::warning : severity::info;
  return std::max(by_size, rule_severity);
}

std::vector<finding_group> group_findings(const analysis_result& a, const std::vector<point_result>& points) {
  std::map<std::string, const point_result*> by_id;
  std::map<std::string, double> workload_ns;
  for (const auto& p : points) {
    by_id[p.id] = &p;
    if (p.valid() && p.wall.median > 0) workload_ns[p.workload] += p.wall.median;
  }
  auto time_of = [&](const finding& f) {
    auto it = by_id.find(f.point_id);
    return it == by_id.end() ? 0.0 : it->second->wall.median;
  };

  std::map<std::pair<std::string, std::string>, finding_group> groups; // (workload, rule)
  for (std::size_t i = 0; i < a.findings.size(); ++i) {
    const auto& f = a.findings[i];
    auto& g = groups[{f.workload, f.rule}];
    g.rule = f.rule;
    g.workload = f.workload;
    g.findings.push_back(i);
  }

  std::vector<finding_group> out;
  for (auto& [key, g] : groups) {
    std::stable_sort(g.findings.begin(), g.findings.end(), [&](std::size_t x, std::size_t y) {
      const auto &fx = a.findings[x], &fy = a.findings[y];
      const double sx = saving_of(fx) * time_of(fx), sy = saving_of(fy) * time_of(fy);
      if (sx != sy) return sx > sy;
      return fx.severity > fy.severity;
    });
    if (const rule* r = find_rule(g.rule)) g.headline = r->summary();
    if (g.rule == critical_path_rule)
      g.headline = "what sets the step's length, the culprit first (its consequences under it)";
    g.title = a.findings[g.findings.front()].title;
    severity most = severity::info;
    double max_saving = 0, group_ns = 0;
    bool first_figure = true;
    for (std::size_t i : g.findings) {
      const auto& f = a.findings[i];
      if (std::find(g.variants.begin(), g.variants.end(), f.variant) == g.variants.end()) g.variants.push_back(f.variant);
      most = std::max(most, f.severity);
      max_saving = std::max(max_saving, saving_of(f));
      max_saving = std::max(max_saving, run_share(f));
      const double ns = time_of(f);
      group_ns += ns;
      g.saved_ns += ns * saving_of(f);
      const double gain = f.estimated_gain > 1 ? f.estimated_gain : 1;
      g.gain_min = g.findings.front() == i ? gain : std::min(g.gain_min, gain);
      g.gain_max = std::max(g.gain_max, gain);
      double v = 0;
      std::string unit;
      if (title_figure(f.title, v, unit) && (first_figure || unit == g.figure_unit)) {
        g.figure_min = first_figure ? v : std::min(g.figure_min, v);
        g.figure_max = first_figure ? v : std::max(g.figure_max, v);
        g.figure_unit = unit;
        first_figure = false;
      }
    }
    const double total = workload_ns[g.workload];
    g.saved_share = total > 0 ? g.saved_ns / total : 0;
    g.time_share = total > 0 ? group_ns / total : 0;
    g.severity = severity_for_saving(max_saving, most);
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const finding_group& x, const finding_group& y) {
    // What sets the step's length comes first: the other findings' savings are bounded by it.
    if ((x.rule == critical_path_rule) != (y.rule == critical_path_rule)) return x.rule == critical_path_rule;
    if (x.saved_share != y.saved_share) return x.saved_share > y.saved_share;
    if (x.severity != y.severity) return x.severity > y.severity;
    if (x.time_share != y.time_share) return x.time_share > y.time_share;
    return std::tie(x.rule, x.workload) < std::tie(y.rule, y.workload);
  });
  return out;
}

std::map<std::string, std::size_t> top_finding_by_point(const analysis_result& a) {
  std::map<std::string, std::size_t> top;
  for (std::size_t i = 0; i < a.findings.size(); ++i) {
    const auto& f = a.findings[i];
    if (f.point_id.empty()) continue;
    auto it = top.find(f.point_id);
    if (it == top.end()) {
      top.emplace(f.point_id, i);
      continue;
    }
    const auto& best = a.findings[it->second];
    if (saving_of(f) > saving_of(best) || (saving_of(f) == saving_of(best) && f.severity > best.severity))
      it->second = i;
  }
  return top;
}

} // namespace speedlab::analysis
