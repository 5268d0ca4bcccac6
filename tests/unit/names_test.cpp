#include "speedlab_catch.hpp"

#include "app/suite/names.hpp"

using namespace speedlab::app;
using Catch::Contains;

TEST_CASE("names: did-you-mean finds close names only", "[names]") {
  CHECK(did_you_mean("vectr", {"vector", "reduction"}) == "vector");
  CHECK(did_you_mean("histgram", {"histogram", "transpose"}) == "histogram");
  CHECK(did_you_mean("zzzzzz", {"vector", "reduction"}).empty());
  CHECK(did_you_mean(std::string(1 << 20, 'v'), {"vector"}).empty()); // a 1 MB name: no typo, and fast
}

TEST_CASE("names: echoed text is bounded and shows no control characters", "[names]") {
  CHECK(echo("short") == "short");
  const std::string huge(10 << 20, 'x');
  const std::string e = echo(huge);
  CHECK(e.size() < 120);
  CHECK_THAT(e, Contains("(10485760 bytes)"));
  CHECK(echo("a\nb\x1b[31m") == "a?b?[31m");
  const std::string m = unknown_name_message("workload", huge, {"vector"});
  CHECK(m.size() < 200);
  CHECK_THAT(m, Contains("valid workloads: vector"));
}
