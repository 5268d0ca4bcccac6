// Who each process behind a point is within its job (report_content::processes): the
// reports label and group a process by it: trace.json puts each rank's tracks in one group,
// and results.json carries rank and host on every per-process record.
//
//   const auto ids = reports::identities_by_point(in.content.processes);
//   if (auto it = ids.find(point.id); it != ids.end() && it->second->rank) ...
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/report_content.hpp"

namespace speedlab::reports {

// "rank 1 (node-a, pid 4242)"; without a rank "pid 4242 (node-a)".
std::string process_group_name(const process_identity& p);

// The identities by point id (pointers into `ids`).
std::map<std::string, const process_identity*> identities_by_point(const std::vector<process_identity>& ids);

// Puts the process's host, rank, local_rank and world_size (null outside a launcher) on a
// per-process JSON record.
void tag_with_rank(nlohmann::json& record, const process_identity& id);

} // namespace speedlab::reports
