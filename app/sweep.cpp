#include "app/sweep.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace speedlab::app {
namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool try_number(const std::string& text, double& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  if (auto caret = t.find('^'); caret != std::string::npos) {
    double base = 0, exponent = 0;
    if (!try_number(t.substr(0, caret), base) || !try_number(t.substr(caret + 1), exponent)) return false;
    out = std::pow(base, exponent);
    return std::isfinite(out);
  }
  errno = 0;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && errno == 0 && std::isfinite(out);
}

void check_count(double count, const std::string& expr) {
  if (count > static_cast<double>(max_sweep_points))
    throw sweep_error(fmt::format("sweep '{}' has {:.0f} points; at most {} are allowed", expr, count,
                                  max_sweep_points));
}

} // namespace

double parse_number(const std::string& text) {
  double v = 0;
  if (!try_number(text, v)) throw sweep_error(fmt::format("'{}' is not a number (expected e.g. 1024, 1e6 or 2^20)", text));
  return v;
}

std::string format_number(double v) {
  if (std::abs(v) < 9.007199254740992e15 && v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

std::vector<std::string> expand_sweep(const std::string& expression) {
  const std::string expr = trim(expression);
  if (expr.empty()) throw sweep_error("empty value (expected a value or a sweep such as 2^10..2^20)");

  // Comma list: each element may itself be a sweep.
  if (expr.find(',') != std::string::npos) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= expr.size()) {
      const auto comma = expr.find(',', start);
      const std::string part = expr.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      for (auto& v : expand_sweep(part)) out.push_back(std::move(v));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    check_count(static_cast<double>(out.size()), expr);
    return out;
  }

  // a..b[:step]: powers of two when both ends are 2^k, else linear.
  if (auto dots = expr.find(".."); dots != std::string::npos) {
    std::string lo_text = trim(expr.substr(0, dots)), rest = expr.substr(dots + 2), step_text;
    if (auto colon = rest.find(':'); colon != std::string::npos) {
      step_text = trim(rest.substr(colon + 1));
      rest = rest.substr(0, colon);
    }
    const std::string hi_text = trim(rest);
    const bool pow2 = lo_text.rfind("2^", 0) == 0 && hi_text.rfind("2^", 0) == 0;
    const double step = step_text.empty() ? 1.0 : parse_number(step_text);
    if (!(step > 0)) throw sweep_error(fmt::format("sweep '{}': step must be positive", expr));
    double lo = pow2 ? parse_number(lo_text.substr(2)) : parse_number(lo_text);
    double hi = pow2 ? parse_number(hi_text.substr(2)) : parse_number(hi_text);
    if (lo > hi) throw sweep_error(fmt::format("sweep '{}': start is larger than stop", expr));
    check_count(std::floor((hi - lo) / step) + 1, expr);
    std::vector<std::string> out;
    for (double x = lo; x <= hi + 1e-9 * std::max(1.0, std::abs(hi)); x += step)
      out.push_back(format_number(pow2 ? std::ldexp(1.0, static_cast<int>(std::lround(x))) : x));
    return out;
  }

  // start:stop:factor, geometric.
  if (std::count(expr.begin(), expr.end(), ':') == 2) {
    const auto c1 = expr.find(':'), c2 = expr.find(':', c1 + 1);
    const double lo = parse_number(expr.substr(0, c1));
    const double hi = parse_number(expr.substr(c1 + 1, c2 - c1 - 1));
    const double factor = parse_number(expr.substr(c2 + 1));
    if (!(lo > 0)) throw sweep_error(fmt::format("geometric sweep '{}': start must be positive", expr));
    if (!(factor > 1)) throw sweep_error(fmt::format("geometric sweep '{}': factor must be greater than 1", expr));
    if (lo > hi) throw sweep_error(fmt::format("geometric sweep '{}': start is larger than stop", expr));
    check_count(std::floor(std::log(hi / lo) / std::log(factor)) + 1, expr);
    std::vector<std::string> out;
    for (double x = lo; x <= hi * (1 + 1e-12); x *= factor) out.push_back(format_number(std::round(x * 1e6) / 1e6));
    return out;
  }

  double v = 0;
  if (try_number(expr, v)) return {format_number(v)};
  return {expr};
}

} // namespace speedlab::app
