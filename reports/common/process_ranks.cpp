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

namespace {
nlohmann::json optional_int(const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
} // namespace

void tag_with_rank(nlohmann::json& record, const process_identity& id) {
  record["host"] = id.host;
  record["rank"] = optional_int(id.rank);
  record["local_rank"] = optional_int(id.local_rank);
  record["world_size"] = optional_int(id.world_size);
}

nlohmann::json program_json(const analysis::program_analysis& a, const std::map<std::string, process_identity>& ids) {
  nlohmann::json j = a;
  auto by_pid = [&ids](const nlohmann::json& pid) -> const process_identity* {
    if (!pid.is_number_unsigned()) return nullptr;
    auto it = ids.find(analysis::process_point_id(pid.get<std::uint32_t>()));
    return it == ids.end() ? nullptr : &it->second;
  };
  for (const char* set : {"processes", "streams"})
    if (j.contains(set) && j[set].is_array())
      for (auto& record : j[set])
        if (const auto* id = by_pid(record.value("pid", nlohmann::json()))) tag_with_rank(record, *id);
  return j;
}

nlohmann::json program_json(const analysis::program_analysis& a) { return program_json(a, process_identities(a)); }

} // namespace speedlab::reports
