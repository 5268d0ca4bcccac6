// analyze() end to end: a hand-written lesson-style run from tests/fixtures/analysis,
// determinism, lazy trace loading, and speed on thousands of points.
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "analysis_test_support.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {

const std::filesystem::path fixture_dir = speedlab::testing::fixture_dir() / "analysis" / "lesson_vector";

std::vector<point_result> load_points(const std::filesystem::path& dir) {
  std::vector<point_result> out;
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line).get<point_result>());
  return out;
}

analysis::trace_loader file_loader(const std::filesystem::path& dir, int* calls = nullptr) {
  return [dir, calls](const point_result& p) -> std::optional<trace::device_trace> {
    if (calls) ++*calls;
    if (p.trace_file.empty()) return std::nullopt;
    std::ifstream in(dir / p.trace_file);
    if (!in) return std::nullopt;
    return nlohmann::json::parse(in).get<trace::device_trace>();
  };
}

} // namespace

TEST_CASE("the lesson's vector add: copies dominate, device-resident data wins", "[analysis][fixture]") {
  const auto points = load_points(fixture_dir);
  REQUIRE(points.size() == 4);
  int calls = 0;
  const auto r = analysis::analyze(points, h100(), file_loader(fixture_dir, &calls));
  CHECK(calls == 4); // once per point

  const std::string lesson = "vector/cuda_lesson/n=16777216,op=add";
  const std::string resident = "vector/cuda_resident/n=16777216,op=add";
  CHECK(findings_of(r, "transfer-bound", lesson).size() == 1);
  CHECK(findings_of(r, "pageable-memory", lesson).size() == 1);
  CHECK(findings_of(r, "transfer-bound", resident).empty());
  CHECK(findings_of(r, "pageable-memory", resident).empty());

  // Speedups over serial: both GPU variants faster, the resident one far more.
  double lesson_x = 0, resident_x = 0;
  for (const auto& s : r.speedups) {
    if (s.baseline != "serial") continue;
    if (s.point_id == lesson) lesson_x = s.ratio;
    if (s.point_id == resident) resident_x = s.ratio;
    CHECK(s.verdict == speedlab::verdict::faster);
  }
  CHECK(lesson_x > 1);
  CHECK(resident_x > 10 * lesson_x);

  // Roofline rows for the GPU phases and their kernel; CPU rows against the host.
  int gpu_rows = 0, cpu_rows = 0;
  for (const auto& row : r.roofline) {
    gpu_rows += row.processor == "gpu";
    cpu_rows += row.processor == "cpu";
    CHECK(row.percent_of_bound >= 0);
  }
  CHECK(gpu_rows == 4);
  CHECK(cpu_rows == 2);

  // What-ifs for the lesson variant: keeping data on the device is the big one.
  double on_device = 0;
  for (const auto& w : r.what_ifs)
    if (w.point_id == lesson && w.scenario == "data stays on the device") on_device = w.max_speedup;
  CHECK(on_device > 10);

  // The result serializes (no NaN) and is deterministic.
  const auto again = analysis::analyze(points, h100(), file_loader(fixture_dir));
  CHECK(nlohmann::json(r).dump() == nlohmann::json(again).dump());
}

TEST_CASE("a loader that throws becomes a note, not a failure", "[analysis]") {
  const auto p = cuda_point("vector", "cuda", {{"n", "1"}}, make_split(1e6, 0, 0));
  const auto r = analysis::analyze({p}, h100(), [](const point_result&) -> std::optional<trace::device_trace> {
    throw std::runtime_error("disk on fire");
  });
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.find("disk on fire") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("notes say when ceilings are estimates or missing", "[analysis]") {
  const auto g = cuda_point("vector", "cuda", {{"n", "1"}}, make_split(1e6, 0, 0));
  const auto s = make_point("vector", "serial", "serial", {{"n", "1"}}, spread(1e6, 0.01));
  auto has = [](const analysis::analysis_result& r, const char* text) {
    for (const auto& n : r.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(has(run({g, s}, h100(false)), "estimates"));
  CHECK(has(run({g, s}, analysis::device_model{}), "no GPU ceilings"));
  CHECK(has(run({g, s}, analysis::device_model{}), "host memory bandwidth unknown"));
  CHECK_FALSE(has(run({g, s}, h100(true)), "estimates"));
}

TEST_CASE("thousands of points analyze quickly", "[analysis][speed]") {
  std::vector<point_result> points;
  const char* workloads[] = {"vector", "reduce", "mc", "hist", "conv", "transpose", "mandel", "gauss"};
  for (const char* w : workloads)
    for (int op = 0; op < 4; ++op)
      for (int e = 10; e <= 28; ++e) {
        const double n = std::ldexp(1.0, e);
        const std::map<std::string, std::string> params = {{"n", std::to_string(static_cast<long long>(n))},
                                                           {"op", std::to_string(op)}};
        points.push_back(make_point(w, "serial", "serial", params, spread(100 + n, 0.02)));
        points.push_back(make_point(w, "threads", "threads", params, spread(20000 + n / 6, 0.02), 8));
        points.push_back(cuda_point(w, "cuda", params, make_split(5000 + 0.01 * n, 0.3 * n, 0.2 * n, 5000, 5000, 5000), 0.02));
        points.push_back(cuda_point(w, "cuda_resident", params, make_split(5000 + 0.01 * n, 0, 0, 5000, 5000, 5000), 0.02));
      }
  REQUIRE(points.size() >= 2400);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run(points, h100());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("analyzed " << points.size() << " points in " << s << " s: " << r.findings.size() << " findings, "
                   << r.speedups.size() << " speedups, " << r.crossovers.size() << " crossovers");
  CHECK(s < 20.0); // generous: shared CI machines; typically well under a second or two
  CHECK(r.crossovers.size() == 8 * 4 * (3 + 2 + 2)); // threads vs serial; two cuda x (with, without) x 2 baselines
}
