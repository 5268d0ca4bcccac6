// Who each process of a profiled program is within its job: host, pid and, under a launcher,
// rank, local rank and world size (analysis::identify_rank on the stream's tags). The reports
// label and group a process by it: trace.json puts each rank's tracks in one group, and
// results.json and `speedlab analyze --json` carry rank and host on every per-process record
// (program_json).
//
//   const auto ids = reports::process_identities(program);
//   if (auto it = ids.find(point.id); it != ids.end() && it->second.rank) ...
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"

namespace speedlab::reports {

struct process_identity {
  std::uint32_t pid = 0;
  std::string host;
  std::optional<int> rank, local_rank, world_size;
  double clock_offset_ns = 0; // added to this process's times to put it on the ranks' common clock
};

// "rank 1 (node-a, pid 4242)"; without a rank "pid 4242 (node-a)".
std::string process_group_name(const process_identity& p);

// Every process of the program by its point id (analysis::process_point_id).
std::map<std::string, process_identity> process_identities(const analysis::program_analysis& a);

// Puts the process's host, rank, local_rank and world_size (null outside a launcher) on a
// per-process JSON record.
void tag_with_rank(nlohmann::json& record, const process_identity& id);

// The program as JSON (analysis/program_analysis.hpp's to_json) with each of its per-process
// records (processes, streams) tagged with its process's host and rank, so a multi-rank job's
// records can be told apart without joining on pid. `ids`: process_identities(a).
nlohmann::json program_json(const analysis::program_analysis& a, const std::map<std::string, process_identity>& ids);
nlohmann::json program_json(const analysis::program_analysis& a);

} // namespace speedlab::reports
