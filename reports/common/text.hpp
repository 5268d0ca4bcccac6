// Escaping and number formatting shared by every reporter. Untrusted strings (kernel names,
// plugin text, parameters, messages) reach a report only through one of the escape
// functions here; numbers are formatted the same way everywhere so reports are
// deterministic (golden-testable) and read the same across formats.
#pragma once

#include <string>
#include <string_view>

#include "model/format.hpp"

namespace speedlab::reports {

// HTML/SVG text and attribute values: & < > " ' become entities; control characters other
// than tab/newline become U+FFFD. Used for every untrusted string in report.html.
std::string html_escape(std::string_view s);

// Markdown: an identifier as a code span (safe for < > * _ |, also inside table cells).
std::string md_code(std::string_view s);
// Markdown prose (messages, explanations): inline markup and HTML are neutralised, table
// pipes escaped, line breaks folded into spaces.
std::string md_text(std::string_view s);

// One RFC 4180 field: quoted (with "" doubling) when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view s);

// Numbers and times: the one formatter of model/format.hpp, under the names reporters use.
inline std::string fmt_sig(double v, int digits = 3) { return format::sig(v, digits); }
inline std::string fmt_duration(double ns) { return format::duration(ns); }
inline std::string fmt_ms(double ns) { return format::ms(ns); }
inline std::string fmt_bytes(double bytes) { return format::bytes(bytes); }
inline std::string fmt_percent(double percent) { return format::percent(percent); }
inline std::string fmt_signed_percent(double percent) { return format::signed_percent(percent); }
inline std::string fmt_ratio(double ratio) { return format::ratio(ratio); }
inline std::string fmt_exact(double v) { return format::exact(v); }

} // namespace speedlab::reports
