// model/format: the one wording of ratios and speedups (issue 26 item 5), at its edges.
#include "speedlab_catch.hpp"

#include <limits>
#include <string>

#include "model/format.hpp"

using namespace speedlab;

namespace {
bool has_exponent(const std::string& s) { return s.find("e+") != std::string::npos || s.find("e-") != std::string::npos; }
} // namespace

TEST_CASE("a speedup reads as how many times faster or slower, never below 1x", "[format]") {
  CHECK(format::speed(1 / 1.34) == "1.34x slower");
  CHECK(format::speed(0.75) == "1.33x slower"); // the console once said "0.75x slower"
  CHECK(format::speed(840) == "840x faster");
  CHECK(format::speed(2.0) == "2.00x faster");
  CHECK(format::speed(12.34) == "12.3x faster");
  CHECK(format::speed(9.996) == "10.0x faster"); // decimals chosen after rounding
  CHECK(format::speed(99.96) == "100x faster");
  // A Python loop 840x slower than C++ was printed "0.00x slower"; 0.001x is 1000x slower.
  CHECK(format::speed(1.0 / 840) == "840x slower");
  CHECK(format::speed(0.001) == "1000x slower");
  CHECK(format::speed(0.00119) == "840x slower");
}

TEST_CASE("near 1 a speedup keeps its direction; only a tie is as fast", "[format]") {
  CHECK(format::speed(1.0) == "1.00x as fast");
  CHECK(format::speed(1.0002) == "1.00x as fast");
  CHECK(format::speed(1.004) == "1.004x faster");
  CHECK(format::speed(1 / 1.004) == "1.004x slower");
  CHECK(format::speed(1.01) == "1.01x faster");
}

TEST_CASE("very large and very small ratios: no exponent, no 0.00x", "[format]") {
  for (double v : {1e-12, 1e-6, 3e-4, 1e6, 1e9, 1e15, 1e20}) {
    INFO(v);
    const std::string s = format::speed(v);
    CHECK_FALSE(has_exponent(s));
    CHECK(s.find("0.00x") == std::string::npos);
    CHECK(s.rfind("0x", 0) == std::string::npos); // never starts with a zero factor
  }
  CHECK(format::speed(1e9) == "1000000000x faster");
  CHECK(format::speed(1e-6) == "1000000x slower");
  for (double v : {1e6, 1e15, 1e20, 65536.0, 1048576.0}) CHECK_FALSE(has_exponent(format::sig(v, 4)));
  CHECK(format::sig(65536, 4) == "65536"); // analyze once printed [6.554e+04, 1.049e+06]
  CHECK(format::sig(1048576, 4) == "1048576");
}

TEST_CASE("what is not a positive number says n/a", "[format]") {
  CHECK(format::speed(0) == "n/a");
  CHECK(format::speed(-2) == "n/a");
  CHECK(format::speed(std::numeric_limits<double>::quiet_NaN()) == "n/a");
  CHECK(format::speed(std::numeric_limits<double>::infinity()) == "n/a");
  CHECK(format::ratio(std::numeric_limits<double>::infinity()) == "n/a");
}

TEST_CASE("ratios and intervals use the same digits", "[format]") {
  CHECK(format::ratio(4.213) == "4.21x");
  CHECK(format::ratio(840.4) == "840x");
  CHECK(format::ratio(1.0) == "1.00x");
  CHECK(format::ratio(0.00119) == "0.00119x");
  CHECK(format::speed_interval(1.25, 1.43) == "[1.25–1.43x faster]");
  CHECK(format::speed_interval(1 / 1.43, 1 / 1.25) == "[1.25–1.43x slower]");
  CHECK(format::speed_interval(1 / 1.1, 1.2) == "[1.10x slower – 1.20x faster]");
  CHECK(format::speed_interval(0, 1) == "");
  CHECK(format::speed_verdict(1.02, speedlab::verdict::same) == "1.02x faster (same within noise)");
  CHECK(format::speed_verdict(1.2, speedlab::verdict::unclear) == "1.20x faster (unclear)");
  CHECK(format::speed_verdict(0.5, speedlab::verdict::slower) == "2.00x slower");
}
