// Measures one point: creates the variant, runs setup, warm-up and measured repetitions
// under the stopping rule, validates the first and last, profiles, and fills a
// point_result. Exceptions from the plugin become a failed result; a crash or hang is the
// isolation layer's business (isolation.hpp).
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/plugins/plugin_loader.hpp"
#include "app/suite/suite_config.hpp"
#include "model/results.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::app {

struct run_request {
  const loaded_workload* workload = nullptr;
  const variant_spec* variant = nullptr;
  planned_point point;
  int threads = 1;
  std::vector<std::string> profilers;      // backend names (profilers/registry.cpp)
  bool self_timing = false;                // ask variants for their own timings (run_context)
  profiling::profiler_options profiler_options; // for every session of the point
  std::filesystem::path output_dir;        // traces/ is written under it
  // --devices: CUDA_VISIBLE_DEVICES for the point's child (it sees only its GPU); empty: unchanged.
  std::string visible_devices;
  // Called as the run makes progress (phase name); the isolation layer turns it into heartbeats.
  std::function<void(const std::string& phase)> progress;
  // The pass of the backends that need a process of their own (profiler::own_process), run by the isolation layer after
  // the point: only those sessions, created before setup, one warm-up and one repetition; the result carries only what
  // they saw.
  bool own_process_pass = false;
};

// Thrown by a variant's setup when the point cannot run here after all (a Python variant
// whose package or device is missing, a plain loop past its size limit): a skip, not a failure.
struct point_skipped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

point_result measure_point(const run_request& request);
// The two sides of one point (compare --base-plugins A --new-plugins B: the same point from two
// plugin sets) in this one process, repetition by repetition (AB BA AB ..., `first` (0 or 1)
// starting), so a load or frequency shift hits both alike. Each side keeps its own stopping
// rule, validation and result; what one side's plugin throws ends that side only. One set of
// profiler sessions serves both (backends are per process): each side's time split counts
// only its own repetition windows. Not for backends that read kernels in passes of their own
// (first_round_only): measure those apart.
std::array<point_result, 2> measure_point_pair(const run_request& a, const run_request& b, int first);
// True when a backend of the request needs the own-process pass (profiler::own_process).
bool wants_own_process_pass(const run_request& request);
// The request's backends that need it, by name.
std::vector<std::string> own_process_backends(const run_request& request);
// Into a point's result, what its own-process pass recorded (never replacing what the point
// measured), or why the pass gave nothing.
void merge_own_process_pass(point_result& into, const point_result& pass, const run_request& request);
// The point's identity (id, names, params, threads) before anything is measured.
point_result new_point_result(const run_request& request);

// The context handed to variants: thread count, the hooks of speedlab::scoped_range and
// of speedlab::report_timing.
run_context make_run_context(int threads, bool self_timing = false);

// "vector/serial/n=1024,op=add": stable, human-readable id of a point.
std::string point_id(const std::string& workload, const std::string& variant,
                     const std::map<std::string, std::string>& params);

} // namespace speedlab::app
