// Rules across the ranks of a job (rank_analysis.hpp), of scope job: they read
// rule_context::ranks, the job's cross-rank analysis, which only analyze_ranks sets (on the
// job as a whole, then on each rank with rule_context::rank); rule::evaluate keeps suite
// points and single processes from them. Their findings name the rank ("rank 3") as the variant of workload "ranks".
#include "analysis/rules.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "analysis/rank_analysis.hpp"
#include "analysis/rule_support.hpp"
#include "analysis/text.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {
namespace {

// A finding about a rank: its rule, threshold and label; no point id (a rank is no point).
finding rank_finding(const rule& r, const rank_summary& rank, std::string title, double gain) {
  finding f;
  f.rule = r.name();
  f.threshold = r.threshold();
  f.workload = "ranks";
  f.variant = rank_label(rank);
  f.title = std::move(title);
  f.estimated_gain = text::finite(gain > 1 ? gain : 1);
  f.severity = severity_for_gain(f.estimated_gain);
  return f;
}

double median_of(std::vector<double> v) { return speedlab::stats::quantile(std::move(v), 0.5); }

// ---- straggler: the job as a whole ----
class straggler_rule final : public rule {
public:
  straggler_rule()
      : rule({.name = "straggler",
              .threshold = "one rank's median compute per step more than 5% (and 10 us) above the others' median",
              .summary = "one rank computes longer per step than the others, who wait for it in each collective"}) {}
  rule_scope scope() const override { return rule_scope::job; }
  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.ranks || ctx.rank || !ctx.ranks->straggler_index) return {};
    const rank_analysis& job = *ctx.ranks;
    const std::size_t slowest = *job.straggler_index, n = job.ranks.size();
    if (slowest >= n || job.compute_per_step_ns.size() != n || job.step_ns.size() != n ||
        job.wait_per_step_ns.size() != n || job.wait_total_ns.size() != n)
      return {};
    const rank_summary& s = job.ranks[slowest];
    const std::string who = rank_label(s);
    std::vector<double> others;
    double waited = 0;
    std::size_t waiting = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (i != slowest && compared(job.ranks[i], job.steps)) {
        others.push_back(job.compute_per_step_ns[i]);
        waited += job.wait_per_step_ns[i];
        ++waiting;
      }
    waited /= static_cast<double>(std::max<std::size_t>(waiting, 1));
    // The job's step: the median over the ranks of each one's median step.
    const double typical = median_of(others), excess = job.straggler_excess_ns, step = median_of(job.step_ns);
    finding f = rank_finding(
        *this, s,
        fmt::format("{} is the straggler: {} more compute per step than the other ranks, who wait {} per step {}", who,
                    text::time(excess), text::time(waited),
                    job.wait_method == "gpu idle" ? "(GPU idle: host-side collectives)" : "in collectives"),
        step > excess ? step / (step - excess) : 1);
    f.evidence = {{"compute per step", fmt::format("{} on {}, {} median of the others",
                                                   text::time(job.compute_per_step_ns[slowest]), who, text::time(typical))},
                  {"steps compared", fmt::format("{} ({})", job.steps, job.step_method)},
                  {"wait seen as", job.wait_method == "gpu idle"
                                       ? "GPU idle in the step (no collective kernels: the collectives run on the host)"
                                       : "time in collective kernels"},
                  {"median step", text::time(step)},
                  {"load imbalance", fmt::format("{:.2f} (max / mean compute per step)", job.imbalance)}};
    for (std::size_t i = 0; i < n; ++i)
      if (i != slowest && compared(job.ranks[i], job.steps))
        f.evidence.push_back({fmt::format("{} waits", rank_label(job.ranks[i])),
                              fmt::format("{} per step, {} over the {} steps", text::time(job.wait_per_step_ns[i]),
                                          text::time(job.wait_total_ns[i]), job.steps)});
    f.explanation = "Collectives finish only when every rank has arrived, so each step runs at the pace of the slowest "
                    "rank; the others spend the difference waiting inside the collective.";
    f.next_experiment = fmt::format("Find what {} does that the others do not (more data, a slower GPU, extra host "
                                    "work or I/O per step) and balance it; compare its kernels per step with a fast "
                                    "rank's.",
                                    who);
    return {f};
  }
};

