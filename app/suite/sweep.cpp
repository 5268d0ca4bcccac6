#include "app/suite/sweep.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "app/suite/names.hpp"
#include "model/strings.hpp"

namespace speedlab::app {
namespace {

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
  if (!(count <= static_cast<double>(max_sweep_points)))
    throw sweep_error(fmt::format("sweep '{}' has {} points; at most {} are allowed", echo(expr),
                                  std::isfinite(count) ? fmt::format("{:.0f}", count) : std::string("too many"),
                                  max_sweep_points));
}

// A real value of a computed sweep, rounded to 15 significant digits so 0.1*3 reads 0.3.
std::string sweep_real(double v) {
  double rounded = v;
  try_number(fmt::format("{:.15g}", v), rounded);
  return format_number(rounded);
}

void check_unique(const std::vector<std::string>& values, const std::string& expr) {
  std::set<std::string> seen;
  for (const auto& v : values)
    if (!seen.insert(v).second)
      throw sweep_error(fmt::format("sweep '{}' gives the value {} twice (its step is below the numbers' precision)",
                                    echo(expr), echo(v)));
}

__extension__ typedef __int128 i128; // (hi - lo) / step of two int64 values fits
constexpr i128 int64_lo = INT64_MIN, int64_hi = INT64_MAX;

std::vector<std::string> linear_integers(i128 lo, i128 hi, i128 step, const std::string& expr) {
  if (step <= 0) throw sweep_error(fmt::format("sweep '{}': step must be positive", echo(expr)));
  if (lo > hi) throw sweep_error(fmt::format("sweep '{}': start is larger than stop", echo(expr)));
  const i128 count = (hi - lo) / step + 1;
  check_count(static_cast<double>(count), expr);
  std::vector<std::string> out;
  for (i128 i = 0; i < count; ++i) out.push_back(std::to_string(static_cast<std::int64_t>(lo + i * step)));
  return out;
}

std::vector<std::string> range(const std::string& expr, std::size_t dots) {
  std::string lo_text = trim(expr.substr(0, dots)), rest = expr.substr(dots + 2), step_text;
  if (auto colon = rest.find(':'); colon != std::string::npos) {
    step_text = trim(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }
  const std::string hi_text = trim(rest);
  const bool pow2 = lo_text.rfind("2^", 0) == 0 && hi_text.rfind("2^", 0) == 0;
  if (pow2) {
    lo_text = lo_text.substr(2);
    // The exponents: integers give exact powers; 2^k for k <= 62 is printed exactly.
    const auto lo = parse_integer(lo_text), hi = parse_integer(trim(hi_text.substr(2)));
    const auto step = step_text.empty() ? std::optional<std::int64_t>(1) : parse_integer(step_text);
    if (!lo || !hi || !step || *lo < -1074 || *hi > 1023)
      throw sweep_error(fmt::format("sweep '{}': powers of two need whole exponents between -1074 and 1023", echo(expr)));
    std::vector<std::string> out;
    for (auto& e : linear_integers(*lo, *hi, *step, expr)) {
      const int k = std::stoi(e);
      out.push_back(k >= 0 && k <= 62 ? std::to_string(std::int64_t{1} << k) : format_number(std::ldexp(1.0, k)));
    }
    return out;
  }
  const auto lo_i = parse_integer(lo_text), hi_i = parse_integer(hi_text);
  const auto step_i = step_text.empty() ? std::optional<std::int64_t>(1) : parse_integer(step_text);
  if (lo_i && hi_i && step_i) return linear_integers(*lo_i, *hi_i, *step_i, expr);

  const double lo = parse_number(lo_text), hi = parse_number(hi_text);
  const double step = step_text.empty() ? 1.0 : parse_number(step_text);
  if (!(step > 0)) throw sweep_error(fmt::format("sweep '{}': step must be positive", echo(expr)));
  if (lo > hi) throw sweep_error(fmt::format("sweep '{}': start is larger than stop", echo(expr)));
  const double count = std::floor((hi - lo) / step * (1 + 1e-12)) + 1;
  check_count(count, expr);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) out.push_back(sweep_real(lo + static_cast<double>(i) * step));
  check_unique(out, expr);
  return out;
}

std::vector<std::string> geometric(const std::string& expr) {
  const auto c1 = expr.find(':'), c2 = expr.find(':', c1 + 1);
  const double lo = parse_number(expr.substr(0, c1));
  const double hi = parse_number(expr.substr(c1 + 1, c2 - c1 - 1));
  const double factor = parse_number(expr.substr(c2 + 1));
  if (!(lo > 0)) throw sweep_error(fmt::format("geometric sweep '{}': start must be positive", echo(expr)));
  if (!(factor > 1)) throw sweep_error(fmt::format("geometric sweep '{}': factor must be greater than 1", echo(expr)));
  if (lo > hi) throw sweep_error(fmt::format("geometric sweep '{}': start is larger than stop", echo(expr)));
  const double count = std::floor(std::log(hi / lo) / std::log(factor) + 1e-12) + 1;
  check_count(count, expr);
  std::vector<std::string> out;
  double x = lo;
  for (std::size_t i = 0; i < static_cast<std::size_t>(count) && x <= hi * (1 + 1e-12); ++i, x *= factor)
    out.push_back(std::abs(x) < 9.007199254740992e15 && std::round(x) == std::round(x * 1e6) / 1e6
                      ? format_number(std::round(x))
                      : sweep_real(x));
  check_unique(out, expr);
  return out;
}

} // namespace

