#include "reports/html/html_writer.hpp"

#include <cmath>

#include <fmt/format.h>

namespace speedlab::reports::html {

void writer::tag_out(std::string_view tag, attributes attrs, std::string_view end) {
  m_buf += '<';
  m_buf += tag;
  for (const auto& [name, value] : attrs) {
    m_buf += ' ';
    m_buf += name;
    m_buf += "=\"";
    m_buf += html_escape(value);
    m_buf += '"';
  }
  m_buf += end;
}

writer& writer::open(std::string_view tag, attributes attrs) {
  tag_out(tag, attrs, ">");
  return *this;
}

writer& writer::close(std::string_view tag) {
  m_buf += "</";
  m_buf += tag;
  m_buf += '>';
  return *this;
}

writer& writer::element(std::string_view tag, std::string_view text, attributes attrs) {
  open(tag, attrs);
  *this << text;
  return close(tag);
}

writer& writer::empty(std::string_view tag, attributes attrs) {
  tag_out(tag, attrs, "/>");
  return *this;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

} // namespace speedlab::reports::html
