// Safe-by-default HTML building for report.html: anything streamed as a string is
// untrusted text and gets escaped (html_escape); markup must be marked as such with the
// _html literal or come from the tag helpers, whose attribute values are escaped too.
// A forgotten _html therefore shows up as visible "&lt;td&gt;" text, never as an injection.
//
//   html::writer w;
//   w << "<td>"_html << kernel_name << "</td>"_html;       // kernel_name is escaped
//   w.open("a", {{"href", "#findings"}}) << "Findings"; w.close("a");
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "reports/common/text.hpp"

namespace speedlab::reports::html {

// Trusted markup (tags written by speedlab's code, never data).
struct markup {
  std::string s;
};

inline markup operator""_html(const char* s, std::size_t n) { return markup{std::string(s, n)}; }

using attributes = std::initializer_list<std::pair<std::string_view, std::string>>;

class writer {
public:
  writer& operator<<(const markup& m) {
    m_buf += m.s;
    return *this;
  }
  // Untrusted text: always escaped.
  writer& operator<<(std::string_view text) {
    m_buf += html_escape(text);
    return *this;
  }
  writer& operator<<(const std::string& text) { return *this << std::string_view(text); }
  writer& operator<<(const char* text) { return *this << std::string_view(text); }

  // <tag a="v" ...> with escaped values; tag and attribute names are code constants.
  writer& open(std::string_view tag, attributes attrs = {});
  writer& close(std::string_view tag);
  // <tag attrs>text</tag>
  writer& element(std::string_view tag, std::string_view text, attributes attrs = {});
  // <tag attrs/> (SVG shapes)
  writer& empty(std::string_view tag, attributes attrs);

  const std::string& str() const { return m_buf; }
  std::string take() { return std::move(m_buf); }

private:
  std::string m_buf;
  // <tag attrs then `end` (">" or "/>").
  void tag_out(std::string_view tag, attributes attrs, std::string_view end);
};

// Coordinates and sizes in SVG: one decimal, no exponent.
std::string num(double v);

} // namespace speedlab::reports::html
