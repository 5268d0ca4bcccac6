// A rank summarized from its records handed over in pieces (analysis/rank_analysis.hpp's
// rank_summary): what analysis::summarize_stream uses, so that a rank's stream is not held
// whole while it is read.
//
//   analysis::rank_accumulator acc;
//   profile::read_stream(file, [&](const auto&, profile::records_batch&& b) { acc.add(b.trace); });
//   analysis::rank_summary r = acc.finish(read.profile, &process_split);
#pragma once

#include <memory>

#include "analysis/rank_analysis.hpp"

namespace speedlab::analysis {

// summarize_rank from a rank's records handed over in pieces (a stream's records chunks, in
// any order), keeping per record only what the steps and clocks need: 24 bytes per kernel,
// copy, memset and NVTX range, 16 per launch call, each name once; summarize_rank is this
// fed the whole trace at once, so both agree exactly.
class rank_accumulator {
public:
  rank_accumulator();
  ~rank_accumulator();
  rank_accumulator(rank_accumulator&&) noexcept;
  rank_accumulator& operator=(rank_accumulator&&) noexcept;

  void add(const trace::device_trace& batch);
  // From the process's facts and its trace's repetitions (the window); the records in
  // process.trace are used only for the split when known_split is absent. Consumes what was
  // accumulated.
  rank_summary finish(const profile::process_profile& process, const time_split* known_split = nullptr);

  struct state; // what is kept per record (rank_analysis.cpp)

private:
  std::unique_ptr<state> m;
};

} // namespace speedlab::analysis
