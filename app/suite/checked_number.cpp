#include "app/suite/checked_number.hpp"

#include <cmath>

#include <fmt/format.h>

#include "app/suite/names.hpp"
#include "app/suite/sweep.hpp"

namespace speedlab::app {
namespace {

std::string range_text(const number_rule& rule) {
  return fmt::format("{} between {} and {}{}{}", rule.integer ? "a whole number" : "a number", format_number(rule.min),
                     format_number(rule.max), *rule.unit ? " " : "", rule.unit);
}

} // namespace

double checked_value(double value, const number_rule& rule) {
  if (!std::isfinite(value) || value < rule.min || value > rule.max || (rule.integer && value != std::floor(value)))
    throw number_error(fmt::format("must be {}, found '{}'", range_text(rule), format_number(value)));
  return value;
}

double checked_number(const std::string& text, const number_rule& rule) {
  double v = 0;
  try {
    v = parse_number(text);
  } catch (const sweep_error&) {
    throw number_error(fmt::format("must be {}, found '{}'", range_text(rule), echo(text)));
  }
  try {
    return checked_value(v, rule);
  } catch (const number_error&) {
    throw number_error(fmt::format("must be {}, found '{}'", range_text(rule), echo(text)));
  }
}

} // namespace speedlab::app
