// JSON of the analysis model and the device model: round trips, optional sizes, defaults.
#include "speedlab_catch.hpp"

#include <nlohmann/json.hpp>

#include "analysis_test_support.hpp"

using namespace speedlab;

TEST_CASE("device_model round-trips through JSON", "[analysis][json]") {
  const auto d = analysis_test::h100();
  const nlohmann::json j = d;
  CHECK(j.at("gpu").at("dram_bw").at("value") == 3000);
  CHECK(j.at("gpu").at("dram_bw").at("measured") == true);
  const auto back = j.get<analysis::device_model>();
  CHECK(back.gpu_name == d.gpu_name);
  CHECK(back.gpu.size() == d.gpu.size());
  CHECK(back.gpu.at("launch_latency").unit == "us");
  CHECK(back.host.at("memory_bw").value == 100);
  CHECK(back.properties == d.properties);
}

TEST_CASE("analysis_result round-trips, with and without a crossover size", "[analysis][json]") {
  analysis::analysis_result a;
  a.device = analysis_test::h100(false);
  analysis::crossover c;
  c.workload = "vector";
  c.variant = "cuda";
  c.baseline = "serial";
  c.size = 39800.5;
  c.size_low = 30000;
  c.size_high = 50000;
  c.in_range = true;
  a.crossovers.push_back(c);
  c.size.reset();
  c.note = "no crossover in the swept range";
  a.crossovers.push_back(c);
  analysis::finding f;
  f.rule = "transfer-bound";
  f.evidence = {{"copy share", "80%"}};
  f.estimated_gain = 5;
  a.findings.push_back(f);
  a.speedups.push_back({"vector", "n=1", "cuda", "serial", 2, 1.5, 2.5, speedlab::verdict::faster, "bootstrap", "p", "b"});
  a.notes.push_back("a note");

  const nlohmann::json j = a;
  CHECK(j.at("crossovers").at(0).at("size") == 39800.5);
  CHECK(j.at("crossovers").at(1).at("size").is_null());
  const auto back = j.get<analysis::analysis_result>();
  REQUIRE(back.crossovers.size() == 2);
  REQUIRE(back.crossovers[0].size);
  CHECK(*back.crossovers[0].size == 39800.5);
  CHECK_FALSE(back.crossovers[1].size);
  REQUIRE(back.findings.size() == 1);
  CHECK(back.findings[0].evidence[0].value == "80%");
  CHECK(back.speedups[0].verdict == speedlab::verdict::faster);
  CHECK(back.notes == a.notes);
  CHECK(nlohmann::json(back) == j);
}

TEST_CASE("missing keys keep their defaults", "[analysis][json]") {
  const auto j = nlohmann::json::parse(R"({"findings": [{"rule": "launch-bound"}], "crossovers": [{}]})");
  const auto a = j.get<analysis::analysis_result>();
  REQUIRE(a.findings.size() == 1);
  CHECK(a.findings[0].estimated_gain == 0);
  REQUIRE(a.crossovers.size() == 1);
  CHECK(a.crossovers[0].with_transfers);
  CHECK_FALSE(a.crossovers[0].size);
  CHECK(a.device.gpu.empty());
}
