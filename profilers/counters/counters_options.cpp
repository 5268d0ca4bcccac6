// `counters:` {metrics: default | full | [metric, ...], per_kernel: K}. Compiled in every
// build (profilers/CMakeLists.txt), so a suite naming it reads the same without CUPTI.
#include <stdexcept>

#include <fmt/format.h>

#include "model/counters.hpp"
#include "profilers/counters/counters_options.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::profiling {
namespace {

void read_counters(section_reader& r, profiler_options& options) {
  counters_options& out = options.block<counters_options>();
  if (r.has("metrics")) {
    std::string set;
    for (const auto& name : r.names("metrics")) set += (set.empty() ? "" : ",") + name;
    try {
      counters::metric_set(set); // an unknown set or metric is named here, not when the pass starts
    } catch (const std::invalid_argument& e) {
      r.fail("metrics", fmt::format("counters.metrics: {}", e.what()));
    }
    out.metric_set = set;
  }
  if (r.has("per_kernel")) out.counters_per_kernel = r.count("per_kernel", counters_limits::per_kernel);
}

// Whenever the backend runs (its options always matter: they decide what is replayed).
std::string counters_note(const profiler_options& options, bool selected) {
  const counters_options& o = options.get<counters_options>();
  if (!selected) return {};
  return fmt::format("counters: metric set '{}', the first {} launch(es) of each distinct (kernel, grid, block), read in "
                     "one unmeasured repetition after the timed ones",
                     o.metric_set, o.counters_per_kernel);
}

} // namespace

const options_section& counters_options_section() {
  static const options_section section{{"metrics", "per_kernel"}, read_counters, counters_note};
  return section;
}

} // namespace speedlab::profiling
