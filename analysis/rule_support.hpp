// Helpers shared by the rule files (internal to analysis/).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/comparisons.hpp"
#include "analysis/rules.hpp"
#include "analysis/text.hpp"
#include "model/device_keys.hpp"

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
  return fmt::format("{} {} ({}{})", text::number(c.value), c.unit, c.measured ? "measured" : "estimate",
                     c.source.empty() ? "" : ", " + c.source);
}

// How a finding names the baseline it judges p against: "serial" for a C++ variant's C++
// serial baseline (the word every C++ finding has used), the variant ("py-numba") for a
// Python variant's Python baseline, and "C++ serial" (the name, labelled) across languages, so
// no Python-to-C++ ratio passes for a like-with-like one.
inline std::string baseline_words(const point_result& p, const point_result& base) {
  if (is_python(p) == is_python(base)) return is_python(p) ? base.variant : std::string("serial");
  if (is_python(base)) return "Python " + base.variant;
  return base.variant == "serial" ? std::string("C++ serial") : "C++ " + base.variant;
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

// One distinct (kernel, grid, block) of a point's counters pass (point_result::counters):
// the median of its profiled launches and its launches in the pass (one repetition).
// Defined in rules_counters.cpp; kernel-below-roofline reads them too.
struct counter_kernel {
  counters::kernel_counters counters; // its kernel: the launch's (mangled) name
  std::string name;                   // demangled, for what a person reads
  counters::counter_figures f;
  double ns = 0;       // one launch
  double launches = 1; // per repetition
  double time_per_rep() const { return ns * launches; }
};
std::vector<counter_kernel> counter_kernels(const point_result& p);

// The busiest unit the counters read for one kernel: its bound (counters::counter_figures::
// bound: DRAM, L2, L1/shared, an SM pipe or the issue slots) where the set read those (the
// default and full sets), else the busiest of the SM pipes and the SM, memory and DRAM
// throughputs a metric list read (% of peak). Empty when none was read (the dram set).
struct busy_unit {
  std::string name;    // a unit of the bound ("ALU pipe", "L2", "DRAM"), else "SM throughput", ...
  bool memory = false; // a memory unit (memory or DRAM throughput), not the SM's
  double pct = 0;
};
std::optional<busy_unit> busiest_unit(const counters::counter_figures& f);

// Whether a trace's kernel name (demangled, as CUPTI activity records give it) and a
// counters pass's (the launch's mangled name) name the same kernel.
bool same_kernel(const std::string& trace_name, const std::string& counters_name);

// Registers rules in a registry keyed by their names: put<a, b, c>(m).
template <class... Rules, class Map>
void put(Map& m) {
  auto one = [&m](auto r) {
    const std::string name = r->name();
    m[name] = std::move(r);
  };
  (one(std::make_unique<Rules>()), ...);
}

} // namespace speedlab::analysis::detail
