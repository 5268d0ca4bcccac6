// What a finding says (rule, severity, title, evidence) as one line each, sorted: the tests
// that hold two analyses of the same recording to the same verdicts compare these.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"

namespace speedlab::testing {

inline std::vector<std::string> finding_lines(const std::vector<analysis::finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    std::string s = f.rule + " | " + to_string(f.severity) + " | " + f.title;
    for (const auto& e : f.evidence) s += " | " + e.name + ": " + e.value;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace speedlab::testing
