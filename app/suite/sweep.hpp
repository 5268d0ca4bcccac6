// Parameter sweeps: the values one parameter takes in a suite.
//   1024, 1e6, 2^20, add          a single value
//   [a, b, c] (YAML) or a,b,c     a list
//   2^10..2^28  or 2^10..2^28:2   powers of two (exponent step 2)
//   1..8  or 0..100:10            linear range, inclusive
//   512:5.12e8:10                 geometric: start, stop (inclusive), factor
// Ranges whose ends and step are whole numbers are computed in 64-bit integers, so
// 9007199254740992..9007199254740993 is two values and 2e9..2e9 one. A sweep that gives
// the same value twice (a step below the numbers' precision) is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace speedlab::app {

// A malformed or impossible sweep; the message says what was expected.
struct sweep_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr std::size_t max_sweep_points = 4096;

// Expands one sweep expression into values, formatted canonically (integers without
// exponent, reals with up to 17 significant digits). Non-numeric text is returned as is.
std::vector<std::string> expand_sweep(const std::string& expression);

// Parses a number in speedlab's syntax (plain, scientific, 2^k); throws sweep_error.
double parse_number(const std::string& text);
// The exact integer `text` stands for (1024, 2e9, 1.5e3, 2^40), or nothing when it is not
// a whole number that fits in 64 bits.
std::optional<std::int64_t> parse_integer(const std::string& text);
std::string format_number(double value);
// The canonical spelling of a numeric value (exact for integers), or `text` unchanged
// when it is not a number.
std::string canonical_number(const std::string& text);

} // namespace speedlab::app
