// Internal to analysis/critical_path*.cpp: one rank's records indexed for the backward walk,
// the collectives matched across ranks, and the walk of one step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "analysis/critical_path.hpp"

namespace speedlab::analysis::path_walk {

struct rank_view {
  explicit rank_view(const path_input& in);
  const path_input& input;
  const path_records& r;
  std::vector<std::size_t> ops_by_end, previous_on_stream, host_calls; // host_calls: by end
  std::unordered_map<std::uint32_t, std::size_t> call_of;              // correlation -> call
  std::vector<path_records::range> host_ranges;                        // by start

  std::uint64_t at(std::uint64_t t) const;    // own clock -> the first rank's
  std::uint64_t local(std::uint64_t t) const; // the first rank's clock -> own
  const std::string& name(std::uint32_t id) const { return r.names[id]; }
  std::optional<std::size_t> launch_call(std::size_t op) const;
  // The ops by when they were launched (their call's start, else their own; own clock), and
  // the host calls by start: what a step's interval holds, found by binary search.
  std::vector<std::pair<std::uint64_t, std::size_t>> ops_by_launch, calls_by_start;
  template <class F>
  void ops_launched(std::uint64_t a, std::uint64_t b, F&& f) const {
    for (auto it = std::lower_bound(ops_by_launch.begin(), ops_by_launch.end(), std::make_pair(a, std::size_t{0}));
         it != ops_by_launch.end() && it->first < b; ++it)
      f(it->second);
  }
  std::optional<std::size_t> last_op_ending(std::uint64_t lo, std::uint64_t hi, std::uint32_t not_stream,
                                            bool any_stream) const;
  std::optional<std::size_t> host_call_before(std::uint64_t t, std::uint64_t lo) const;
};

// Collective kernels matched across ranks: the k-th kernel of a name on every rank, kept only
// where their ends agree (they leave the collective together).
struct collectives {
  std::vector<std::vector<std::size_t>> tuples;             // op index per rank
  std::vector<std::map<std::size_t, std::size_t>> tuple_of; // per rank: op -> tuple
  std::size_t unmatched = 0;
  std::vector<std::string> notes;
};
collectives match_collectives(const std::vector<rank_view>& ranks);

// Walks one step back from its last work (rank, op or call) to `lo`.
struct step_end {
  std::size_t rank = 0;
  bool is_op = true;
  std::size_t index = 0;
  std::uint64_t time = 0; // global
};
step_path walk_step(const std::vector<rank_view>& ranks, const collectives& c, std::uint64_t lo, const step_end& end);

} // namespace speedlab::analysis::path_walk
