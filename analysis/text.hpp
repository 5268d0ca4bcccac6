// Number formatting for findings and what-if arithmetic: the shared formatter of
// model/format.hpp (so findings and reports write "µs" and digits the same way).
#pragma once

#include <cmath>
#include <string>

#include <fmt/format.h> // the rule files format their sentences with it

#include "model/format.hpp"

namespace speedlab::analysis::text {

inline std::string time(double ns) { return format::duration(ns); }
inline std::string percent(double fraction) { return format::percent(100 * fraction); }
inline std::string factor(double x) { return format::ratio(x); }
// A speedup (reference time / this time) in the one wording: "1.34x slower", "840x faster".
inline std::string speed(double speedup) { return format::speed(speedup); }
inline std::string gbps(double v) { return format::gbps(v); }
inline std::string gflops(double v) { return format::gflops(v); }
inline std::string bytes(double b) { return format::bytes(b); }
// A count or plain figure: 4 significant digits without trailing zeros ("1", "92", "0.25").
inline std::string number(double v) {
  std::string s = format::sig(v, 4);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// A finite number or 0 (JSON has no NaN or infinity).
inline double finite(double v) { return std::isfinite(v) ? v : 0.0; }

} // namespace speedlab::analysis::text
