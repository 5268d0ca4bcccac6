// Matching points across variants and the speedups with statistical verdicts.
// Points match when they share the workload and every parameter except "threads". A point
// is judged against baselines of its own language (docs/analysis.md, "Which variants each
// rule judges"): at each match key a C++ variant's serial baseline is the valid serial-kind
// C++ point (variant "serial" preferred); a Python variant's is the lesson's Python
// baseline (serial_baseline_rank); the threads baseline is the threads-kind point of the
// same language with the most threads.
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

// A Python variant (app/python/python_variants.hpp): its language, else (results written
// by hand or by other tools) its name, which speedlab always gives as "py-<name>".
bool is_python(const point_result& p);

// How much `candidate`, a serial-kind variant of the judged variant's language, is preferred
// as the serial baseline of `judged` (lower first; ties go by name). C++: "serial" first.
// Python: the judged variant's own serial build (py-numba for py-numba-parallel: the same
// code on one thread, what parallel efficiency divides by), then py-numpy (what the lessons
// measure against), then py-loop.
int serial_baseline_rank(const std::string& judged, bool python, const std::string& candidate);

struct baselines {
  const point_result* serial = nullptr;
  const point_result* threads = nullptr;
};

class baseline_index {
public:
  explicit baseline_index(const std::vector<point_result>& points);
  // p's baselines, of p's language (either may be p itself).
  baselines at(const point_result& p) const;
  // The C++ serial baseline at p's parameters: for a Python variant a comparison that must
  // say "C++" (null when none).
  const point_result* cpp_serial(const point_result& p) const;

private:
  struct candidates {
    std::vector<const point_result*> serial[2]; // [0] C++, [1] Python
    const point_result* threads[2] = {nullptr, nullptr};
  };
  static const point_result* best_serial(const std::vector<const point_result*>& serial, const std::string& judged,
                                         bool python);
  std::map<std::string, candidates> m_by_key;
};

// Ratio baseline / variant (above 1: the variant is faster) with a 95% interval and a
// verdict: same when the whole interval lies within the practical band, faster when it
// lies above 1, slower below 1, unclear otherwise or without enough samples.
speedup compare(const point_result& variant, const point_result& baseline, const analysis_options& o);
verdict verdict_for(double ci_low, double ci_high, double same_band);

// At each match key (every parameter, the size included), the valid C++ point with the
// lowest median over the valid Python point with the lowest median.
std::vector<speedup> cpp_over_python(const std::vector<point_result>& points, const analysis_options& o);

// Every point over its baselines: over the serial one, and (not threads-kind points) over
// the threads one. A Python variant first over the C++ serial baseline (the reports' "vs
// serial" column, which names it), then over its Python baselines.
std::vector<speedup> all_speedups(const std::vector<point_result>& points, const baseline_index& index,
                                  const analysis_options& o);

} // namespace speedlab::analysis
