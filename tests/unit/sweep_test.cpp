#include "speedlab_catch.hpp"

#include "app/sweep.hpp"

using speedlab::app::expand_sweep;
using speedlab::app::sweep_error;

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
