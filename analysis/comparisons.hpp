// Matching points across variants and the speedups with statistical verdicts.
// Points match when they share the workload and every parameter except "threads"; at
// each match key the serial baseline is the valid serial-kind point (variant "serial"
// preferred) and the threads baseline the threads-kind point with the most threads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/analyze.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

// workload + parameters (except "threads", and the size parameter when without_size).
std::string match_key(const point_result& p, bool without_size = false);

struct baselines {
  const point_result* serial = nullptr;
  const point_result* threads = nullptr;
};

class baseline_index {
public:
  explicit baseline_index(const std::vector<point_result>& points);
  baselines at(const point_result& p) const;

private:
  std::map<std::string, baselines> m_by_key;
};

// Ratio baseline / variant (above 1: the variant is faster) with a 95% interval and a
// verdict: "same" when the whole interval lies within the practical band, "faster" when
// it lies above 1, "slower" below 1, "unclear" otherwise or without enough samples.
speedup compare(const point_result& variant, const point_result& baseline, const analysis_options& o);
std::string verdict_for(double ci_low, double ci_high, double same_band);

// At each match key (every parameter, the size included), the valid C++ point with the
// lowest median over the valid Python point with the lowest median.
std::vector<speedup> cpp_over_python(const std::vector<point_result>& points, const analysis_options& o);

std::vector<speedup> all_speedups(const std::vector<point_result>& points, const baseline_index& index,
                                  const analysis_options& o);

} // namespace speedlab::analysis
