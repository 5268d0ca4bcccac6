// Names stored once, each with a small id (internal to analysis/): the accumulators keep an
// id per record instead of its name.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace speedlab::analysis {

// The ids a kind of record asked for last. A stream's records cycle through a handful of
// names (a step's kernels alternate), so most lookups end here, without hashing the name.
struct recent_ids {
  std::array<std::uint32_t, 4> id{UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
  std::uint32_t next = 0;
};

struct name_ids {
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<const std::string*> names; // by id (the map's keys never move)

  std::uint32_t intern(const std::string& s, recent_ids& recent) {
    for (const std::uint32_t i : recent.id)
      if (i < names.size() && *names[i] == s) return i;
    auto [it, inserted] = ids.try_emplace(s, static_cast<std::uint32_t>(names.size()));
    if (inserted) names.push_back(&it->first);
    recent.id[recent.next++ % recent.id.size()] = it->second;
    return it->second;
  }
};

} // namespace speedlab::analysis
