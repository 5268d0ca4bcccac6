// When a point's measured repetitions stop: a stopping criterion chosen by name from a registry
// (nvbench's criterion_manager), each with its parameters. The rule is stated here once:
//
//   1. max_samples reached, or max_time reached with one sample at least: stop (a measurement
//      always ends; a paired side stops here whatever its partner still needs);
//   2. before min_samples and min_time: go on;
//   3. in between, the criterion decides.
//
// The default criterion, "noise", is the one speedlab always had: stop once the median's 95%
// interval is within target_noise of it (relative half-width). "fixed" stops as soon as the
// minimums are met: every point gets the same samples and time, whatever its noise.
//
// Usage:
//
//   const stopping_criterion& c = find_stopping_criterion(point.measure.stopping);
//   std::string why = c.stop_reason(point.measure, {samples_ns, elapsed_s}); // "" to go on
//
// A new criterion: a class that overrides do_stop_reason (and parameters), and one line in
// stopping.cpp's stopping_criteria(); the suite's `measure: stopping: NAME` then selects it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/suite/suite_config.hpp" // measure_options

namespace speedlab::app {

// What has been measured of a point so far.
struct measure_progress {
  const std::vector<double>& samples_ns; // each measured repetition's wall time
  double elapsed_s = 0;                  // measuring time so far (validation included)
};

// Whether `elapsed_s` of measuring (or warming up) with `runs` repetitions done is past the
// point's time limit: max_time with one repetition at least.
bool past_time_limit(const measure_options& m, double elapsed_s, std::size_t runs);

// Step 1 of the rule: why the measurement must end now ("max_samples (N) reached", ...), or "".
std::string limit_reason(const measure_options& m, const measure_progress& p);

class stopping_criterion {
public:
  virtual ~stopping_criterion() = default;
  virtual std::string name() const = 0;
  // The measure_options it reads beyond the limits and minimums: (name, meaning).
  virtual std::vector<std::pair<std::string, std::string>> parameters() const { return {}; }

  // The whole rule: limits, then minimums, then this criterion; "" to go on.
  std::string stop_reason(const measure_options& m, const measure_progress& p) const;

protected:
  // Step 3: with the minimums met and no limit reached, why to stop now, or "".
  virtual std::string do_stop_reason(const measure_options& m, const measure_progress& p) const = 0;
};

inline constexpr const char* default_stopping = "noise";

// The registry, keyed by name.
const std::vector<std::unique_ptr<stopping_criterion>>& stopping_criteria();
// The criterion of that name; throws config_error naming it and the known names when none is.
const stopping_criterion& find_stopping_criterion(const std::string& name);
std::vector<std::string> stopping_criterion_names();

} // namespace speedlab::app
