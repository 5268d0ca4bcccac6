#include "speedlab_catch.hpp"

#include <set>

#include "app/suite/sweep.hpp"

using speedlab::app::expand_sweep;
using speedlab::app::sweep_error;
using speedlab::app::parse_integer;
using speedlab::app::canonical_number;
using Catch::Contains;

TEST_CASE("sweep: single values are canonical", "[sweep]") {
  CHECK(expand_sweep("1024") == std::vector<std::string>{"1024"});
  CHECK(expand_sweep("1e6") == std::vector<std::string>{"1000000"});
  CHECK(expand_sweep("2^20") == std::vector<std::string>{"1048576"});
  CHECK(expand_sweep("0.5") == std::vector<std::string>{"0.5"});
  CHECK(expand_sweep("add") == std::vector<std::string>{"add"});
}

TEST_CASE("sweep: powers of two, linear and geometric ranges", "[sweep]") {
  CHECK(expand_sweep("2^10..2^13") == std::vector<std::string>{"1024", "2048", "4096", "8192"});
  CHECK(expand_sweep("2^10..2^14:2") == std::vector<std::string>{"1024", "4096", "16384"});
  CHECK(expand_sweep("1..4") == std::vector<std::string>{"1", "2", "3", "4"});
  CHECK(expand_sweep("0..100:50") == std::vector<std::string>{"0", "50", "100"});
  CHECK(expand_sweep("512:5.12e5:10") == std::vector<std::string>{"512", "5120", "51200", "512000"});
  CHECK(expand_sweep("a,b,2^3") == std::vector<std::string>{"a", "b", "8"});
}

TEST_CASE("sweep: impossible ranges are errors that say what was expected", "[sweep]") {
  CHECK_THROWS_WITH(expand_sweep("2^20..2^10"), Catch::Contains("start is larger than stop"));
  CHECK_THROWS_WITH(expand_sweep("10:1:2"), Catch::Contains("start is larger than stop"));
  CHECK_THROWS_WITH(expand_sweep("1:100:1"), Catch::Contains("factor must be greater than 1"));
  CHECK_THROWS_WITH(expand_sweep("0:100:2"), Catch::Contains("start must be positive"));
  CHECK_THROWS_WITH(expand_sweep("1..10:0"), Catch::Contains("step must be positive"));
  CHECK_THROWS_WITH(expand_sweep("1..1e9"), Catch::Contains("at most"));
  CHECK_THROWS_WITH(expand_sweep("x..10"), Catch::Contains("not a number"));
  CHECK_THROWS_AS(expand_sweep(""), sweep_error);
}

TEST_CASE("sweep: whole-number ranges are computed in integers", "[sweep]") {
  CHECK(expand_sweep("9007199254740992..9007199254740993") ==
        std::vector<std::string>{"9007199254740992", "9007199254740993"});
  CHECK(expand_sweep("2e9..2e9") == std::vector<std::string>{"2000000000"});
  CHECK(expand_sweep("1e3..3e3:1e3") == std::vector<std::string>{"1000", "2000", "3000"});
  CHECK(expand_sweep("2^60..2^62") ==
        std::vector<std::string>{"1152921504606846976", "2305843009213693952", "4611686018427387904"});
  CHECK(expand_sweep("-3..-1") == std::vector<std::string>{"-3", "-2", "-1"});
  CHECK_THROWS_WITH(expand_sweep("0..9223372036854775807"), Contains("at most 4096"));
  CHECK_THROWS_WITH(expand_sweep("-9223372036854775808..9223372036854775807"), Contains("at most 4096"));
  CHECK_THROWS_WITH(expand_sweep("1..1e300"), Contains("at most 4096"));
}

TEST_CASE("sweep: exact integers keep every digit", "[sweep]") {
  CHECK(parse_integer("9007199254740993") == 9007199254740993LL);
  CHECK(parse_integer("1.5e3") == 1500);
  CHECK(parse_integer("2^40") == (std::int64_t{1} << 40));
  CHECK_FALSE(parse_integer("1.5"));
  CHECK_FALSE(parse_integer("1e-3"));
  CHECK_FALSE(parse_integer("99999999999999999999"));
  CHECK_FALSE(parse_integer("2^64"));
  CHECK_FALSE(parse_integer("abc"));
  CHECK(canonical_number("9007199254740993") == "9007199254740993");
  CHECK(canonical_number("1e3") == "1000");
  CHECK(canonical_number("0.5") == "0.5");
}

TEST_CASE("sweep: real steps give clean values, and a step below precision is an error", "[sweep]") {
  CHECK(expand_sweep("0..1:0.1").size() == 11);
  CHECK(expand_sweep("0..1:0.1")[3] == "0.3");
  CHECK(expand_sweep("0.5..2.5") == std::vector<std::string>{"0.5", "1.5", "2.5"});
  CHECK_THROWS_WITH(expand_sweep("1..1.0000000000001:1e-15"), Contains("twice"));
  const auto fine = expand_sweep("1:1.00001:1.000001"); // every value distinct, none rounded together
  CHECK(std::set<std::string>(fine.begin(), fine.end()).size() == fine.size());
  CHECK_THROWS_WITH(expand_sweep("1:1.000000000000001:1.0000000000000002"), Contains("twice"));
  CHECK_THROWS_WITH(expand_sweep("1..2:nan"), Contains("not a number") || Contains("positive"));
}
