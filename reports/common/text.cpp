#include "reports/common/text.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace speedlab::reports {

namespace {
// Control characters other than tab, LF and CR have no place in a report.
bool is_bad_control(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f; }
constexpr std::string_view replacement = "\xEF\xBF\xBD"; // U+FFFD
} // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char ch : s) {
    switch (ch) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default:
      if (is_bad_control(static_cast<unsigned char>(ch))) out += replacement;
      else out += ch;
    }
  }
  return out;
}

std::string md_code(std::string_view s) {
  // Inside a code span nothing is markup except backticks; a table cell still splits on
  // '|', so that one is escaped (GFM renders "\|" in a code span as "|").
  std::string body;
  std::size_t run = 0, longest = 0;
  for (char ch : s) {
    if (ch == '`') longest = std::max(longest, ++run);
    else run = 0;
    if (ch == '\n' || ch == '\r' || ch == '\t') body += ' ';
    else if (ch == '|') body += "\\|";
    else if (is_bad_control(static_cast<unsigned char>(ch))) body += replacement;
    else body += ch;
  }
  if (body.empty()) return "` `";
  const std::string fence(longest + 1, '`');
  const bool pad = body.front() == '`' || body.back() == '`' || longest > 0;
  return pad ? fence + ' ' + body + ' ' + fence : fence + body + fence;
}

std::string md_text(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char ch : s) {
    switch (ch) {
    case '\\': case '`': case '*': case '_': case '[': case ']': case '|': case '#':
    case '~':
      out += '\\';
      out += ch;
      break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '\n': case '\r': case '\t': out += ' '; break;
    default:
      if (is_bad_control(static_cast<unsigned char>(ch))) out += replacement;
      else out += ch;
    }
  }
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += "\"\"";
    else out += ch;
  }
  out += '"';
  return out;
}

} // namespace speedlab::reports
