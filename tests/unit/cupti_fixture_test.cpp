// Traces recorded by the CUPTI backend on the GPU machine (tests/fixtures/cupti/*.json):
// the parser's output on real data must keep its invariants, and the time split on it
// must add up.
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "analysis/time_split.hpp"

using namespace speedlab;

namespace {

std::vector<std::filesystem::path> fixtures() {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path dir = speedlab::testing::fixture_dir() / "cupti";
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("recorded CUPTI traces: correlation, clock order and time split", "[cupti_fixture]") {
  const auto files = fixtures();
  if (files.empty()) {
    WARN("no recorded CUPTI traces in tests/fixtures/cupti");
    return;
  }
  for (const auto& file : files) {
    INFO(file.filename().string());
    std::ifstream in(file);
    const auto t = nlohmann::json::parse(in).get<trace::device_trace>();
    CHECK(t.backend == "cupti");
    REQUIRE(t.has_gpu_activity());

    std::unordered_map<std::uint32_t, const trace::api_record*> runtime;
    for (const auto& a : t.api_calls) {
      CHECK(a.start <= a.end);
      if (!a.driver) runtime.emplace(a.correlation, &a);
    }
    // Every kernel and copy comes from a runtime call that began before it ran.
    for (const auto& k : t.kernels) {
      auto it = runtime.find(k.correlation);
      REQUIRE(it != runtime.end());
      CHECK(it->second->name.find("Launch") != std::string::npos);
      CHECK(it->second->start <= k.start);
      CHECK(k.start <= k.end);
    }
    for (const auto& m : t.memcpys) {
      auto it = runtime.find(m.correlation);
      REQUIRE(it != runtime.end());
      CHECK(it->second->name.rfind("cudaMemcpy", 0) == 0);
      CHECK(m.async == (it->second->name.find("Async") != std::string::npos));
      CHECK(it->second->start <= m.start);
    }

    const std::uint32_t thread = analysis::phase_thread(t);
    CHECK(thread != 0);
    std::set<std::string> phases;
    for (const auto& r : t.ranges)
      if (r.domain == "speedlab") {
        phases.insert(r.name);
        CHECK(r.thread == thread);
      }
    CHECK_FALSE(phases.empty());

    const auto splits = analysis::compute_time_splits(t);
    REQUIRE(splits.size() == t.repetitions.size());
    for (const auto& s : splits) {
      CHECK(s.gpu_busy() + s.gpu_idle() == s.wall_ns);
      CHECK(s.kernel > 0);
      CHECK(s.host >= 0);
    }
    // The JSON form survives another round trip unchanged.
    CHECK(nlohmann::json(nlohmann::json(t).get<trace::device_trace>()).dump() == nlohmann::json(t).dump());
  }
}
