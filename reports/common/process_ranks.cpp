#include "reports/common/process_ranks.hpp"

#include <fmt/format.h>

namespace speedlab::reports {

std::string process_group_name(const process_identity& p) {
  const std::string host = p.host.empty() ? "unknown host" : p.host;
  if (p.rank) return fmt::format("rank {} ({}, pid {})", *p.rank, host, p.pid);
  return fmt::format("pid {} ({})", p.pid, host);
}

std::map<std::string, const process_identity*> identities_by_point(const std::vector<process_identity>& ids) {
  std::map<std::string, const process_identity*> out;
  for (const auto& id : ids) out.emplace(id.point_id, &id);
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

} // namespace speedlab::reports
