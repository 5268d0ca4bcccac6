// The states as enums (model/states.hpp): every word round-trips through its one to_string and
// parse, an unknown word is refused naming itself and the words accepted, and JSON carries
// the words results.json and analysis.json always had.
#include "speedlab_catch.hpp"

#include <nlohmann/json.hpp>

#include "model/results.hpp"
#include "model/states.hpp"

using namespace speedlab;
using Catch::Contains;

TEST_CASE("states: each word parses back to its state", "[states]") {
  for (auto k : {variant_kind::serial, variant_kind::threads, variant_kind::cuda})
    CHECK(parse_variant_kind(to_string(k)) == k);
  for (auto v : {verdict::same, verdict::slower, verdict::faster, verdict::unclear, verdict::broken, verdict::fixed,
                 verdict::not_measured})
    CHECK(parse_verdict(to_string(v)) == v);
  for (auto v : {timing_verdict::agree, timing_verdict::differ, timing_verdict::not_compared,
                 timing_verdict::no_counterpart})
    CHECK(parse_timing_verdict(to_string(v)) == v);
  for (auto s : {severity::info, severity::warning, severity::critical}) CHECK(parse_severity(to_string(s)) == s);
  // The words of the saved formats (docs/results-schema.md), not the enumerators' names.
  CHECK(std::string(to_string(verdict::not_measured)) == "not measured");
  CHECK(std::string(to_string(timing_verdict::no_counterpart)) == "no counterpart");
}

TEST_CASE("states: an unknown word is refused, naming it and the words accepted", "[states]") {
  CHECK_THROWS_AS(parse_variant_kind("gpu"), std::invalid_argument);
  CHECK_THROWS_WITH(parse_variant_kind("gpu"), Contains("unknown kind 'gpu' (one of serial, threads, cuda)"));
  CHECK_THROWS_WITH(parse_verdict("worse"), Contains("unknown verdict 'worse'") && Contains("not measured"));
  CHECK_THROWS_WITH(parse_timing_verdict("close"), Contains("unknown timing verdict 'close'"));
  CHECK_THROWS_WITH(parse_severity("fatal"), Contains("unknown severity 'fatal' (one of info, warning, critical)"));
  CHECK_THROWS_AS(parse_severity(""), std::invalid_argument);
}

TEST_CASE("states: severity orders by how severe, JSON carries the words", "[states]") {
  CHECK(severity::critical > severity::warning);
  CHECK(severity::warning > severity::info);
  nlohmann::json j = verdict::not_measured;
  CHECK(j == "not measured");
  CHECK(j.get<verdict>() == verdict::not_measured);
  j = severity::warning;
  CHECK(j == "warning");
  CHECK_THROWS_WITH(nlohmann::json("loud").get<severity>(), Contains("unknown severity 'loud'"));
}

TEST_CASE("states: a point's kind is written as its word; a record without one keeps none", "[states]") {
  point_result p;
  p.kind = variant_kind::threads;
  CHECK(nlohmann::json(p)["kind"] == "threads");
  CHECK(nlohmann::json(p).get<point_result>().kind == variant_kind::threads);
  p.kind.reset();
  CHECK(nlohmann::json(p)["kind"] == ""); // as results written before kinds were checked
  CHECK(!nlohmann::json(p).get<point_result>().kind);
}
