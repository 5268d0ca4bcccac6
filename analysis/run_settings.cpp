#include "analysis/run_settings.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

namespace speedlab::analysis {

namespace {

using point_filter = std::function<bool(const point_result&)>;

// The BASE points whose id NEW has too: what compare compares (a repeated id counts once).
std::vector<const point_result*> compared_points(const std::vector<point_result>& base,
                                                 const std::vector<point_result>& next) {
  std::set<std::string> in_new, seen;
  for (const auto& n : next) in_new.insert(n.id);
  std::vector<const point_result*> out;
  for (const auto& b : base)
    if (in_new.count(b.id) && seen.insert(b.id).second) out.push_back(&b);
  return out;
}

// "affects the 4 threads points (vector/threads/n=1024, ...)", "affects all 24 compared points".
std::string affected(const std::vector<const point_result*>& points, const point_filter& pick, const std::string& what) {
  std::vector<std::string> ids;
  for (const auto* p : points)
    if (pick(*p)) ids.push_back(p->id);
  if (ids.empty()) return "affects none of the compared points";
  std::string s = ids.size() == points.size() && points.size() > 1
                      ? fmt::format("affects all {} compared points", ids.size())
                      : fmt::format("affects the {} {}point{}", ids.size(), what.empty() ? "" : what + " ",
                                    ids.size() == 1 ? "" : "s");
  const std::size_t shown = std::min<std::size_t>(ids.size(), 3);
  s += " (";
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + ids[i];
  return s + (ids.size() > shown ? ", ...)" : ")");
}

struct difference_list {
  std::vector<std::string> out;
  const std::vector<const point_result*>& points;
  void add(const std::string& what, const std::string& a, const std::string& b, const point_filter& pick,
           const std::string& kind) {
    if (a == b) return;
    out.push_back(fmt::format("different {}: BASE {}, NEW {}; {}; differences there may come from that, not from the "
                              "change",
                              what, a.empty() ? "none" : a, b.empty() ? "none" : b, affected(points, pick, kind)));
  }
};

bool any_point(const point_result&) { return true; }
bool is_cuda(const point_result& p) { return p.kind == variant_kind::cuda; }

// "measure[vector].min_samples" is the vector workload's own setting; others are the suite's.
std::string setting_workload(const std::string& key) {
  if (key.rfind("measure[", 0) != 0) return "";
  const auto close = key.find(']');
  return key.substr(8, close == std::string::npos ? std::string::npos : close - 8);
}

std::string value_of(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "not set" : it->second;
}

// Settings recorded by a newer speedlab only: said once when one side lacks them.
void recorded_settings(difference_list& d, const run_info& a, const run_info& b) {
  std::set<std::string> keys;
  for (const auto* m : {&a.settings, &b.settings})
    for (const auto& [k, v] : *m) keys.insert(k);
  for (const auto& k : keys) {
    const std::string w = setting_workload(k);
    const point_filter pick = w.empty() ? point_filter(any_point) : [w](const point_result& p) { return p.workload == w; };
    d.add("measurement setting '" + k + "'", value_of(a.settings, k), value_of(b.settings, k), pick, w);
  }
  std::set<std::string> workloads;
  for (const auto* m : {&a.plugin_builds, &b.plugin_builds})
    for (const auto& [w, build] : *m) workloads.insert(w);
  for (const auto& w : workloads) {
    // A workload one run did not plan has no points to compare: nothing to say.
    if (!a.plugin_builds.count(w) || !b.plugin_builds.count(w)) continue;
    d.add("plugin build of '" + w + "'", a.plugin_builds.at(w).words(), b.plugin_builds.at(w).words(),
          [w](const point_result& p) { return p.workload == w && p.language == "c++"; }, w);
  }
}

} // namespace

std::string unoptimized_plugin_warning(const std::string& workload, const std::string& where, const plugin_build& build) {
  return fmt::format("the plugin of workload '{}'{} was built without optimization ({}): timings may be affected, and "
                     "every speedup over its variants is inflated; rebuild it as Release (cmake "
                     "-DCMAKE_BUILD_TYPE=Release)",
                     workload, where.empty() ? "" : " (" + where + ")", build.words());
}

std::vector<std::string> unoptimized_plugin_warnings(const std::vector<point_result>& points) {
  std::map<std::string, plugin_build> unoptimized; // by workload: ordered, one each
  for (const auto& p : points)
    if (p.language == "c++" && p.build.unoptimized()) unoptimized.emplace(p.workload, p.build);
  std::vector<std::string> out;
  for (const auto& [w, build] : unoptimized) out.push_back(unoptimized_plugin_warning(w, "", build));
  return out;
}

std::vector<std::string> settings_differences(const run_info& a, const std::vector<point_result>& base,
                                              const run_info& b, const std::vector<point_result>& next) {
  const auto points = compared_points(base, next);
  difference_list d{{}, points};
  d.add("GPU", a.gpu_name, b.gpu_name, is_cuda, "cuda");
  d.add("CUDA driver", a.driver_version, b.driver_version, is_cuda, "cuda");
  d.add("speedlab version", a.speedlab_version, b.speedlab_version, any_point, "");
  d.add("CPU", a.cpu_model, b.cpu_model, any_point, "");
  d.add("host", a.hostname, b.hostname, any_point, "");
  const bool a_recorded = a.threads > 0, b_recorded = b.threads > 0;
  if (a_recorded != b_recorded) {
    d.out.push_back(fmt::format("{} was written by a speedlab that did not record its threads, measurement settings "
                                "and plugin builds (speedlab {}): those cannot be compared",
                                a_recorded ? "NEW" : "BASE", (a_recorded ? b : a).speedlab_version));
    return d.out;
  }
  if (!a_recorded) return d.out; // both older: nothing more to compare
  d.add(
      "threads (--threads)", std::to_string(a.threads), std::to_string(b.threads),
      [](const point_result& p) { return p.kind == variant_kind::threads; }, "threads");
  recorded_settings(d, a, b);
  return d.out;
}

} // namespace speedlab::analysis
