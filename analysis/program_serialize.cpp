// The program analysis as JSON (results.json's "program"): the facts, the processes with
// their gaps, allocations and copies, the merged kernels, ranges and streams, the ranks.
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "analysis/intervals.hpp"
#include "analysis/program_analysis.hpp"

namespace speedlab::analysis {
namespace {

using intervals::span;

} // namespace

void to_json(nlohmann::json& j, const program_facts& f) {
  j = {{"command_line", f.command_line}, {"started_at", f.started_at}, {"hostname", f.hostname},
       {"speedlab_version", f.speedlab_version}, {"wall_s", f.wall_s}, {"notes", f.notes}};
  j["exit_code"] = f.exit_code ? nlohmann::json(*f.exit_code) : nlohmann::json(nullptr);
}

void from_json(const nlohmann::json& j, program_facts& f) {
  f = {};
  f.command_line = j.value("command_line", std::vector<std::string>{});
  f.started_at = j.value("started_at", "");
  f.hostname = j.value("hostname", "");
  f.speedlab_version = j.value("speedlab_version", "");
  f.wall_s = j.value("wall_s", 0.0);
  if (j.contains("exit_code") && j["exit_code"].is_number_integer()) f.exit_code = j["exit_code"].get<int>();
  f.notes = j.value("notes", std::vector<std::string>{});
}

namespace {

nlohmann::json ranks_json(const rank_analysis& r) {
  auto opt = [](const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j{{"step_method", r.step_method}, {"steps", r.steps}, {"imbalance", r.imbalance},
                   {"straggler", opt(r.straggler)}, {"straggler_excess_ns", r.straggler_excess_ns}, {"notes", r.notes}};
  j["ranks"] = nlohmann::json::array();
  // Steps are listed up to 2000 a rank and 250,000 in all: a thousand ranks' every step would
  // be a document of hundreds of megabytes; their figures are summarized per rank above.
  std::size_t rows = 0;
  for (const auto& x : r.ranks) rows += x.steps.size();
  const bool list_steps = rows <= 250'000;
  j["step_figures_listed"] = list_steps;
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const auto& x = r.ranks[i];
    j["ranks"].push_back({{"rank", opt(x.id.rank)}, {"local_rank", opt(x.id.local_rank)},
                          {"world_size", opt(x.id.world_size)}, {"rank_source", x.id.source}, {"host", x.host},
                          {"pid", x.pid}, {"gpu", x.gpu}, {"split", x.split}, {"compute_ns", x.compute_ns},
                          {"comm_ns", x.comm_ns}, {"overlap_ns", x.overlap_ns}, {"idle_ns", x.idle_ns},
                          {"first_kernel_ns", x.first_kernel_ns ? nlohmann::json(*x.first_kernel_ns) : nlohmann::json(nullptr)},
                          {"kernels", x.kernels}, {"comm_kernels", x.comm_kernels}, {"steps", x.steps.size()},
                          {"step_method", x.step_method}, {"truncated", x.truncated},
                          {"wait_per_step_ns", i < r.wait_per_step_ns.size() ? r.wait_per_step_ns[i] : 0.0},
                          {"wait_total_ns", i < r.wait_total_ns.size() ? r.wait_total_ns[i] : 0.0}});
    // Each step on the common clock: [start, end, compute_ns, comm_ns, kernel_ns, kernels].
    // (At most 2000 steps a rank: a long job's are summarized above, not listed.)
    auto& steps = j["ranks"].back()["step_figures"] = nlohmann::json::array();
    if (list_steps && x.steps.size() <= 2000)
      for (const auto& s : x.steps) steps.push_back({s.start, s.end, s.compute_ns, s.comm_ns, s.kernel_ns, s.kernels});
  }
  j["wait_method"] = r.wait_method;
  j["step_columns"] = {"start_ns", "end_ns", "compute_ns", "comm_ns", "kernel_ns", "kernels"};
  for (const auto& c : r.clocks)
    j["clocks"].push_back({{"host", c.host}, {"offset_ns", c.offset_ns}, {"matched", c.matched}, {"method", c.method}});
  return j;
}

// The critical path (docs/results-schema.md, program.critical_path): up to 2000 steps and
// the first 1000 segments of each (in time order), with how many were left out.
nlohmann::json path_segment_json(const path_segment& s) {
  return {{"rank", s.rank >= 0 ? nlohmann::json(s.rank) : nlohmann::json(nullptr)},
          {"pid", s.pid},
          {"where", s.where},
          {"kind", std::string(to_string(s.kind))},
          {"name", s.name},
          {"pageable", s.pageable},
          {"start_ns", s.start},
          {"duration_ns", s.ns()}};
}

nlohmann::json critical_path_json(const critical_path& p) {
  nlohmann::json j{{"step_method", p.step_method},       {"steps_judged", p.judged},
                   {"median_step_ns", p.median_step_ns}, {"unmatched_collectives", p.unmatched_collectives},
                   {"items", nlohmann::json::array()},   {"steps", nlohmann::json::array()}};
  for (const auto& it : p.items)
    j["items"].push_back({{"rank", it.rank >= 0 ? nlohmann::json(it.rank) : nlohmann::json(nullptr)},
                          {"pid", it.pid},
                          {"kind", std::string(to_string(it.kind))},
                          {"name", it.name},
                          {"pageable", it.pageable},
                          {"per_step_ns", it.per_step_ns},
                          {"share", it.share}});
  if (p.culprit) {
    const auto& c = *p.culprit;
    j["culprit"] = {{"rank", c.rank >= 0 ? nlohmann::json(c.rank) : nlohmann::json(nullptr)},
                    {"pid", c.pid},
                    {"kind", std::string(to_string(c.kind))},
                    {"name", c.name},
                    {"cost_ns", c.cost_ns},
                    {"others_wait_ns", c.others_wait_ns},
                    {"sync_call", c.sync_call},
                    {"sync_wait_ns", c.sync_wait_ns}};
  } else {
    j["culprit"] = nullptr;
  }
  // Every step's length and path time by kind; the segments of one step only, the median
  // one (as report.html draws it), up to 300: a host-bound step has two per launch call.
  constexpr std::size_t max_steps = 2000, max_segments = 300;
  const step_path* median = nullptr;
  for (std::size_t k = p.steps.size() > 1 ? 1 : 0; k < p.steps.size(); ++k)
    if (!median ||
        std::abs(p.steps[k].length_ns() - p.median_step_ns) < std::abs(median->length_ns() - p.median_step_ns))
      median = &p.steps[k];
  for (std::size_t k = 0; k < p.steps.size() && k < max_steps; ++k) {
    const auto& s = p.steps[k];
    nlohmann::json o{{"step", s.step}, {"start_ns", s.start}, {"length_ns", s.length_ns()}};
    std::map<std::string, double> by_kind;
    for (const auto& g : s.segments) by_kind[std::string(to_string(g.kind))] += g.ns();
    o["by_kind_ns"] = by_kind;
    j["steps"].push_back(std::move(o));
  }
  if (median) {
    auto& m = j["median_step"] = {{"step", median->step}, {"segments", nlohmann::json::array()}};
    for (std::size_t i = 0; i < median->segments.size() && i < max_segments; ++i)
      m["segments"].push_back(path_segment_json(median->segments[i]));
    m["segments_omitted"] = median->segments.size() > max_segments ? median->segments.size() - max_segments : 0;
  }
  j["steps_omitted"] = p.steps.size() > max_steps ? p.steps.size() - max_steps : 0;
  return j;
}

} // namespace

void to_json(nlohmann::json& j, const program_analysis& a) {
  j = nlohmann::json::object();
  if (a.ranks) j["ranks"] = ranks_json(*a.ranks);
  if (!a.path.steps.empty()) j["critical_path"] = critical_path_json(a.path);
  if (!a.python.empty()) j["python_lines"] = a.python;
  j["facts"] = a.facts;
  j["records"] = a.records;
  j["split"] = a.split;
  auto& procs = j["processes"] = nlohmann::json::array();
  for (const auto& p : a.processes) {
    nlohmann::json o{{"pid", p.info.pid},
                     {"parent_pid", p.info.parent_pid},
                     {"label", p.label},
                     {"command_line", p.info.command_line},
                     {"host", p.info.host},
                     {"used_cuda", p.info.used_cuda},
                     {"truncated", p.info.truncated},
                     {"wall_ns", span(p.window_start, p.window_end)},
                     {"records", p.records},
                     {"dropped_records", p.info.dropped_records},
                     {"notes", p.info.notes}};
    o["exit_code"] = p.info.exit_code ? nlohmann::json(*p.info.exit_code) : nlohmann::json(nullptr);
    o["signal"] = p.info.signal ? nlohmann::json(*p.info.signal) : nlohmann::json(nullptr);
    if (p.info.truncated) o["truncated_after_ns"] = span(p.info.start_ns, p.info.last_flush_ns);
    if (p.split) o["split"] = *p.split;
    o["gaps"] = {{"count", p.gaps.count},           {"total_ns", p.gaps.total_ns},
                 {"largest_ns", p.gaps.largest_ns}, {"largest_at_ns", p.gaps.largest_at_ns},
                 {"largest_inside", p.gaps.largest_inside}, {"active_span_ns", p.gaps.active_span_ns},
                 {"before_first_ns", p.gaps.before_first_ns}};
    for (const auto& c : p.gaps.causes)
      o["gaps"]["causes"].push_back({{"what", c.what}, {"gaps", c.gaps}, {"total_ns", c.total_ns}, {"largest_ns", c.largest_ns}});
    o["allocations"] = {{"allocs", p.allocs.allocs}, {"frees", p.allocs.frees}, {"repeated", p.allocs.repeated},
                        {"ns", p.allocs.ns}, {"repeated_ns", p.allocs.repeated_ns}};
    o["pageable_sync_copies"] = {{"count", p.pageable_sync.count}, {"bytes", p.pageable_sync.bytes},
                                 {"ns", p.pageable_sync.ns}, {"call_ns", p.pageable_sync.call_ns}};
    o["launch_call_median_ns"] = p.launch_call_median_ns;
    if (p.startup.known) {
      auto& u = o["startup"] = {{"to_first_kernel_ns", p.startup.to_first_kernel_ns},
                                {"steady_start_ns", p.startup.steady_start_ns},
                                {"steady_method", p.startup.steady_method},
                                {"idle_ns", p.startup.idle_ns},
                                {"calls", nlohmann::json::array()}};
      for (const auto& c : p.startup.calls)
        u["calls"].push_back({{"name", c.name}, {"calls", c.calls}, {"total_ns", c.total_ns}});
    }
    if (p.steady_split) o["steady_split"] = *p.steady_split;
    if (p.sampling) o["launch_sampling"] = *p.sampling;
    procs.push_back(std::move(o));
  }
  auto& kernels = j["kernels"] = nlohmann::json::array();
  for (const auto& k : a.kernels)
    kernels.push_back({{"name", k.name}, {"launches", k.launches}, {"processes", k.processes}, {"total_ns", k.total_ns},
                       {"mean_ns", k.mean_ns}, {"min_ns", k.min_ns}, {"max_ns", k.max_ns}, {"grid", k.grid},
                       {"block", k.block}, {"share", k.share}});
  auto& ranges = j["nvtx_ranges"] = nlohmann::json::array();
  for (const auto& r : a.ranges) {
    ranges.push_back({{"domain", r.domain}, {"name", r.name}, {"count", r.count}, {"total_ns", r.total_ns},
                      {"gpu_ns", r.gpu_ns}, {"kernels", r.kernels}, {"launched_gpu_ns", r.launched_gpu_ns},
                      {"launched_kernels", r.launched_kernels}});
    // Launch calls sampled: how many ranges the launched figures come from; null figures
    // where none was measured (unknown, not zero).
    if (!r.launched_measured) continue;
    auto& o = ranges.back();
    o["launched_measured"] = *r.launched_measured;
    if (*r.launched_measured == 0) o["launched_gpu_ns"] = o["launched_kernels"] = nullptr;
  }
  auto& streams = j["streams"] = nlohmann::json::array();
  for (const auto& s : a.streams)
    streams.push_back({{"pid", s.pid}, {"device", s.device}, {"stream", s.stream}, {"kernels", s.kernels},
                       {"copies", s.copies}, {"memsets", s.memsets}, {"kernel_ns", s.kernel_ns},
                       {"copy_ns", s.copy_ns}, {"memset_ns", s.memset_ns}});
}

} // namespace speedlab::analysis
