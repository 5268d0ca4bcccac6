// Golden files for every report of a profiled program: a synthetic program (a process that
// never used CUDA, a bad loop with a hostile kernel name, truncated, and a clean loop) and
// the recorded two-rank job (tests/fixtures/ranks/outside). The reporters render a program
// and a suite run through the same model (reports/report_content.hpp), so these bytes pin
// what a program's reports say whichever path builds them.
#include <fstream>
#include <sstream>

#include "app/profile/profile_report.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"
#include "tests/golden/golden.hpp"
#include "unit/program_fixture.hpp"

using namespace speedlab;
using namespace speedlab::test_program;

namespace {

analysis::program_facts facts() {
  return {{"python3", "train.py", "--name=<b>&\"x\"", "a b"}, "2026-11-23T10:00:00Z", "gpu-node", "0.9", 0.13, 3, {"a note"}};
}

const std::vector<std::string> all_formats{"markdown", "html", "json", "csv", "perfetto"};

// trace.json in a size a golden file can hold: every metadata event (process and thread
// names, groups, sort order: where a rank's identity shows), every 50th line and the last.
std::string trace_sample(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  std::string last;
  for (std::size_t i = 0; std::getline(in, line); ++i) {
    if (line.find("\"ph\":\"M\"") != std::string::npos || i % 50 == 0) out += line + "\n";
    last = line;
  }
  return out + last + "\n";
}

// The golden name of a report file: trace.json is kept as its sample.
void check_file(const std::string& folder, const std::filesystem::path& dir, const std::string& file) {
  INFO(file);
  const std::string text = test_golden::read_file(dir / file);
  if (file == "trace.json")
    test_golden::check_golden(folder + "/trace-sample.json", trace_sample(text));
  else
    test_golden::check_golden(folder + "/" + file, text);
}

} // namespace

TEST_CASE("program reports match their golden files in every format", "[report][golden][profile-report]") {
  speedlab::testing::temp_dir dir;
  std::vector<profile::process_profile> ps{shell(), bad_loop(100, 120, "void k<</script>|*_x_*>(float*)"), clean_loop()};
  ps[1].process.truncated = true;
  ps[1].process.last_flush_ns = 100 * ms;
  const auto written = app::write_profile_reports(dir.path(), ps, facts(), all_formats);
  REQUIRE(written.failed == 0);
  for (const char* f : {"report.md", "report-full.md", "report.html", "results.json", "results.csv", "program_processes.csv",
                        "program_kernels.csv", "program_ranges.csv", "program_streams.csv", "trace.json"})
    check_file("program", dir.path(), f);
}

TEST_CASE("a recorded two-rank job's reports match their golden files", "[report][golden][ranks][fixtures]") {
  speedlab::testing::temp_dir dir;
  std::filesystem::copy(speedlab::testing::fixture_dir() / "ranks" / "outside", dir.path(),
                        std::filesystem::copy_options::recursive);
  const auto written = app::report_profile_folder(dir.path(), all_formats);
  REQUIRE(written.failed == 0);
  for (const char* f : {"report.md", "report-full.md", "report.html", "results.json", "program_processes.csv", "trace.json"})
    check_file("program-ranks", dir.path(), f);
}
