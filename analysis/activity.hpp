// What a recorded stream over a whole process adds to a point's trace summary: the time
// split over its lifetime and over its steady state, start-up, GPU idle gaps, allocations,
// synchronous pageable copies and the launch cost measured on the host. The rules read it
// through rule_context::activity (rules.hpp); a path that has these figures fills it (a
// profiled process: summarize_process), a rule that needs them returns nothing without it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/python_lines.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

// GPU idle gaps of a process's steady state (see startup_summary), by what the host
// thread was inside while the GPU waited: a CUDA call covering most of the gap (by name),
// else the innermost NVTX range around it ("range NAME"), else "host code".
struct idle_cause {
  std::string what;
  std::size_t gaps = 0;
  double total_ns = 0, largest_ns = 0;
};
struct gap_summary {
  std::size_t count = 0;
  double total_ns = 0, largest_ns = 0;
  double largest_at_ns = 0;           // from the process start
  std::string largest_inside;
  double active_span_ns = 0;          // first GPU activity of the steady state to the last
  double before_first_ns = 0;         // process start to the first GPU activity (start-up included)
  std::vector<idle_cause> causes;     // by total, longest first
};

struct alloc_summary {
  std::size_t allocs = 0, frees = 0;
  std::size_t repeated = 0;           // allocs + frees after the first kernel launch
  double ns = 0, repeated_ns = 0;     // time inside those calls
  double steady_span_ns = 0;          // first kernel to the last GPU activity
};

struct pageable_sync_copies {
  std::size_t count = 0;
  double bytes = 0, ns = 0;           // the copies on the GPU
  double call_ns = 0;                 // the host blocked in their calls
};

// Start-up apart from the steady state (docs/analysis.md, "Start-up and steady state"). The
// steady state starts at the program's first step (the first of its repeating NVTX ranges,
// the one with the most time in it; not speedlab's own) or, without steps, at the first
// kernel, and runs to the end of the window; the idle, gap and rank rules judge it, the
// start-up rule what comes before.
struct call_time {
  std::string name;                   // a CUDA function, its version suffix stripped
  std::size_t calls = 0;
  double total_ns = 0;                // inside the calls, clipped to the start-up
};
struct startup_summary {
  bool known = false;                 // a kernel ran: there is a steady state
  double to_first_kernel_ns = 0;      // window start to the first kernel
  double steady_start_ns = 0;         // window start to the steady state's start
  std::string steady_method;          // "nvtx:<range name>" or "first kernel"
  double idle_ns = 0;                 // GPU without any activity before the steady state
  std::vector<call_time> calls;       // the classifying thread's CUDA calls before the first kernel, longest first
};

struct activity_summary {
  std::optional<time_split> split;        // over the lifetime; absent without CUDA
  std::optional<time_split> steady_split; // over the steady state (what the rules judge); absent without CUDA
  startup_summary startup;
  gap_summary gaps;
  alloc_summary allocs;
  pageable_sync_copies pageable_sync;
  double launch_call_median_ns = 0;       // measured launch cost on the host (0: no launch records)
  // The lines of its Python program that made its CUDA calls (python_lines.hpp): a Python
  // process whose stacks were captured (`speedlab profile`'s python backend).
  std::optional<python_lines> python;

  // The steady state's wall time (what the gap, allocation and launch rules judge) and the
  // lifetime's (for what is counted over the whole process).
  double steady_wall_ns() const { return steady_split ? steady_split->wall_ns : lifetime_ns(); }
  double lifetime_ns() const { return split ? split->wall_ns : 0; }
};

} // namespace speedlab::analysis
