// The one number and time formatter: findings (analysis), reports, the terminal and
// `speedlab compare` all write numbers through these, so a report never shows "us" beside
// "µs" or 3 digits beside 4. Deterministic (no locale), never exponent notation.
#pragma once

#include <string>

#include "model/states.hpp"

namespace speedlab::format {

// Fixed-point with `digits` significant digits ("0.000123", "1235"); non-finite: "n/a".
std::string sig(double v, int digits = 3);
// Nanoseconds with a unit picked for readability: "850 ns", "12.3 µs", "4.56 ms", "2.10 s".
std::string duration(double ns);
// Nanoseconds as milliseconds without a unit ("0.0123").
std::string ms(double ns);
// Bytes with a binary unit: "512 B", "4.00 KiB", "256 MiB".
std::string bytes(double bytes);
// A percentage given in percent (12.3 -> "12.3%").
std::string percent(double percent);
// A signed percentage given in percent (-1.23 -> "-1.2%", 0.5 -> "+0.5%").
std::string signed_percent(double percent);
// A ratio as "4.21x": 3 significant digits, at least 1 ("1.34x", "12.3x", "840x", "12345x");
// below 1 with 3 significant digits ("0.00119x"), never "0.00x".
std::string ratio(double ratio);
// How many times faster or slower, from speedup = reference time / this time: "1.34x slower"
// (speedup 0.746), "840x faster", "1.004x slower" near 1, "1.00x as fast" within 0.05%; "n/a" when not a
// positive number. The one wording of a speedup: console, reports, findings, analyze.
std::string speed(double speedup);
// A speedup's interval in the same words: "[1.25–1.43x slower]", "[2.10–2.31x faster]",
// "[1.10x slower – 1.20x faster]" when it straddles 1; "" when not positive.
std::string speed_interval(double low, double high);
// speed() with the analysis verdict where it adds something: "1.02x faster (same within
// noise)", "1.20x faster (unclear)"; "faster"/"slower" verdicts add nothing.
std::string speed_verdict(double speedup, verdict v);
// Rates: "2929 GB/s", "1.72 GFLOP/s".
std::string gbps(double v);
std::string gflops(double v);
// A plain number, shortest round-trip form ("0.1", "16777216", "1e+300"): machine-readable output.
std::string exact(double v);

} // namespace speedlab::format
