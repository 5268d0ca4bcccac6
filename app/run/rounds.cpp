#include "app/run/rounds.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/time_split.hpp"
#include "model/statistics.hpp"

namespace speedlab::app {

measure_options round_measure(const measure_options& point, int rounds) {
  if (rounds <= 1) return point;
  measure_options m = point;
  const auto share = [rounds](std::size_t n) { return (n + static_cast<std::size_t>(rounds) - 1) / rounds; };
  m.min_samples = std::max<std::size_t>(std::min<std::size_t>(2, point.min_samples), share(point.min_samples));
  m.max_samples = std::max(m.min_samples, share(point.max_samples));
  m.min_time_s = point.min_time_s / rounds;
  m.max_time_s = point.max_time_s / rounds;
  m.warmup_min_time_s = point.warmup_min_time_s / rounds;
  return m;
}

namespace {

// Other programs' busy cores over the rounds' spans together (weighted by span): a round
// without the figure leaves the others' standing.
void add_machine_share(point_result& into, const point_result& r) {
  if (r.other_busy_cores < 0 || !(r.other_busy_span_s > 0)) return;
  if (into.other_busy_cores < 0 || !(into.other_busy_span_s > 0)) {
    into.other_busy_cores = r.other_busy_cores;
    into.other_busy_span_s = r.other_busy_span_s;
    return;
  }
  const double span = into.other_busy_span_s + r.other_busy_span_s;
  into.other_busy_cores =
      (into.other_busy_cores * into.other_busy_span_s + r.other_busy_cores * r.other_busy_span_s) / span;
  into.other_busy_span_s = span;
}

// The running mean over rounds of a per-round figure (a phase median, CPU utilization).
double running_mean(double so_far, double next, int rounds_before) {
  return (so_far * rounds_before + next) / (rounds_before + 1);
}

void add_samples(point_result& into, point_result& r, int round) {
  const std::size_t before = into.samples_ns.size();
  into.samples_ns.insert(into.samples_ns.end(), r.samples_ns.begin(), r.samples_ns.end());
  into.sample_rounds.resize(into.samples_ns.size(), round);
  // Series that run parallel to the samples stay parallel (0: a repetition that reported none).
  for (auto& [name, series] : into.self_timed_ns) series.resize(before, 0.0);
  for (auto& [name, series] : r.self_timed_ns) {
    auto& target = into.self_timed_ns[name];
    target.resize(before, 0.0);
    target.insert(target.end(), series.begin(), series.end());
  }
  for (auto& [name, series] : into.self_timed_ns) series.resize(into.samples_ns.size(), 0.0);
  into.splits.insert(into.splits.end(), r.splits.begin(), r.splits.end());
  if (!into.splits.empty()) {
    const auto summary = analysis::summarize_time_splits(into.splits);
    into.split_median = summary.median;
    into.split_q1 = summary.q1;
    into.split_q3 = summary.q3;
  }
}

} // namespace

void merge_round(point_result& into, point_result r, int round, int rounds_planned) {
  if (round == 0) {
    into = std::move(r);
    into.rounds = 1;
    into.rounds_planned = rounds_planned;
    if (rounds_planned > 1) into.sample_rounds.assign(into.samples_ns.size(), 0);
    if (rounds_planned > 1 && !into.valid()) into.reason = fmt::format("round 1 of {}: {}", rounds_planned, into.reason);
    return;
  }
  const int before = into.rounds;
  into.rounds += 1;
  into.duration_s += r.duration_s;
  into.warmup_runs += r.warmup_runs;
  into.dropped_records += r.dropped_records;
  for (auto& m : r.profiler_messages)
    if (std::find(into.profiler_messages.begin(), into.profiler_messages.end(), m) == into.profiler_messages.end())
      into.profiler_messages.push_back(std::move(m));
  if (!r.valid()) {
    // The point stops here; what the earlier rounds measured stays, under the failure.
    into.status = r.status;
    into.reason = fmt::format("round {} of {}: {}", round + 1, rounds_planned, r.reason);
    if (r.last_validation.checked) into.last_validation = r.last_validation;
    into.stop_reason = r.stop_reason;
    add_samples(into, r, round);
    into.wall = stats::summarize(into.samples_ns);
    return;
  }
  add_samples(into, r, round);
  into.wall = stats::summarize(into.samples_ns);
  into.last_validation = r.last_validation;
  into.stop_reason = r.stop_reason; // the last round's: the earlier ones ended the same way or a point failed
  into.cpu_utilization = running_mean(into.cpu_utilization, r.cpu_utilization, before);
  add_machine_share(into, r);
  for (const auto& [name, ns] : r.phase_median_ns)
    into.phase_median_ns[name] = running_mean(into.phase_median_ns[name], ns, before);
  if (into.trace_file.empty()) into.trace_file = r.trace_file;
  into.sections.add_missing(std::move(r.sections));
  if (into.profiler.empty()) into.profiler = r.profiler;
}

bool point_finished(const point_result& p) { return !p.valid() || p.rounds >= p.rounds_planned; }

} // namespace speedlab::app
