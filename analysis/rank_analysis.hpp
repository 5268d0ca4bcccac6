// Ranks of a multi-process job (torchrun, mpirun, srun) side by side: each rank's time split,
// its communication (NCCL kernels) apart from its compute and how much the two overlap, its
// steps, and across ranks the straggler, the time the others wait for it and the imbalance.
//
//   std::vector<analysis::rank_summary> ranks;
//   for (each process stream) ranks.push_back(analysis::summarize_rank(process)); // one at a time
//   analysis::rank_analysis r = analysis::analyze_ranks(std::move(ranks));
//
// summarize_rank keeps only what the cross-rank step needs (per-step figures and the end
// times of collectives), so any number of large streams merges in bounded memory.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/profile.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

// Where a rank's identity comes from: the launcher's variables in the stream's tags.
struct rank_identity {
  std::optional<int> rank, local_rank, world_size;
  std::string source; // the variable the rank came from: "RANK", "OMPI_COMM_WORLD_RANK", ...
};
rank_identity identify_rank(const profile::process_info& p);

// True for a collective-communication kernel (NCCL's ncclKernel_*, ncclDevKernel_*, ...).
bool is_communication_kernel(const std::string& name);

struct step_figures {
  std::uint64_t start = 0, end = 0; // on the rank's own clock
  double compute_ns = 0;            // GPU busy with non-communication kernels, copies, memsets
  double comm_ns = 0;               // GPU busy with communication kernels
  double kernel_ns = 0;             // sum of the durations of the step's kernels
  std::size_t kernels = 0;          // the step's kernels: those it launched (NVTX steps), else those that start in it
};

struct rank_summary {
  std::uint32_t pid = 0;
  std::string host, gpu;            // gpu: "cuda:<index> [GPU-<uuid>] [(CUDA_VISIBLE_DEVICES=...)]"
  rank_identity id;
  std::uint64_t window_start = 0, window_end = 0;
  time_split split;                 // over the window
  double compute_ns = 0, comm_ns = 0;
  double overlap_ns = 0;            // communication hidden under compute
  double idle_ns = 0;               // no GPU activity at all
  std::optional<double> first_kernel_ns; // from the process start
  // The steady state the idle rule judges: the steps (first start to last end), else the
  // first kernel to the window's end; before it, start-up (the process's start-up finding).
  std::uint64_t steady_start = 0, steady_end = 0; // equal: none (no kernel)
  double steady_idle_ns = 0;        // no GPU activity inside it
  std::size_t kernels = 0, comm_kernels = 0;
  std::string step_method;          // "nvtx:<range name>", "kernel:<kernel name>" or "" (no steps)
  std::vector<step_figures> steps;
  std::size_t comm_placed_by_start = 0; // collective kernels whose launch call is not in the trace (see summarize_rank)
  // Launch calls recorded in sampled windows (profile::launch_calls_sampled): the GPU records
  // whose launch call is not in the trace, put in steps by the calls recorded around them
  // (rank_analysis.cpp, project_steps).
  bool launch_calls_sampled = false;
  std::size_t placed_by_neighbours = 0;
  std::vector<std::uint64_t> comm_ends; // end of each communication kernel, in order (clock alignment)
  std::optional<std::int64_t> realtime_minus_steady; // wall clock minus the rank's clock, from its stream header
  bool truncated = false;
};

// known_split: the process's time split over the same window when already computed
// (summarize_process's), so a large trace is not split twice.
rank_summary summarize_rank(const profile::process_profile& process, const time_split* known_split = nullptr);

struct host_clock {
  std::string host;
  double offset_ns = 0;   // added to this host's times to put them on the reference host's clock
  std::size_t matched = 0; // collectives used to estimate it
  std::string method;     // "reference", "same host", "collective ends", "wall clock", "none"
};

struct rank_analysis {
  std::vector<rank_summary> ranks; // by rank
  std::vector<host_clock> clocks;
  std::string step_method;         // what the ranks agree on
  std::size_t steps = 0;           // steps compared (the fewest any rank has)
  std::optional<int> straggler;    // rank whose compute per step runs longest, when clear
  std::optional<std::size_t> straggler_index; // its place in `ranks`
  double straggler_excess_ns = 0;  // its median compute per step above the others' median
  // Per rank, over the compared steps: the median compute per step (what the straggler is
  // judged by) and the median step length. Empty without steps to compare.
  std::vector<double> compute_per_step_ns, step_ns;
  // Per rank: median time per step spent waiting for the slowest arrival, and its sum over
  // the compared steps. How it is seen (wait_method):
  //   "collective kernels": in the rank's communication kernels (NCCL: the GPU waits in them);
  //   "gpu idle": the rank's step time not spent computing (collectives on the host, e.g.
  //   gloo or MPI on host buffers: the GPU sits idle while the host waits).
  std::vector<double> wait_per_step_ns;
  std::vector<double> wait_total_ns;
  std::string wait_method;
  double imbalance = 1;            // max / mean of the ranks' median compute per step
  // What the cross-rank rules of the registry found (rules_ranks.cpp: the job first, then
  // each rank in order).
  std::vector<finding> findings;
  std::vector<std::string> notes;
};

// disabled_rules: rules of the registry not to run (as analysis_options'), by name.
rank_analysis analyze_ranks(std::vector<rank_summary> ranks, const std::set<std::string>& disabled_rules = {});

// A rank the step comparison reads: it ran kernels and has each of the `steps` compared (a
// rank that launched nothing, a process that failed after CUDA started, has neither; the
// job's figures leave it out and a note names it).
bool compared(const rank_summary& r, std::size_t steps);

// "rank 3", or "pid 1234" for a process without a rank variable: how findings and notes name it.
std::string rank_label(const rank_summary& r);

} // namespace speedlab::analysis