// ---- exposed-communication: one rank ----
class exposed_communication_rule final : public rule {
public:
  exposed_communication_rule()
      : rule({.name = "exposed-communication",
              .threshold = "communication not overlapped by compute above 20% of the rank's time",
              .summary = "a rank's collectives run with no compute to hide them"}) {}
  rule_scope scope() const override { return rule_scope::job; }
  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.ranks || !ctx.rank) return {};
    const rank_summary& r = *ctx.rank;
    const double window = static_cast<double>(r.window_end - r.window_start);
    const double exposed = r.comm_ns - r.overlap_ns;
    if (window <= 0 || r.comm_kernels == 0 || !(exposed > 0.2 * window)) return {};
    finding f = rank_finding(*this, r,
                             fmt::format("{}: {} of its time is communication that no compute hides", rank_label(r),
                                         text::percent(exposed / window)),
                             window / (window - exposed));
    f.evidence = {{"communication", text::time(r.comm_ns)},
                  {"overlapped with compute", text::time(r.overlap_ns)},
                  {"profiled time", text::time(window)}};
    f.explanation = "While a collective runs alone the GPU's compute units idle; overlapping it with the next layer's "
                    "compute (bucketed all-reduce, prefetching) hides it.";
    f.next_experiment = "Overlap communication with compute (DDP bucket size, gradient accumulation, async "
                        "collectives), or communicate less often.";
    return {f};
  }
};

// ---- rank-gpu-idle: one rank's steady state (start-up is the process's start-up finding) ----
class rank_gpu_idle_rule final : public rule {
public:
  rank_gpu_idle_rule()
      : rule({.name = "rank-gpu-idle",
              .threshold = "GPU without any activity for more than 50% of the rank's steady state (its steps, else the "
                           "time after its first kernel)",
              .summary = "a rank's GPU idles through most of its steps"}) {}
  rule_scope scope() const override { return rule_scope::job; }
  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.ranks || !ctx.rank) return {};
    const rank_summary& r = *ctx.rank;
    if (static_cast<double>(r.window_end - r.window_start) <= 0) return {}; // no profiled window: not judged
    if (r.steady_end <= r.steady_start || r.kernels == 0) return {};
    const double steady = static_cast<double>(r.steady_end - r.steady_start);
    if (!(r.steady_idle_ns > 0.5 * steady)) return {};
    const bool steps = !r.steps.empty();
    finding f = rank_finding(*this, r,
                             fmt::format("{}: the GPU idles {} of its {}", rank_label(r),
                                         text::percent(r.steady_idle_ns / steady),
                                         steps ? "steps" : "time after the first kernel"),
                             steady / std::max(steady - r.steady_idle_ns, 1.0));
    f.evidence = {{"idle", text::time(r.steady_idle_ns)},
                  {"steady state", fmt::format("{} ({})", text::time(steady),
                                               steps ? fmt::format("{} steps, {}", r.steps.size(), r.step_method)
                                                     : std::string("first kernel to the end"))},
                  {"before it (start-up)",
                   text::time(static_cast<double>(r.steady_start - std::min(r.steady_start, r.window_start)))}};
    if (r.first_kernel_ns) f.evidence.push_back({"time to the first kernel", text::time(*r.first_kernel_ns)});
    f.explanation = "The host does not keep this rank's GPU fed between its steps' kernels: data loading, host work "
                    "or waiting on the host for the other ranks.";
    f.next_experiment = "Look at the host side of the gaps (data loader workers, pinned memory, CUDA graphs, "
                        "host-side collectives).";
    return {f};
  }
};

} // namespace

void add_rank_rules(rule_map& m) { detail::put<straggler_rule, exposed_communication_rule, rank_gpu_idle_rule>(m); }

} // namespace speedlab::analysis
