// Parameter sweeps: the values one parameter takes in a suite.
//   1024, 1e6, 2^20, add          a single value
//   [a, b, c] (YAML) or a,b,c     a list
//   2^10..2^28  or 2^10..2^28:2   powers of two (exponent step 2)
//   1..8  or 0..100:10            linear range, inclusive
//   512:5.12e8:10                 geometric: start, stop (inclusive), factor
#pragma once

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
std::string format_number(double value);

} // namespace speedlab::app
