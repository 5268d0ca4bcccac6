// Number formatting for findings and what-if arithmetic (plain, unit-scaled, short).
#pragma once

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace speedlab::analysis::text {

inline std::string time(double ns) {
  const double a = std::abs(ns);
  if (a >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3g} us", ns / 1e3);
  return fmt::format("{:.3g} ns", ns);
}
inline std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }
inline std::string factor(double x) { return fmt::format("{:.2f}x", x); }
inline std::string gbps(double v) { return fmt::format("{:.3g} GB/s", v); }
inline std::string gflops(double v) { return fmt::format("{:.3g} GFLOP/s", v); }
inline std::string bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.3g} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.3g} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.3g} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}
inline std::string number(double v) { return fmt::format("{:.4g}", v); }

// A finite number or 0 (JSON has no NaN or infinity).
inline double finite(double v) { return std::isfinite(v) ? v : 0.0; }

} // namespace speedlab::analysis::text
