#include "model/format.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace speedlab::format {

std::string sig(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  int decimals = std::clamp(digits - 1 - magnitude, 0, 12);
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s == "-0" || (s.find_first_not_of("-0.") == std::string::npos && s.front() == '-')) s.erase(0, 1);
  return s;
}

std::string duration(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  const double a = std::fabs(ns);
  if (a < 1e3) return sig(ns) + " ns";
  if (a < 1e6) return sig(ns / 1e3) + " µs";
  if (a < 1e9) return sig(ns / 1e6) + " ms";
  return sig(ns / 1e9) + " s";
}

std::string ms(double ns) { return sig(ns / 1e6); }

std::string bytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return (u == 0 ? fmt::format("{:.0f}", v) : sig(v)) + ' ' + units[u];
}

std::string percent(double percent) { return sig(percent, percent >= 100 ? 4 : 3) + "%"; }

std::string signed_percent(double percent) {
  if (!std::isfinite(percent)) return "n/a";
  return fmt::format("{:+.1f}%", percent);
}

namespace {
// A factor of at least 1 to 3 significant digits, decimals chosen after rounding so 9.996
// gives "10.0", not "10.00".
std::string factor_digits(double x) {
  const int decimals = x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f}", x, decimals);
}
} // namespace

std::string ratio(double ratio) {
  if (!std::isfinite(ratio)) return "n/a";
  return (ratio >= 1 ? factor_digits(ratio) : sig(ratio)) + "x";
}

std::string speed(double speedup) {
  if (!std::isfinite(speedup) || !(speedup > 0)) return "n/a";
  const bool faster = speedup >= 1;
  const double factor = faster ? speedup : 1 / speedup;
  std::string digits = factor_digits(factor);
  // Near 1 a third decimal keeps the direction ("1.004x slower"); only a tie is "as fast".
  if (digits == "1.00") digits = fmt::format("{:.3f}", factor);
  if (digits == "1.000") return "1.00x as fast";
  return digits + (faster ? "x faster" : "x slower");
}

std::string speed_interval(double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high) || !(low > 0) || !(high >= low)) return "";
  // fmt, not "[" + string: GCC 12 warns falsely on that (-Wrestrict, its bug 105329).
  if (low >= 1) return fmt::format("[{}–{}x faster]", factor_digits(low), factor_digits(high));
  if (high <= 1) return fmt::format("[{}–{}x slower]", factor_digits(1 / high), factor_digits(1 / low));
  return fmt::format("[{} – {}]", speed(low), speed(high));
}

std::string speed_verdict(double speedup, verdict v) {
  std::string s = speed(speedup);
  if (v == verdict::same)
    s += " (same within noise)";
  else if (v == verdict::unclear)
    s += " (unclear)";
  return s;
}
std::string gbps(double v) { return sig(v) + " GB/s"; }
std::string gflops(double v) { return sig(v) + " GFLOP/s"; }

std::string exact(double v) {
  if (!std::isfinite(v)) return "";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

} // namespace speedlab::format
