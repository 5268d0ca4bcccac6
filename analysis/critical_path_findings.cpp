// The critical path's figures (items per step, the culprit) and the findings it ranks.
#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/critical_path.hpp"
#include "analysis/finding_groups.hpp"
#include "analysis/text.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {
namespace {

double median(std::vector<double> v) { return v.empty() ? 0.0 : speedlab::stats::quantile(std::move(v), 0.5); }

// The steps the figures are medians over: all but the first (it has no previous end).
std::vector<const step_path*> judged_steps(const critical_path& p) {
  std::vector<const step_path*> out;
  for (std::size_t k = p.steps.size() > 1 ? 1 : 0; k < p.steps.size(); ++k) out.push_back(&p.steps[k]);
  return out;
}

void path_items(critical_path& p, const std::vector<const step_path*>& judged) {
  using key = std::tuple<int, std::uint32_t, segment_kind, std::string, bool>;
  std::map<key, std::vector<double>> per_step;
  for (std::size_t k = 0; k < judged.size(); ++k)
    for (const auto& s : judged[k]->segments) {
      auto& v = per_step[{s.rank, s.pid, s.kind, s.name, s.pageable}];
      v.resize(judged.size(), 0.0);
      v[k] += s.ns();
    }
  for (auto& [k, v] : per_step) {
    path_item it;
    std::tie(it.rank, it.pid, it.kind, it.name, it.pageable) = k;
    it.per_step_ns = median(v);
    it.share = p.median_step_ns > 0 ? it.per_step_ns / p.median_step_ns : 0;
    if (it.per_step_ns > 0) p.items.push_back(std::move(it));
  }
  std::stable_sort(p.items.begin(), p.items.end(),
                   [](const auto& a, const auto& b) { return a.per_step_ns > b.per_step_ns; });
}

// The rank the others wait for: the rank the step's path lies on longest, when the other
// ranks' waits for it at the step's collectives (the largest of their sums) reach 5% of
// the step and 100 us, in the median step.
void rank_culprit(critical_path& p, const std::vector<const step_path*>& judged) {
  std::vector<double> waits;
  std::map<int, std::size_t> on_path;
  std::vector<std::vector<double>> per_rank(p.ranks.size());
  for (const auto* s : judged) {
    std::map<int, double> by_rank;
    for (const auto& g : s->segments) by_rank[g.rank] += g.ns();
    if (by_rank.empty()) continue;
    const int q =
        std::max_element(by_rank.begin(), by_rank.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    std::vector<double> waited(p.ranks.size(), 0.0); // by input index
    for (const auto& j : s->jumps)
      if (j.last_rank == q)
        for (std::size_t r = 0; r < j.wait_ns.size() && r < waited.size(); ++r) waited[r] += j.wait_ns[r];
    for (std::size_t r = 0; r < waited.size(); ++r) per_rank[r].push_back(waited[r]);
    waits.push_back(waited.empty() ? 0.0 : *std::max_element(waited.begin(), waited.end()));
    if (q >= 0) ++on_path[q];
  }
  const double w = median(waits);
  if (on_path.empty() || w < std::max(0.05 * p.median_step_ns, 100e3)) return;
  path_culprit c;
  c.rank =
      std::max_element(on_path.begin(), on_path.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  c.others_wait_ns = w;
  for (std::size_t r = 0; r < p.ranks.size(); ++r)
    if (p.ranks[r] != c.rank) c.waiting.emplace_back(p.ranks[r], median(per_rank[r]));
  p.culprit = c;
}

} // namespace

void summarize_path(critical_path& p) {
  const auto judged = judged_steps(p);
  p.judged = judged.size();
  std::vector<double> lengths;
  for (const auto* s : judged) lengths.push_back(s->length_ns());
  p.median_step_ns = median(lengths);
  path_items(p, judged);
  rank_culprit(p, judged);
}

namespace {

std::string what_of(const path_culprit& c) {
  switch (c.kind) {
  case segment_kind::kernel:
    return "GPU work (kernel " + c.name + ")";
  case segment_kind::copy:
    return "a " + c.name;
  case segment_kind::memset:
    return "memsets";
  case segment_kind::host:
    return "host work (range " + c.name + ")";
  case segment_kind::api:
    return "API calls (" + c.name + ")";
  default:
    return c.name;
  }
}

severity severity_for_share(double share) {
  return share >= 0.25 ? severity::critical : share >= 0.1 ? severity::warning : severity::info;
}

finding path_finding(std::string variant, std::string title, double step, double cost) {
  finding f;
  f.rule = critical_path_rule;
  f.workload = "ranks";
  f.variant = std::move(variant);
  f.title = std::move(title);
  f.threshold = "on the critical path of the median step: a rank others wait for at least 5% of the step (and 100 us), "
                "or host work after a per-step synchronization at least 5% of the step";
  const double share = step > 0 ? cost / step : 0;
  f.severity = severity_for_share(share);
  f.estimated_gain = text::finite(step > cost && cost > 0 ? step / (step - cost) : 1);
  return f;
}

void rank_findings(const critical_path& p, std::vector<finding>& out, std::vector<what_if>& what_ifs) {
  const path_culprit& c = *p.culprit;
  const std::string who = fmt::format("rank {}", c.rank);
  const double step = p.median_step_ns;
  finding f = path_finding(
      who,
      fmt::format("{}: {} per step of {} that the other ranks wait for ({} of the step on the critical path)", who,
                  text::time(c.cost_ns), what_of(c), text::percent(step > 0 ? c.cost_ns / step : 0)),
      step, c.cost_ns);
  f.evidence = {
      {"median step (critical path)", text::time(step)},
      {"the others' wait at the collectives", fmt::format("{} per step (median)", text::time(c.others_wait_ns))},
      {"steps judged", fmt::format("{} ({})", p.judged, p.step_method)}};
  for (const auto& it : p.items)
    if (it.rank == c.rank && f.evidence.size() < 8)
      f.evidence.push_back(
          {fmt::format("on the path: {} {}", to_string(it.kind), it.name), text::time(it.per_step_ns)});
  f.explanation =
      "The critical path of each step runs through " + who +
      ": the collectives end only when it arrives, so the other ranks' waiting (shown under this finding) is "
      "its consequence, and the step is as long as its work.";
  f.next_experiment = "Make " + who + "'s " + what_of(c) +
                      " match the other ranks (balance the work, move it off the step), "
                      "then compare the step time.";
  const double saved = std::min(c.cost_ns, c.others_wait_ns);
  const double projected = std::max(step - saved, c.others_host_step_ns);
  f.estimated_gain = text::finite(projected > 0 && step > projected ? step / projected : 1);
  out.push_back(f);
  for (const auto& [rank, waited] : c.waiting) {
    finding wait =
        path_finding(fmt::format("rank {}", rank),
                     fmt::format("consequence of {}: rank {} waits {} per step in collectives (its GPU idles)", who,
                                 rank, text::time(waited)),
                     step, 0);
    wait.severity = severity::info;
    wait.estimated_gain = f.estimated_gain; // fixed by the same fix
    wait.explanation = "Not a cause of its own: this wait disappears when " + who + " matches the others.";
    out.push_back(std::move(wait));
  }
  what_ifs.push_back(
      {"", "ranks", who, who + " matched the others", step, projected, f.estimated_gain,
       fmt::format("W' = max(step - min(its excess, the others' wait), the others' host step) = max({} - "
                   "min({}, {}), {}) = {}",
                   text::time(step), text::time(c.cost_ns), text::time(c.others_wait_ns),
                   text::time(c.others_host_step_ns), text::time(projected))});
}

void sync_findings(const critical_path& p, std::vector<finding>& out, std::vector<what_if>& what_ifs) {
  const path_culprit& c = *p.culprit;
  const double step = p.median_step_ns;
  finding f = path_finding(
      c.pid ? fmt::format("pid {}", c.pid) : "program",
      fmt::format("the per-step synchronization ({}): the host waits {} per step for the GPU, then {} of host work "
                  "(range {}) runs with the GPU idle ({} of the step on the critical path)",
                  c.sync_call, text::time(c.sync_wait_ns), text::time(c.cost_ns), c.name,
                  text::percent(step > 0 ? c.cost_ns / step : 0)),
      step, c.cost_ns);
  f.workload = "program";
  f.evidence = {{"median step (critical path)", text::time(step)},
                {"blocked in " + c.sync_call, fmt::format("{} per step (median)", text::time(c.sync_wait_ns))},
                {"host work after it, GPU idle", fmt::format("{} per step (median)", text::time(c.cost_ns))},
                {"steps judged", fmt::format("{} ({})", p.judged, p.step_method)}};
  f.explanation = "Each step ends by waiting for the GPU (" + c.sync_call +
                  "), so the host work that follows cannot overlap the GPU's work: both are on the critical path.";
  f.next_experiment = "Read the result back less often (every N steps), or prepare the next step's data before waiting "
                      "(a loader thread or prefetch); compare the step time.";
  out.push_back(std::move(f));
  what_ifs.push_back({"", "program", "", "the host work overlapped the GPU (no per-step synchronization)", step,
                      step - c.cost_ns, step > c.cost_ns ? step / (step - c.cost_ns) : 1,
                      fmt::format("W' = step - host work after the sync = {} - {} = {}", text::time(step),
                                  text::time(c.cost_ns), text::time(step - c.cost_ns))});
}

} // namespace

void critical_path_findings(const critical_path& p, std::vector<finding>& findings, std::vector<what_if>& what_ifs) {
  if (!p.culprit || p.culprit->cost_ns <= 0) return;
  std::vector<finding> mine;
  if (p.culprit->rank >= 0)
    rank_findings(p, mine, what_ifs);
  else
    sync_findings(p, mine, what_ifs);
  findings.insert(findings.begin(), mine.begin(), mine.end());
}

} // namespace speedlab::analysis
