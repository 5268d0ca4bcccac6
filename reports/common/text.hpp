// Escaping and number formatting shared by every reporter. Untrusted strings (kernel names,
// plugin text, parameters, messages) reach a report only through one of the escape
// functions here; numbers are formatted the same way everywhere so reports are
// deterministic (golden-testable) and read the same across formats.
#pragma once

#include <string>
#include <string_view>

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

// Fixed-point with `digits` significant digits, never exponent notation ("0.000123", "1235").
// Non-finite values give "n/a".
std::string fmt_sig(double v, int digits = 3);
// A duration in nanoseconds with a unit picked for readability: "850 ns", "12.3 µs", "4.56 ms", "2.10 s".
std::string fmt_duration(double ns);
// Nanoseconds as milliseconds without a unit ("0.0123").
std::string fmt_ms(double ns);
// Bytes with a binary unit: "512 B", "4.00 KiB", "256 MiB".
std::string fmt_bytes(double bytes);
// A percentage given in percent (12.3 -> "12.3%").
std::string fmt_percent(double percent);
// A signed percentage given in percent (-1.23 -> "-1.2%", 0.5 -> "+0.5%").
std::string fmt_signed_percent(double percent);
// A ratio as "4.21x".
std::string fmt_ratio(double ratio);
// A plain number, shortest round-trip form ("0.1", "16777216", "1e+300"): for CSV/JSON-like
// machine-readable output.
std::string fmt_exact(double v);

} // namespace speedlab::reports