double parse_number(const std::string& text) {
  double v = 0;
  if (!try_number(text, v))
    throw sweep_error(fmt::format("'{}' is not a number (expected e.g. 1024, 1e6 or 2^20)", echo(text)));
  return v;
}

std::optional<std::int64_t> parse_integer(const std::string& text) {
  const std::string t = trim(text);
  if (auto caret = t.find('^'); caret != std::string::npos) {
    const auto base = parse_integer(t.substr(0, caret)), exponent = parse_integer(t.substr(caret + 1));
    if (!base || !exponent || *exponent < 0 || *exponent > 63) return std::nullopt;
    i128 v = 1;
    for (std::int64_t i = 0; i < *exponent; ++i) {
      v *= *base;
      if (v > int64_hi || v < int64_lo) return std::nullopt;
    }
    return static_cast<std::int64_t>(v);
  }
  // [+-]digits[.digits][e[+-]digits], evaluated exactly.
  std::size_t i = 0;
  bool negative = false;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
  std::string digits;
  long long shift = 0; // decimal exponent applied to `digits`
  const std::size_t int_start = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) digits += t[i++];
  bool any = i > int_start;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const std::size_t frac_start = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
      digits += t[i++];
      --shift;
    }
    any = any || i > frac_start;
  }
  if (!any) return std::nullopt;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) exp_negative = t[i++] == '-';
    const std::size_t exp_start = i;
    long long e = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
      e = std::min(e * 10 + (t[i++] - '0'), 100000LL);
    }
    if (i == exp_start) return std::nullopt;
    shift += exp_negative ? -e : e;
  }
  if (i != t.size()) return std::nullopt;
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  for (; shift < 0; ++shift) {
    if (digits.empty()) break;
    if (digits.back() != '0') return std::nullopt; // a fraction
    digits.pop_back();
  }
  if (!digits.empty() && shift > 0) {
    if (shift > 19) return std::nullopt;
    digits.append(static_cast<std::size_t>(shift), '0');
  }
  if (digits.size() > 19) return std::nullopt;
  i128 v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  if (negative) v = -v;
  if (v > int64_hi || v < int64_lo) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::string format_number(double v) {
  if (std::abs(v) < 9.007199254740992e15 && v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

std::string canonical_number(const std::string& text) {
  if (const auto i = parse_integer(text)) return std::to_string(*i);
  double v = 0;
  return try_number(text, v) ? format_number(v) : text;
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
      check_count(static_cast<double>(out.size()), expr); // before the next part grows it further
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }

  // a..b[:step]: powers of two when both ends are 2^k, else linear.
  if (auto dots = expr.find(".."); dots != std::string::npos) return range(expr, dots);
  // start:stop:factor, geometric.
  if (std::count(expr.begin(), expr.end(), ':') == 2) return geometric(expr);
  return {canonical_number(expr)};
}

} // namespace speedlab::app
