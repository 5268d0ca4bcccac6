// The plan: a parsed suite checked against the loaded plugins and expanded into points.
// The total (points, and the bytes their values take) is computed and bounded before any
// point is made.
#pragma once

#include <vector>

#include "app/suite/suite_config.hpp"

namespace speedlab::app {

class plugin_registry;

inline constexpr std::size_t max_planned_points = 100000;
inline constexpr double max_plan_bytes = 512.0 * (1 << 20);

// Checks names, parameters and ranges against the loaded plugins and expands sweeps into
// points. Unknown names get the valid list and a did-you-mean; a point planned twice is an
// error naming both entries. Throws config_error.
std::vector<planned_point> plan_points(const suite_config& suite, const plugin_registry& registry);

} // namespace speedlab::app
