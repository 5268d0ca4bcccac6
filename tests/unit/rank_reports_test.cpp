// The reports of a multi-rank job on the recorded two-rank fixtures (tests/fixtures/ranks,
// rank 1 slowed on purpose; see rank_fixture_test.cpp): report.html's rank-by-time overview,
// trace.json's one group per rank, results.json's rank and host on every per-process record.
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "app/profile/profile_report.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab;

namespace {

// The fixture copied into a temporary folder: the reports are written next to the streams.
void copy_fixture(const std::string& shape, const std::filesystem::path& to) {
  std::filesystem::copy(speedlab::testing::fixture_dir() / "ranks" / shape, to, std::filesystem::copy_options::recursive);
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

} // namespace

TEST_CASE("rank fixtures: the reports show and group each rank", "[ranks][fixtures][reports]") {
  for (const char* shape : {"outside", "inside"}) {
    INFO(shape);
    speedlab::testing::temp_dir dir;
    copy_fixture(shape, dir.path());
    const auto written = app::report_profile_folder(dir.path(), {"html", "perfetto", "json"});
    REQUIRE(written.failed == 0);

    const auto a = app::analyze_profile_folder(dir.path());
    REQUIRE(a.ranks);
    REQUIRE(a.ranks->ranks.size() == 2);
    const std::string host = a.ranks->ranks[0].host;
    REQUIRE(!host.empty());
    std::set<std::uint32_t> rank_pids{a.ranks->ranks[0].pid, a.ranks->ranks[1].pid};

    // report.html: one overview row per rank, the straggler (rank 1) highlighted and named.
    const std::string html = read_text(dir.path() / "report.html");
    CHECK(occurrences(html, "class=\"rank-row") == 2);
    CHECK(html.find("class=\"rank-row\" data-rank=\"rank 0\"") != std::string::npos);
    CHECK(html.find("class=\"rank-row straggler-rank\" data-rank=\"rank 1\"") != std::string::npos);
    CHECK(html.find("rank 1 · straggler") != std::string::npos);
    CHECK(html.find("Straggler: rank 1: its compute per step runs") != std::string::npos);
    CHECK(html.find("the others wait per step: rank 0 ") != std::string::npos);
    // The overview sits with the per-rank table.
    const auto chart = html.find("class=\"rank-timeline\"");
    const auto table = html.find("id=\"program-ranks\"");
    REQUIRE(chart != std::string::npos);
    REQUIRE(table != std::string::npos);
    CHECK(table < chart);

    // trace.json: each rank one group named "rank R (host, pid N)" holding its host threads
    // and its GPU lanes; nothing of theirs elsewhere.
    std::ifstream trace_in(dir.path() / "trace.json");
    const auto trace = nlohmann::json::parse(trace_in);
    std::map<std::int64_t, std::string> group_names;
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "M" && e["name"] == "process_name") group_names[e["pid"].get<std::int64_t>()] = e["args"]["name"].get<std::string>();
    std::map<std::string, std::int64_t> rank_groups;
    for (const auto& [pid, name] : group_names)
      if (name.rfind("rank ", 0) == 0) rank_groups[name] = pid;
    REQUIRE(rank_groups.size() == 2);
    for (const auto& r : a.ranks->ranks) {
      const std::string name = "rank " + std::to_string(*r.id.rank) + " (" + host + ", pid " + std::to_string(r.pid) + ")";
      INFO(name);
      REQUIRE(rank_groups.count(name) == 1);
      const std::int64_t pid = rank_groups[name];
      std::size_t kernels = 0, host_events = 0;
      for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X" || e["pid"] != pid) continue;
        if (e["cat"] == "kernel") {
          ++kernels;
          CHECK(e["tid"].get<std::int64_t>() >= 1000000000);
        } else if (e["cat"] == "cuda_runtime" || e["cat"] == "user_annotation") {
          ++host_events;
        }
      }
      CHECK(kernels > 0);
      CHECK(host_events > 0);
    }
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "X" && e["cat"] == "kernel") {
        const std::int64_t pid = e["pid"].get<std::int64_t>();
        CHECK((pid == rank_groups.begin()->second || pid == std::next(rank_groups.begin())->second));
      }

    // results.json: host and rank on every per-process record.
    std::ifstream json_in(dir.path() / "results.json");
    const auto j = nlohmann::json::parse(json_in);
    std::set<int> point_ranks;
    for (const auto& p : j["points"]) {
      CHECK(p["host"] == host);
      REQUIRE(p.contains("rank"));
      // Outside, torchrun itself is a point too (it initialized CUDA): no rank.
      if (p["workload"].get<std::string>().find("torchrun") != std::string::npos) {
        CHECK(p["rank"].is_null());
        continue;
      }
      REQUIRE(p["rank"].is_number_integer());
      point_ranks.insert(p["rank"].get<int>());
      CHECK(p["world_size"] == 2);
    }
    CHECK(point_ranks == std::set<int>{0, 1});
    std::set<int> process_ranks;
    for (const auto& p : j["program"]["processes"]) {
      CHECK(p["host"] == host);
      REQUIRE(p.contains("rank"));
      const bool is_rank = rank_pids.count(p["pid"].get<std::uint32_t>()) == 1;
      CHECK(p["rank"].is_number_integer() == is_rank); // torchrun itself (outside) has none
      if (is_rank) process_ranks.insert(p["rank"].get<int>());
    }
    CHECK(process_ranks == std::set<int>{0, 1});
    REQUIRE(!j["program"]["streams"].empty());
    for (const auto& s : j["program"]["streams"]) {
      CHECK(s["host"] == host);
      CHECK(s["rank"].is_number_integer());
    }
    for (const auto& r : j["program"]["ranks"]["ranks"]) {
      CHECK(r["host"] == host);
      CHECK(r["rank"].is_number_integer());
    }
  }
}

