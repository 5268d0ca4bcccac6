// Saved results with integer fields out of their type's range are refused with the key's
// name, never cast (fuzz_results found "threads": 2444444444.2 cast to int: undefined).
#include <nlohmann/json.hpp>

#include "model/counters.hpp"
#include "model/results.hpp"
#include "model/saved_records.hpp"
#include "speedlab_catch.hpp"

using nlohmann::json;
using namespace speedlab;

TEST_CASE("results: integer fields must be whole numbers in range", "[results][json]") {
  json j = {{"id", "w/v/n=1"}, {"workload", "w"}, {"variant", "v"}, {"status", "ok"}, {"threads", 4}};
  CHECK(j.get<point_result>().threads == 4);
  j["threads"] = 8.0; // a whole float reads as the integer
  CHECK(j.get<point_result>().threads == 8);
  for (const json& bad : {json(2444444444.2), json(2444444444.0), json(1e300), json(-3e9), json(2.5), json("4")}) {
    j["threads"] = bad;
    CHECK_THROWS(j.get<point_result>());
  }
  j["threads"] = 4;
  j["wall"] = {{"count", 1e30}};
  CHECK_THROWS_WITH(j.get<point_result>(), Catch::Contains("'count' must be a whole number"));
  j["wall"] = {{"count", 12}, {"median", 1.5}};
  CHECK(j.get<point_result>().wall.count == 12);
  j["warmup_runs"] = 18446744073709551616.0; // 2^64: past size_t
  CHECK_THROWS_WITH(j.get<point_result>(), Catch::Contains("'warmup_runs'"));
}

TEST_CASE("results: arrays of integers are checked element by element", "[results][json]") {
  json k = {{"kernel", "k"}, {"launch", 0}, {"grid", {1056, 1, 1}}, {"block", {256, 1, 1}}, {"metrics", json::object()}};
  CHECK(k.get<counters::kernel_counters>().grid[0] == 1056);
  k["grid"] = {1056, 9.9e18, 1};
  CHECK_THROWS_WITH(k.get<counters::kernel_counters>(), Catch::Contains("'grid'"));
}
