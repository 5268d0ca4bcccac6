// Helpers shared by the rule files (internal to analysis/).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "analysis/analysis.hpp"
#include "model/device_keys.hpp"
#include "analysis/rules.hpp"
#include "analysis/text.hpp"

namespace speedlab::analysis::detail {

// Speedup of the run if `saved` of `wall` disappeared (capped at 1000x).
inline double gain_from_saving(double wall, double saved) {
  if (!(wall > 0) || !(saved > 0)) return 1;
  return wall / std::max(wall - saved, wall * 1e-3);
}

inline void add(finding& f, std::string name, std::string value) {
  f.evidence.push_back({std::move(name), std::move(value)});
}

inline std::string ceiling_text(const ceiling& c) {
  return fmt::format("{:.4g} {} ({}{})", c.value, c.unit, c.measured ? "measured" : "estimate",
                     c.source.empty() ? "" : ", " + c.source);
}

inline double phase_ns(const point_result& p, const char* name) {
  auto it = p.phase_median_ns.find(name);
  return it == p.phase_median_ns.end() ? 0 : it->second;
}

// The launch latency to compare kernels with: the device model's, else 5 us (the low end
// of the 5-20 us CPU launch cost that tracing tools report), marked as assumed.
struct latency {
  double us = 5;
  std::string text;
};
inline latency launch_latency(const device_model& d) {
  if (const ceiling* c = find_ceiling(d.gpu, keys::launch_latency)) return {c->value, ceiling_text(*c)};
  return {5.0, "5 us (assumed: no calibration; CPU launches typically cost 5-20 us)"};
}

// Registers one rule in a registry keyed by name (point rules and program rules alike).
template <class Rule, class Map>
void put(Map& m) {
  auto r = std::make_unique<Rule>();
  std::string n = r->name();
  m[n] = std::move(r);
}

} // namespace speedlab::analysis::detail
