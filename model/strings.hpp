// Small string helpers for the readers of text: suite sweeps, metric lists, device lists,
// /proc files.
//
//   trim("  2^10..2^20 ");         // "2^10..2^20"
//   trim("model name\t: x\r\n", " \t\r\n");
#pragma once

#include <string>
#include <string_view>

namespace speedlab {

// s without the leading and trailing characters of `blanks` (spaces and tabs by default).
inline std::string trim(std::string_view s, std::string_view blanks = " \t") {
  const auto b = s.find_first_not_of(blanks);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(blanks) - b + 1));
}

} // namespace speedlab
