// Runs one point in a forked child so that a segfault, abort, uncaught exception or hang in
// a plugin becomes a recorded result (with its reason) instead of the end of the suite.
// The child reports progress as heartbeats over a pipe; no heartbeat within the per-run
// timeout and the child is killed.
#pragma once

#include <optional>

#include "app/run/runner.hpp"

namespace speedlab::app {

// nullopt when a stop signal (interrupt.hpp) abandoned the point before it finished.
std::optional<point_result> run_isolated(const run_request& request, double timeout_s);

// A result for a point that never produced one (crash, timeout), so nothing is lost silently.
point_result failed_point(const run_request& request, point_status status, std::string reason);

} // namespace speedlab::app