TEST_CASE("rank fixtures: analyze --json tags each process with host and rank as results.json does",
          "[ranks][fixtures][analyze]") {
  // Compares the two documents field by field, so it holds for any recording of this shape.
  for (const char* shape : {"outside", "inside"}) {
    INFO(shape);
    speedlab::testing::temp_dir dir;
    copy_fixture(shape, dir.path());
    REQUIRE(app::report_profile_folder(dir.path(), {"json"}).failed == 0);
    std::ifstream json_in(dir.path() / "results.json");
    const auto results = nlohmann::json::parse(json_in);
    const auto a = app::analyze_profile_folder(dir.path());
    REQUIRE(a.ranks);
    const nlohmann::json analyzed = app::analyze_profile_json(a);
    REQUIRE(analyzed.contains("analysis"));

    for (const char* set : {"processes", "streams"}) {
      INFO(set);
      const auto& mine = analyzed["program"][set];
      const auto& theirs = results["program"][set];
      REQUIRE(!mine.empty());
      REQUIRE(mine.size() == theirs.size());
      std::set<int> ranks;
      for (std::size_t i = 0; i < mine.size(); ++i) {
        INFO("pid " << mine[i].value("pid", 0u));
        CHECK(mine[i]["pid"] == theirs[i]["pid"]);
        for (const char* key : {"host", "rank", "local_rank", "world_size"}) {
          INFO(key);
          REQUIRE(mine[i].contains(key));
          CHECK(mine[i][key] == theirs[i][key]);
        }
        CHECK(!mine[i]["host"].get<std::string>().empty());
        if (mine[i]["rank"].is_number_integer()) {
          ranks.insert(mine[i]["rank"].get<int>());
          CHECK(mine[i]["world_size"] == 2);
          CHECK(mine[i]["local_rank"].is_number_integer());
        }
      }
      CHECK(ranks == std::set<int>{0, 1});
    }
  }
}
