// Rules that read a whole process of a profiled program (analysis/program_analysis.hpp):
// what shows only over a program's lifetime. Same shape as the point rules (rules.hpp): a
// name, the threshold in words, evaluate(context) -> findings with evidence, explanation,
// next experiment and estimated gain; the registry is an explicit list.
//
//   start-up               time to the first kernel and the GPU idle before the steady state
//   gpu-idle-gaps          the GPU waits between bursts of work in the steady state
//   alloc-in-loop          cudaMalloc/cudaFree repeated while the program runs
//   sync-pageable-copies   synchronous copies from or to pageable memory block the host
//   tiny-kernels           the median kernel is shorter than the program's own launch cost
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/program_analysis.hpp"

namespace speedlab::analysis {

struct program_rule_context {
  const process_summary& process;
  const point_result& point;   // process_point(process)
  const device_model& device;
  const program_options& options;
};

class program_rule {
public:
  virtual ~program_rule() = default;
  virtual std::string name() const = 0;
  virtual std::string threshold() const = 0;
  virtual std::string summary() const = 0;
  virtual std::vector<finding> evaluate(const program_rule_context& ctx) const = 0;

protected:
  finding start(const program_rule_context& ctx, std::string title, double gain) const;
};

using program_rule_map = std::map<std::string, std::unique_ptr<program_rule>>;
const program_rule_map& program_rule_registry();

// Point rules that a program rule replaces for processes (launch-bound: tiny-kernels compares
// with the launch cost the program itself measured, not an assumed one).
const std::vector<std::string>& point_rules_replaced_for_programs();

} // namespace speedlab::analysis
