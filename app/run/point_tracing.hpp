// Device tracing of a point whose variant works in a process of its own (a Python variant's
// worker, app/python/python_variants.hpp): the runner says whether the point is traced, and folds
// that process's records into the point's trace after the measured repetitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::app {

// Implemented by such a variant_run: after the measured repetitions the runner asks for that
// process's device records inside [begin, end] (steady clock, the span the point's profiler
// sessions ran), which join the point's trace (`into.device`) before the time split and the
// analysis, as the runner's own records do; what the process's backends made of them beyond
// records (a Python worker's lines) goes to `into.sections`, problems to `into.messages`.
class out_of_process_trace {
public:
  virtual ~out_of_process_trace() = default;
  virtual void collect_trace(profiling::profile_data& into, std::uint64_t begin, std::uint64_t end) = 0;
};

// While measure_point runs a point whose device activity is traced (its device-tracing
// session started): that session's options, so a variant working in another process can trace it
// the same way. Null otherwise, and between points (one point at a time per process).
const profiling::profiler_options* point_device_tracing();

} // namespace speedlab::app
