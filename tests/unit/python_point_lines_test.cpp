// A `speedlab run` point's Python lines (issue 40, item 4): the worker's stream cut to the
// point's session span, summarized as `speedlab profile` summarizes a Python process
// (app/python/python_variants.cpp's collect_trace), kept as the point's section and shown in
// report.md and report.html. The stream is the CuPy ground-truth program recorded on the H200
// (tests/fixtures/python-lines/cupy), which stands for a worker's; and the results.json of
// `speedlab run` on the H200 with the lessons' CuPy and Numba variants traced
// (tests/fixtures/python-run, scripts/gpu-python-lines.sh runlines).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "model/profile_stream.hpp"
#include "model/python_lines.hpp"
#include "model/saved_records.hpp"
#include "model/trace_fold.hpp"
#include "speedlab_catch.hpp"
#include "test_root.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

namespace {

profile::process_profile cupy_process() {
  profile::folder_read read = profile::read_stream_folder(testing::fixture_dir() / "python-lines" / "cupy");
  REQUIRE(read.processes.size() == 1);
  REQUIRE(analysis::is_python_process(read.processes.front().process));
  return std::move(read.processes.front());
}

pylines::python_lines lines_of(const profile::process_profile& p) {
  auto s = analysis::summarize_process(p);
  REQUIRE(s.python);
  return *s.python;
}

std::map<std::uint32_t, std::size_t> kernels_by_line(const pylines::python_lines& l) {
  std::map<std::uint32_t, std::size_t> out;
  for (const auto& r : l.lines) out[r.line] += r.kernels;
  return out;
}

// The kernels' start times, so a span can be cut through the middle of the program's loop.
std::pair<std::uint64_t, std::uint64_t> middle_half(const trace::device_trace& t) {
  std::vector<std::uint64_t> starts;
  for (const auto& k : t.kernels) starts.push_back(k.start);
  std::sort(starts.begin(), starts.end());
  REQUIRE(starts.size() > 8);
  return {starts[starts.size() / 4], starts[starts.size() * 3 / 4]};
}

} // namespace

TEST_CASE("python lines of a run point: only the calls inside the point's span", "[python-lines][run]") {
  profile::process_profile p = cupy_process();
  const pylines::python_lines whole = lines_of(p);
  const auto [begin, end] = middle_half(p.trace);
  trace::device_trace measured;
  trace::append_records(measured, std::move(p.trace), begin, end);
  p.trace = std::move(measured);
  const pylines::python_lines part = lines_of(p);
  REQUIRE_FALSE(part.lines.empty());
  CHECK(part.coverage.kernel_ns > 0);
  CHECK(part.coverage.kernel_ns < 0.8 * whole.coverage.kernel_ns);
  CHECK(part.coverage.calls < whole.coverage.calls);
  // The same lines of the program, each with at most what it launched over the whole run.
  const auto all = kernels_by_line(whole);
  for (const auto& [line, kernels] : kernels_by_line(part)) {
    REQUIRE(all.count(line));
    CHECK(kernels <= all.at(line));
  }
  CHECK(part.coverage.kernel_ns_own / part.coverage.kernel_ns > 0.95);
}

TEST_CASE("python lines of a run point: API calls the capture takes no stack of are not the lines' calls",
          "[python-lines][run]") {
  // `run`'s worker records every runtime call (queries, stream and event calls); the capture
  // takes stacks only of the calls a line is charged with.
  profile::process_profile p = cupy_process();
  const pylines::python_lines before = lines_of(p);
  REQUIRE_FALSE(p.trace.api_calls.empty());
  trace::api_record query = p.trace.api_calls.front();
  query.name = "cudaGetDevice_v3020";
  query.correlation = 0x7fff0000; // no stack was captured for it
  for (int i = 0; i < 50; ++i) p.trace.api_calls.push_back(query);
  const pylines::python_lines after = lines_of(p);
  CHECK(after.coverage.calls == before.coverage.calls);
  CHECK(after.coverage.calls_unknown == before.coverage.calls_unknown);
}

TEST_CASE("python lines of a run point: a section of the point, in results.json and the reports",
          "[python-lines][run][report]") {
  pylines::python_lines lines = lines_of(cupy_process());
  REQUIRE(lines.lines.size() >= 2);
  lines.lines.front().text = "y = kernel(x) # <script>|`";
  auto f = test_fixture::make_report_fixture();
  f.points.front().sections.set(lines);
  const nlohmann::json j = f.points.front();
  REQUIRE(j.contains("python_lines"));
  CHECK(j["python_lines"]["lines"].size() == lines.lines.size());
  const point_result back = read_point_record(j);
  const auto* read = back.sections.get<pylines::python_lines>();
  REQUIRE(read);
  CHECK(read->lines.front().kernel_ns == Approx(lines.lines.front().kernel_ns));
  CHECK(nlohmann::json(back) == j);

  const auto md = test_golden::render("markdown", f.input(), "report.md");
  CHECK(md.find("## Python lines") != std::string::npos);
  CHECK(md.find("cupy_lines.py:" + std::to_string(lines.lines.front().line)) != std::string::npos);
  CHECK(md.find("# <script>|") == std::string::npos); // in a code span, the pipe escaped
  const auto html = test_golden::render("html", f.input(), "report.html");
  CHECK(html.find("id=\"python-lines\"") != std::string::npos);
  CHECK(html.find("# &lt;script&gt;|`") != std::string::npos);
  CHECK(html.find("# <script>") == std::string::npos);
  // A run without traced Python workers has no such section.
  const auto plain = test_golden::render("markdown", test_fixture::make_report_fixture().input(), "report.md");
  CHECK(plain.find("## Python lines") == std::string::npos);
}

TEST_CASE("python lines of a run point: the lessons' CuPy and Numba variants on the H200", "[python-lines][run]") {
  for (const char* workload : {"vector", "reduction"}) {
    INFO(workload);
    std::ifstream in(testing::fixture_dir() / "python-run" / (std::string(workload) + ".results.json"));
    const nlohmann::json run = nlohmann::json::parse(in);
    std::size_t with_lines = 0;
    for (const auto& j : run.at("points")) {
      const point_result p = read_point_record(j);
      INFO(p.id);
      const auto* lines = p.sections.get<pylines::python_lines>();
      REQUIRE(lines);
      ++with_lines;
      // Every kernel came from a line of the variant's own code, in the workload's lesson file.
      CHECK(lines->coverage.kernel_ns > 0);
      CHECK(lines->coverage.kernel_ns_own == Approx(lines->coverage.kernel_ns));
      const pylines::python_line* top = nullptr;
      for (const auto& l : lines->lines)
        if (!top || l.kernel_ns > top->kernel_ns) top = &l;
      REQUIRE(top);
      CHECK(std::filesystem::path(top->file).filename() == std::string(workload) + ".py");
      CHECK(top->launches > 0);
      // The bridge's own files are folded away: no line of worker.py.
      for (const auto& l : lines->lines) CHECK(std::filesystem::path(l.file).filename() != "worker.py");
    }
    CHECK(with_lines == 3); // py-cupy, py-cupy-lesson, py-numba-cuda
  }
}
