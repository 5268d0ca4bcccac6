#include "analysis/rules.hpp"

#include "analysis/text.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {

double rule_context::wall_ns() const {
  if (!point) return 0;
  if (point->split_median && point->split_median->wall_ns > 0) return point->split_median->wall_ns;
  return point->wall.median;
}

const roofline_point* rule_context::kernel_roofline(const std::string& kernel) const {
  for (const auto* r : roofline)
    if (r->kernel == kernel && r->level.empty()) return r; // the work-model placement
  return nullptr;
}

finding start_finding(const std::string& rule, const std::string& threshold, const point_result& point,
                      std::string title, double gain) {
  finding f;
  f.rule = rule;
  f.title = std::move(title);
  f.threshold = threshold;
  f.point_id = point.id;
  f.workload = point.workload;
  f.variant = point.variant;
  f.estimated_gain = text::finite(gain > 0 ? gain : 1);
  f.severity = severity_for_gain(f.estimated_gain);
  return f;
}

finding rule::start(const rule_context& ctx, std::string title, double gain) const {
  return start_finding(name(), threshold(), *ctx.point, std::move(title), gain);
}

std::vector<finding> rule::evaluate(const rule_context& ctx) const {
  if (ctx.scope() != scope() || (scope() == rule_scope::point && !ctx.point)) return {};
  return do_evaluate(ctx);
}

void run_rules(const rule_context& ctx, std::vector<finding>& findings, std::vector<std::string>& notes) {
  for (const auto& [name, rule] : rule_registry()) {
    if (ctx.options.disabled_rules.count(name)) continue;
    try {
      for (auto& f : rule->evaluate(ctx)) findings.push_back(std::move(f));
    } catch (const std::exception& e) {
      notes.push_back("rule " + name + " failed on " + ctx.subject + ": " + e.what());
    }
  }
}

point_result steady_point(const point_result& point, const activity_summary* activity) {
  point_result judged = point;
  if (activity && activity->steady_split) {
    const time_split& s = *activity->steady_split;
    judged.splits = {s};
    judged.split_median = judged.split_q1 = judged.split_q3 = s;
    judged.samples_ns = {s.wall_ns};
    judged.wall = speedlab::stats::summarize(judged.samples_ns);
  }
  return judged;
}

severity severity_for_gain(double gain) {
  if (gain >= 2) return severity::critical;
  if (gain >= 1.1) return severity::warning;
  return severity::info;
}

namespace {
rule_map& registry() {
  static rule_map registry = [] {
    rule_map m;
    add_transfer_rules(m);
    add_gpu_rules(m);
    add_host_rules(m);
    add_counter_rules(m);
    add_activity_rules(m);
    add_rank_rules(m);
    add_python_rules(m);
    return m;
  }();
  return registry;
}
} // namespace

const rule_map& rule_registry() { return registry(); }

bool register_rule(std::unique_ptr<rule> r) {
  if (!r) return false;
  const std::string name = r->name();
  return registry().try_emplace(name, std::move(r)).second;
}

const rule* find_rule(const std::string& name) {
  const auto& r = rule_registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : it->second.get();
}

std::vector<std::string> rule_names() {
  std::vector<std::string> names;
  for (const auto& [n, r] : rule_registry()) names.push_back(n);
  return names;
}

} // namespace speedlab::analysis
