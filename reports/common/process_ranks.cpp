#include "reports/common/process_ranks.hpp"

#include <fmt/format.h>

#include "analysis/rank_analysis.hpp"

namespace speedlab::reports {

std::string process_group_name(const process_identity& p) {
  const std::string host = p.host.empty() ? "unknown host" : p.host;
  if (p.rank) return fmt::format("rank {} ({}, pid {})", *p.rank, host, p.pid);
  return fmt::format("pid {} ({})", p.pid, host);
}

std::map<std::string, process_identity> process_identities(const analysis::program_analysis& a) {
  std::map<std::string, process_identity> out;
  std::map<std::string, double> offset_of_host;
  if (a.ranks)
    for (const auto& c : a.ranks->clocks) offset_of_host[c.host] = c.offset_ns;
  for (const auto& p : a.processes) {
    process_identity id;
    id.pid = p.info.pid;
    id.host = p.info.host;
    const analysis::rank_identity r = analysis::identify_rank(p.info);
    id.rank = r.rank;
    id.local_rank = r.local_rank;
    id.world_size = r.world_size;
    if (auto it = offset_of_host.find(id.host); it != offset_of_host.end()) id.clock_offset_ns = it->second;
    out.emplace(analysis::process_point_id(p.info.pid), std::move(id));
  }
  return out;
}

} // namespace speedlab::reports
