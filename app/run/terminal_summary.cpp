#include "app/run/terminal_summary.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "app/run/progress.hpp"
#include "model/format.hpp"
#include "model/natural_order.hpp"

namespace speedlab::app {
namespace {

std::string throughput(const point_result& p) {
  if (!p.valid() || p.wall.median <= 0) return "-";
  const double s = p.wall.median * 1e-9;
  if (p.work.bytes() > 0) return format::gbps(p.work.bytes() / s / 1e9);
  if (p.work.flops > 0) return format::gflops(p.work.flops / s / 1e9);
  if (p.work.items > 0) return format::sig(p.work.items / s) + " items/s";
  return "-";
}

} // namespace

std::string terminal_summary(const std::vector<point_result>& points, const analysis::analysis_result& analysis) {
  // Group by workload and the non-size parameters, so each table is one sweep.
  std::map<std::string, std::vector<const point_result*>, natural_order> groups; // "n=4096" before "n=16384"
  for (const auto& p : points) groups[p.workload + "  " + p.params_key(true)].push_back(&p);
  std::string out;
  for (auto& [title, members] : groups) {
    std::stable_sort(members.begin(), members.end(), [](const point_result* a, const point_result* b) {
      if (a->variant != b->variant) return a->variant < b->variant;
      if (a->size_value() != b->size_value()) return a->size_value() < b->size_value();
      return natural_less(a->params_key(), b->params_key());
    });
    const std::string size_name = members.front()->size_param();
    out += fmt::format("\n{}\n", title);
    out += fmt::format("  {:<16} {:>12} {:>12} {:>16}  {}\n", "variant", size_name.empty() ? "size" : size_name,
                       "median", "throughput", "vs serial");
    // A variant skipped at every size (no GPU here, say) takes one line with the reason.
    std::map<std::string, std::pair<std::size_t, std::size_t>> skipped; // variant -> (skipped, total)
    for (const auto* p : members) {
      auto& [n_skipped, n_total] = skipped[p->variant];
      n_skipped += p->status == point_status::skipped ? 1 : 0;
      ++n_total;
    }
    std::set<std::string> reported;
    for (const auto* p : members) {
      const auto& [n_skipped, n_total] = skipped[p->variant];
      if (n_skipped == n_total) {
        if (reported.insert(p->variant).second)
          out += fmt::format("  {:<16} skipped at every size: {}\n", p->variant, p->reason);
        continue;
      }
      std::string speed = "-";
      for (const auto& s : analysis.speedups)
        if (s.baseline == "serial" && s.variant == p->variant && s.workload == p->workload && s.params_key == p->params_key())
          speed = s.method == "none" ? format::speed(s.ratio) : format::speed_verdict(s.ratio, s.verdict);
      if (p->variant == "serial" && p->valid()) speed = "baseline";
      const std::string median = p->valid() ? format::duration(p->wall.median) : std::string(to_string(p->status));
      out += fmt::format("  {:<16} {:>12} {:>12} {:>16}  {}\n", p->variant,
                         size_name.empty() ? "-" : p->params.at(size_name), median, throughput(*p), speed);
    }
  }
  return out;
}

} // namespace speedlab::app
