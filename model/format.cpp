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

std::string ratio(double ratio) { return sig(ratio) + "x"; }
std::string gbps(double v) { return sig(v) + " GB/s"; }
std::string gflops(double v) { return sig(v) + " GFLOP/s"; }

std::string exact(double v) {
  if (!std::isfinite(v)) return "";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

} // namespace speedlab::format
