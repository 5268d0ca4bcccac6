// The CUPTI range-profiler core of the counters backend, apart from the session so that the
// injection library (`speedlab profile`) can drive it from a context-created callback:
// one collector per CUDA context, auto range (one range per kernel), kernel replay, and a
// launch gate that profiles only the first K launches of each distinct (kernel, grid, block).
// CUPTI headers stay in the .cpp; setup failures throw counters_unavailable with the cause
// in words; nothing throws from the launch callbacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/counters.hpp"

namespace speedlab::profiling::counters_core {

// Why counters cannot be read here (privileges, a virtualized GPU, another profiler, an
// unsupported chip, no GPU), as one sentence a user can act on.
class counters_unavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The cause behind a CUPTI result code, in words (the code's own text when not a known cause).
std::string describe_cupti_result(int result);

// Host side only, no GPU needed: checks a metric list against a chip (e.g. "GH100") and
// returns how many replays of each kernel it needs. Throws std::invalid_argument naming the
// problem (an unknown metric, an unknown chip). `each`: configured one metric per call, as
// the collector did before (collector_options::add_metrics_each).
std::size_t passes_for_chip(const std::string& chip, const std::vector<std::string>& metrics, bool each = false);

// True when the calling thread has a current CUDA context (GPU work ran on it); a variant
// without one has no kernels to read, which is no failure.
bool has_current_context();

struct collector_options {
  std::vector<std::string> metrics;
  std::string metric_set = "default";
  std::size_t per_kernel_limit = 2;   // K
  std::size_t max_ranges = 512;       // ranges the counter data image holds
  bool gate_launches = true;          // enforce K through launch callbacks (needs a CUPTI subscription)
  // The gate's launch callbacks come from the owner's own CUPTI subscription (CUPTI has one
  // per process: the injection library's), through on_api_callback, instead of one the
  // collector makes.
  bool external_callbacks = false;
  // Diagnostic only: configure one metric per CUPTI call, as before the fix (each metric then
  // gets replays of its own); SPEEDLAB_COUNTERS_ADD=each.
  bool add_metrics_each = false;
};

class counter_collector {
public:
  // Binds to a CUDA context (a CUcontext; nullptr: the calling thread's current one) and
  // configures the range profiler. Throws counters_unavailable.
  counter_collector(void* cu_context, collector_options options);
  ~counter_collector();
  counter_collector(const counter_collector&) = delete;
  counter_collector& operator=(const counter_collector&) = delete;

  void start();                    // kernels launched from now on are profiled (up to K each)
  void stop();                     // synchronizes the context (made current for it), decodes the ranges
  // A CUPTI callback of the owner's subscription (external_callbacks): launch entries go to
  // the gate, anything else is ignored. Never throws.
  void on_api_callback(int domain, unsigned id, const void* callback_data) noexcept;
  // The launch callbacks the gate needs, by domain (CUPTI_CB_DOMAIN_RUNTIME_API, _DRIVER_API).
  static std::vector<std::pair<int, unsigned>> launch_callbacks();
  counters::counter_pass take();   // what was recorded, evaluated
  std::vector<std::string> messages() const;

  struct impl; // public only so the CUPTI callback trampoline can name it

private:
  std::unique_ptr<impl> m;
};

} // namespace speedlab::profiling::counters_core
