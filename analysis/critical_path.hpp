// The critical path of each step (issue 42): the chain of host work, API calls, kernels,
// copies, synchronizations and collectives, across threads, streams and ranks, that sets
// the step's length; and the findings it ranks, the culprit first (docs/analysis.md,
// "Critical path").
//
//   analysis::path_accumulator acc;                   // one per process, fed chunk by chunk
//   acc.add(batch.trace); ... path_records r = acc.finish();
//   analysis::critical_path p = analysis::find_critical_path(inputs); // ranks clock-aligned
//
// The walk goes backward from the step's end: from a kernel or copy to what it waited for
// (the previous op on its stream, its launch call when the launch came later: the GPU was
// starved, or an op of another stream that ended just before it: an event wait); from a
// host call to the host's previous call, the time between them host work named by the NVTX
// range open then; from a blocking call (synchronize, synchronous copy) to the GPU op it
// waited for; from a collective kernel to the rank whose matching kernel started last.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/cuda_api.hpp"
#include "model/trace.hpp"

namespace speedlab::analysis {

// What the path keeps of a process's records: 32-40 bytes a GPU op, call or NVTX range,
// each name once. At most max_records of them (beyond, the path is not computed: a note).
struct path_records {
  enum op_kind : std::uint8_t { kernel_op, copy_op, memset_op };
  struct gpu_op {
    std::uint64_t start = 0, end = 0;
    std::uint32_t stream = 0, correlation = 0, name = 0;
    op_kind kind = kernel_op;
    bool pageable = false, collective = false;
  };
  struct call {
    std::uint64_t start = 0, end = 0;
    std::uint32_t thread = 0, correlation = 0, name = 0;
    trace::api_kind kind = trace::api_kind::other;
  };
  struct range {
    std::uint64_t start = 0, end = 0;
    std::uint32_t thread = 0, name = 0;
  };
  std::vector<gpu_op> ops;
  std::vector<call> calls;
  std::vector<range> ranges;
  std::vector<std::string> names; // by id
  bool over_limit = false;
  static constexpr std::size_t max_records = 8'000'000;
};

class path_accumulator {
public:
  path_accumulator();
  ~path_accumulator();
  path_accumulator(path_accumulator&&) noexcept;
  path_accumulator& operator=(path_accumulator&&) noexcept;
  void add(const trace::device_trace& batch);
  path_records finish(); // consumes what was accumulated

private:
  struct state;
  std::unique_ptr<state> m;
};

enum class segment_kind : std::uint8_t { host, api, kernel, copy, memset, sync, collective, gap };
std::string_view to_string(segment_kind k);

struct path_segment {
  int rank = -1; // the job's rank; -1 in a single process
  std::uint32_t pid = 0;
  std::string where; // "thread 681", "stream 7"
  segment_kind kind = segment_kind::host;
  std::string name;                 // kernel, call, copy or NVTX range (host work); gap: what the GPU waited for
  bool pageable = false;            // a copy from or to pageable host memory
  std::uint64_t start = 0, end = 0; // on the first rank's clock
  double ns() const { return end > start ? static_cast<double>(end - start) : 0.0; }
};

// A matched collective of the step (its last arrival inside the step): the rank that arrived
// last, and how long each rank waited there.
struct path_jump {
  std::string kernel;
  int last_rank = -1;
  std::vector<double> wait_ns; // per input (rank), 0 for the last
};

struct step_path {
  std::size_t step = 0;
  std::uint64_t start = 0, end = 0;   // the previous step's end (its work done everywhere), this one's
  std::vector<path_segment> segments; // in time order; they tile [start, end]
  std::vector<path_jump> jumps;
  double length_ns() const { return end > start ? static_cast<double>(end - start) : 0.0; }
};

// Path time per step of one thing (rank, kind, name): the median over the steps judged.
struct path_item {
  int rank = -1;
  std::uint32_t pid = 0;
  segment_kind kind = segment_kind::host;
  std::string name;
  bool pageable = false;
  double per_step_ns = 0, share = 0; // share: of the median step
};

// The culprit the path names (multi-rank: the last arriver at the collectives and what it
// did that the others did not; one process: the per-step synchronization and the host work
// that follows it with the GPU idle).
struct path_culprit {
  int rank = -1;
  std::uint32_t pid = 0;
  std::string what; // "kernel spin_kernel(long)", "host work in load_batch", ...
  segment_kind kind = segment_kind::host;
  std::string name;
  double cost_ns = 0;                          // per step (median): its path time above the other ranks' same work
  double others_wait_ns = 0;                   // multi-rank: the other ranks' median wait per step (the largest)
  std::vector<std::pair<int, double>> waiting; // each other rank and its median wait per step
  // What a step cannot go below if the culprit matched the others: the other ranks' median
  // step range on the host (their host's own pace); 0 when unknown.
  double others_host_step_ns = 0;
  double sync_wait_ns = 0; // one process: the host's median time blocked in the sync per step
  std::string sync_call;
};

struct path_input {
  int rank = -1;
  std::uint32_t pid = 0;
  double offset_ns = 0; // added to its times (the rank merge's clock alignment)
  const path_records* records = nullptr;
};

struct critical_path {
  std::string step_method;      // "nvtx:train_step", or "program" (one step: no steps found)
  std::vector<int> ranks;       // the rank of each process walked (-1: one process), as path_jump::wait_ns
  std::vector<step_path> steps; // every step; the first is judged apart (no previous end)
  std::size_t judged = 0;       // steps the figures are medians over (all but the first)
  double median_step_ns = 0;
  std::vector<path_item> items; // longest first
  std::optional<path_culprit> culprit;
  std::size_t unmatched_collectives = 0; // collectives whose ends disagree across ranks: no jump
  std::vector<std::string> notes;
};

// The path of each step of the inputs (one process, or the ranks of a job, their clocks
// aligned by offset_ns); empty (no steps) when there is nothing to walk.
critical_path find_critical_path(const std::vector<path_input>& inputs);

// The findings the path ranks: the culprit first (rule "critical-path"), its consequences
// (the ranks that wait for it) in the same group; and the what-if of removing it.
void critical_path_findings(const critical_path& p, std::vector<finding>& findings, std::vector<what_if>& what_ifs);

} // namespace speedlab::analysis
