// trace.json (Chrome Trace Event / Perfetto, Kineto's conventions).
#include <map>
#include <set>

#include "speedlab_catch.hpp"
#include <nlohmann/json.hpp>

#include "reports/reporter.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;
using nlohmann::json;

namespace {
json render_trace(const test_fixture::report_fixture& f) {
  return json::parse(test_golden::render("perfetto", f.input(), "trace.json"));
}
} // namespace

TEST_CASE("perfetto trace has GPU tracks, API calls, phases and memcpy names", "[report][perfetto]") {
  const auto f = test_fixture::make_report_fixture();
  const auto j = render_trace(f);
  REQUIRE(j.at("traceEvents").is_array());
  std::map<std::string, int> by_cat;
  std::set<std::string> names;
  std::size_t kernels = 0;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++by_cat[e.at("cat").get<std::string>()];
    names.insert(e.at("name").get<std::string>());
    if (e.at("cat") == "kernel") {
      ++kernels;
      CHECK(e.at("args").at("grid").size() == 3);
      CHECK(e.at("args").at("block").size() == 3);
      CHECK(e.at("args").contains("registers per thread"));
      CHECK(e.at("args").contains("shared memory"));
      CHECK(e.at("pid") == 0); // GPU 0
    }
    if (e.at("cat") == "gpu_memcpy") {
      CHECK(e.at("args").at("bytes").get<double>() > 0);
      CHECK(e.at("args").at("memory bandwidth (GB/s)").get<double>() > 0);
    }
  }
  std::size_t expected_kernels = 0;
  for (const auto& [id, t] : f.traces) expected_kernels += t.kernels.size();
  CHECK(kernels == expected_kernels);
  CHECK(by_cat["cuda_runtime"] > 0);
  CHECK(by_cat["cuda_driver"] > 0);
  CHECK(by_cat["user_annotation"] > 0);
  CHECK(by_cat["gpu_memset"] > 0);
  CHECK(by_cat["cuda_sync"] > 0);
  CHECK(names.count("Memcpy HtoD (Pageable -> Device)") == 1);
  CHECK(names.count("Memcpy DtoH (Device -> Pinned)") == 1);
  CHECK(names.count("cudaLaunchKernel_v7000") == 1);
  CHECK(names.count("vector_add/cuda_naive n=1048576: compute") == 1);
}

TEST_CASE("perfetto timestamps are microseconds of the steady clock", "[report][perfetto]") {
  const auto f = test_fixture::make_report_fixture();
  const auto j = render_trace(f);
  const auto& first = f.traces.begin()->second.kernels.front();
  bool found = false;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "kernel" &&
        std::llround(e.at("ts").get<double>() * 1000) == static_cast<long long>(first.start)) {
      found = true;
      CHECK(std::llround(e.at("dur").get<double>() * 1000) == static_cast<long long>(first.end - first.start));
    }
  CHECK(found);
}

TEST_CASE("perfetto flow events join every launch to its GPU work", "[report][perfetto]") {
  const auto f = test_fixture::make_report_fixture();
  const auto j = render_trace(f);
  std::map<std::uint64_t, json> starts, finishes;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "s") starts[e.at("id")] = e;
    if (e.at("ph") == "f") finishes[e.at("id")] = e;
  }
  std::size_t gpu_ops = 0;
  for (const auto& [id, t] : f.traces) gpu_ops += t.kernels.size() + t.memcpys.size() + t.memsets.size();
  CHECK(starts.size() == gpu_ops); // every GPU op in the fixture has its API call
  REQUIRE(starts.size() == finishes.size());
  for (const auto& [id, s] : starts) {
    REQUIRE(finishes.count(id));
    const auto& fin = finishes.at(id);
    CHECK(s.at("cat") == "ac2g");
    CHECK(fin.at("bp") == "e");
    CHECK(fin.at("pid") == 0);
    CHECK(s.at("ts").get<double>() <= fin.at("ts").get<double>()); // launch before the work starts
  }
}

TEST_CASE("perfetto slices on one track nest properly", "[report][perfetto]") {
  const auto f = test_fixture::make_report_fixture();
  const auto j = render_trace(f);
  // Partially overlapping slices on one (pid, tid) break the timeline viewers' nesting.
  std::map<std::pair<long long, long long>, std::vector<std::pair<long long, long long>>> tracks;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "X") {
      const long long s = std::llround(e.at("ts").get<double>() * 1000);
      tracks[{e.at("pid").get<long long>(), e.at("tid").get<long long>()}].push_back(
          {s, s + std::llround(e.at("dur").get<double>() * 1000)});
    }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<long long> open_ends;
    for (const auto& [s, e] : slices) {
      while (!open_ends.empty() && open_ends.back() <= s) open_ends.pop_back();
      INFO("track pid " << track.first << " tid " << track.second << " slice " << s << "-" << e);
      if (!open_ends.empty()) CHECK(e <= open_ends.back());
      open_ends.push_back(e);
    }
  }
}

TEST_CASE("perfetto names processes and threads", "[report][perfetto]") {
  const auto f = test_fixture::make_report_fixture();
  const auto j = render_trace(f);
  std::set<std::string> process_names, thread_names;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "M") {
      if (e.at("name") == "process_name") process_names.insert(e.at("args").at("name").get<std::string>());
      if (e.at("name") == "thread_name") thread_names.insert(e.at("args").at("name").get<std::string>());
    }
  CHECK(process_names.count("GPU 0 (NVIDIA H100 80GB HBM3)") == 1);
  CHECK(process_names.count("point 7: vector_add/cuda_naive/n=1048576") == 1);
  CHECK(thread_names.count("stream 7") == 1);
  CHECK(thread_names.count("main thread") == 1);
  CHECK(j.at("deviceProperties").size() == 1);
}

TEST_CASE("perfetto writes nothing without GPU data", "[report][perfetto]") {
  auto f = test_fixture::make_report_fixture();
  f.traces.clear();
  auto r = reports::make_reporter("perfetto");
  test_golden::temp_dir dir;
  CHECK(r->write(f.input(), dir.path).empty());
  CHECK(std::filesystem::is_empty(dir.path));
}
