#include "app/profile/profile_report.hpp"

#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "app/run/output_folder.hpp"
#include "speedlab_catch.hpp"
#include "unit/program_fixture.hpp"

using namespace speedlab;
using namespace speedlab::test_program;

namespace {

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    path = std::filesystem::temp_directory_path() / ("speedlab-profile-report-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

std::string read(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string evil_kernel = "void k<</script><script>alert(1)</script>|*_x_*>(float*)";

analysis::program_facts facts() {
  return {{"python3", "train.py", "--name=<b>&\"x\"", "a b"}, "2026-11-23T10:00:00Z", "gpu-node", "0.9", 0.13, 3, {"a note"}};
}

} // namespace

TEST_CASE("profile reports: every format renders a program", "[profile-report]") {
  temp_dir dir;
  std::vector<profile::process_profile> ps{shell(), bad_loop(100, 120, evil_kernel), clean_loop()};
  ps[1].process.truncated = true;
  ps[1].process.last_flush_ns = 100 * ms;
  const auto written = app::write_profile_reports(dir.path, ps, facts(),
                                                  {"markdown", "html", "json", "csv", "perfetto", "nsys-sqlite"});
  CHECK(written.failed == 0);
  for (const char* f : {"report.md", "report.html", "results.json", "results.csv", "program_kernels.csv",
                        "program_processes.csv", "program_ranges.csv", "program_streams.csv", "trace.json"}) {
    INFO(f);
    CHECK(std::filesystem::exists(dir.path / f));
  }

  const std::string md = read(dir.path / "report.md");
  CHECK(md.find("## Program") != std::string::npos);
  CHECK(md.find("### Where the time went") != std::string::npos);
  CHECK(md.find("### Top kernels") != std::string::npos);
  CHECK(md.find("### NVTX ranges") != std::string::npos);
  CHECK(md.find("### GPU idle gaps") != std::string::npos);
  CHECK(md.find("`range step`") != std::string::npos);
  CHECK(md.find("truncated after 100 ms") != std::string::npos);
  CHECK(md.find("no (costs nothing)") != std::string::npos);
  CHECK(md.find("alloc-in-loop") != std::string::npos);
  CHECK(md.find("`" + evil_kernel) == std::string::npos); // not raw: md_code escapes the pipe inside the span
  CHECK(md.find("`void k<</script><script>alert(1)</script>\\|*_x_*>(float*)`") != std::string::npos); // a code span
  CHECK(md.find("'a b'") != std::string::npos);     // the command line as a shell would read it

  const std::string html = read(dir.path / "report.html");
  CHECK(html.find("id=\"program\"") != std::string::npos);
  CHECK(html.find("href=\"#program\"") != std::string::npos);
  CHECK(html.find("<script>alert(1)") == std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;script&gt;alert(1)") != std::string::npos);
  CHECK(html.find("--name=&lt;b&gt;&amp;&quot;x&quot;") != std::string::npos);

  const auto j = nlohmann::json::parse(read(dir.path / "results.json"));
  CHECK(j["program"]["facts"]["exit_code"] == 3);
  CHECK(j["program"]["kernels"][0]["name"] == "big_kernel");
  CHECK(j["program"]["processes"].size() == 3);
  CHECK(j["points"].size() == 2);
  CHECK(j["run"]["command_line"] == "python3 train.py --name=<b>&\"x\" a b");

  const std::string kernels = read(dir.path / "program_kernels.csv");
  CHECK(kernels.starts_with("kernel,launches,processes,total_ns"));
  CHECK(kernels.find("big_kernel,50,1,50000000,1000000,") != std::string::npos);
  const std::string trace = read(dir.path / "trace.json");
  CHECK(trace.find("big_kernel") != std::string::npos); // the exporters read the processes' traces
}

TEST_CASE("profile reports: a program that never used CUDA says so", "[profile-report]") {
  temp_dir dir;
  app::write_profile_reports(dir.path, {shell()}, facts(), {"markdown"});
  const std::string md = read(dir.path / "report.md");
  CHECK(md.find("No process used CUDA") != std::string::npos);
  CHECK(md.find("no process of the program used CUDA") != std::string::npos);
}

TEST_CASE("profile reports: report and analyze on a profile folder", "[profile-report]") {
  temp_dir dir;
  CHECK_FALSE(app::is_profile_folder(dir.path));
  app::write_json_file(dir.path / app::profile_facts_file, nlohmann::json(facts()));
  REQUIRE(app::is_profile_folder(dir.path));
  const auto saved = app::load_profile(dir.path);
  CHECK(saved.facts.command_line == facts().command_line);
  const auto a = app::analyze_profile_folder(dir.path);
  CHECK(a.facts.exit_code == 3);
  const auto written = app::report_profile_folder(dir.path, {"markdown", "no-such-format"});
  CHECK(written.failed == 1);
  REQUIRE(written.files.size() == 2); // report.md and report-full.md
  for (const auto& f : written.files) CHECK(read(f).find("python3 train.py") != std::string::npos);
  CHECK(app::program_summary(a).find("exit code") != std::string::npos);

  std::ofstream(dir.path / app::profile_facts_file) << "{not json";
  CHECK_THROWS_WITH(app::load_profile(dir.path), Catch::Matchers::Contains("profile.json: unreadable"));
}
