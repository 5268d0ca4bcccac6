// A run_request for a test: a point, its threads and one profiler, the other fields as a
// default request has them (set by name, so a field added to run_request needs no edit here).
#pragma once

#include <string>

#include "app/plugins/plugin_loader.hpp"
#include "app/run/runner.hpp"

namespace speedlab::testing {

inline app::run_request request(const app::loaded_workload* workload, const variant_spec* variant,
                                app::planned_point point, int threads, const std::string& profiler) {
  app::run_request r;
  r.workload = workload;
  r.variant = variant;
  r.point = std::move(point);
  r.threads = threads;
  r.profilers = {profiler};
  return r;
}

} // namespace speedlab::testing
