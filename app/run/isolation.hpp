// Runs one point in a forked child so that a segfault, abort, uncaught exception or hang in
// a plugin becomes a recorded result (with its reason) instead of the end of the suite.
// The child reports progress as heartbeats over a pipe; no heartbeat within the per-run
// timeout and the child is killed.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "app/run/runner.hpp"

namespace speedlab::app {

// nullopt when a stop signal (interrupt.hpp) abandoned the point before it finished.
std::optional<point_result> run_isolated(const run_request& request, double timeout_s);

// measure_point_pair in one child. `abandoned`: a stop signal killed it (nothing recorded);
// otherwise either both results, or `failure` says why the child gave none (a crash, a
// timeout, an unreadable result): which side caused it is unknown, so the caller measures the
// round again with each side in a child of its own, where a crash is that side's result.
struct paired_outcome {
  bool abandoned = false;
  std::optional<std::array<point_result, 2>> results;
  std::string failure;
};
paired_outcome run_pair_isolated(const run_request& a, const run_request& b, int first, double timeout_s);

// A result for a point that never produced one (crash, timeout), so nothing is lost silently.
point_result failed_point(const run_request& request, point_status status, std::string reason);

} // namespace speedlab::app
