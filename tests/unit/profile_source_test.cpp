// `speedlab profile --source` on the CPU side: the source chunk of the per-process stream
// (model/profile_stream, chunk type 7) round trip, a profiled process's source pass folded
// into the program's point and its reports (the same "Source lines" table and finding as
// `speedlab run`), the notes for kernels without line info and for a source view that could
// not be collected, and the option's refusal beside --metrics. The pass is the one the H100
// recorded for the row-softmax naive kernel (tests/fixtures/source/softmax) until the
// profile-source stage records a profiled stream of its own.
#include "speedlab_catch.hpp"
#include "test_root.hpp"

#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "app/profile/profile_command.hpp"
#include "app/profile/profile_report.hpp"
#include "app/suite/suite_config.hpp"
#include "model/profile_stream.hpp"
#include "unit/program_fixture.hpp"

using namespace speedlab;
using namespace speedlab::test_program;

namespace {

// The source pass of the recorded run's point with this variant (cuda-naive: softmax_naive).
source::source_pass recorded_pass(const std::string& variant) {
  std::ifstream in((speedlab::testing::fixture_dir() / "source" / "softmax" / "results.jsonl").string());
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("variant") == variant) return j.at("source").get<source::source_pass>();
  }
  FAIL("no point " << variant << " in tests/fixtures/source/softmax/results.jsonl");
  return {};
}

std::string stream_with(const std::vector<source::source_pass>& passes, std::uint32_t pid = 100) {
  profile::process_info info;
  info.pid = pid;
  info.host = "gpu-node";
  info.command_line = {"python3", "rows.py"};
  std::string bytes = profile::encode_chunk(profile::chunk_type::header,
                                            profile::header_json(info, 0, 500, "test").dump());
  for (const auto& p : passes)
    bytes += profile::encode_chunk(profile::chunk_type::source, profile::source_json(5, p).dump());
  bytes += profile::encode_chunk(profile::chunk_type::close, profile::close_json(10, "exit", 0).dump());
  return bytes;
}

std::string read(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("profile source: the source chunk round trips through the stream", "[profile-source]") {
  const auto pass = recorded_pass("cuda-naive");
  REQUIRE_FALSE(pass.kernels.empty());
  const auto read_back = profile::read_stream_bytes(stream_with({pass, pass}), "mem.slstream");
  CHECK(read_back.valid);
  CHECK(read_back.messages.empty());
  REQUIRE(read_back.profile.source.size() == 2); // one per context, none lost
  CHECK(nlohmann::json(read_back.profile.source[0]) == nlohmann::json(pass));
  CHECK_FALSE(read_back.profile.process.truncated);
}

TEST_CASE("profile source: a torn source chunk is skipped with a message, the rest kept", "[profile-source]") {
  std::string bytes = stream_with({recorded_pass("cuda-naive")});
  const auto close_at = bytes.rfind("SLP1");
  std::string torn = bytes.substr(0, close_at);
  torn.resize(torn.size() - 7); // the source chunk cut short, as by a kill mid-write
  const auto r = profile::read_stream_bytes(torn, "torn.slstream");
  CHECK(r.valid);
  CHECK(r.profile.source.empty());
  CHECK(r.profile.process.truncated);
  REQUIRE_FALSE(r.messages.empty());
  CHECK(r.messages.front().find("torn.slstream") != std::string::npos);
}

TEST_CASE("profile source: a process's passes become its point's source view and report", "[profile-source]") {
  auto p = bad_loop(100, 60, "_ZN52_GLOBAL__N__659c9fbf_19_row_softmax_cuda_cu_e983d42913softmax_naiveEPKfPfii");
  auto naive = recorded_pass("cuda-naive");
  auto block = recorded_pass("cuda");
  p.source = {block, naive}; // two contexts: the merge puts the most-sampled kernel first
  const auto s = analysis::summarize_process(p);
  REQUIRE(s.source);
  REQUIRE(s.source->kernels.size() == 2);
  CHECK(s.source->kernels[0].kernel == naive.kernels[0].kernel);
  CHECK(s.source->total_samples == naive.total_samples + block.total_samples);
  const auto point = analysis::process_point(s);
  REQUIRE(point.sections.has<source::source_pass>());
  CHECK(point.sections.get<source::source_pass>()->kernels.size() == 2);

  const auto dir = std::filesystem::temp_directory_path() / ("speedlab-profile-source-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  analysis::program_facts facts{{"python3", "rows.py"}, "2026-11-26T01:00:00Z", "gpu-node", "0.9", 1.0, 0, {}};
  const auto written = app::write_profile_reports(dir, {p}, facts, {"markdown", "html", "json"});
  CHECK(written.failed == 0);
  const std::string md = read(dir / "report.md");
  CHECK(md.find("## Source lines") != std::string::npos);
  CHECK(md.find("`row-softmax_cuda.cu:25`") != std::string::npos); // the naive kernel's slow load
  CHECK(md.find("32.0") != std::string::npos);                     // its sectors per request
  CHECK(md.find("waiting on global memory") != std::string::npos);
  CHECK(read(dir / "report.html").find("row-softmax_cuda.cu:25") != std::string::npos);
  const auto j = nlohmann::json::parse(read(dir / "results.json"));
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["source"]["kernels"][0]["lines"][0]["line"] == 25);
  std::filesystem::remove_all(dir);
}

TEST_CASE("profile source: notes for kernels without line info and a view not collected", "[profile-source]") {
  auto pass = recorded_pass("cuda-naive");
  CHECK(source::pass_notes(pass).empty()); // built with -lineinfo: nothing to say
  pass.kernels[0].line_info = false;
  pass.kernels.push_back(pass.kernels[0]); // said once for any number of kernels
  auto notes = source::pass_notes(pass);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("SASS offsets only") != std::string::npos);
  CHECK(notes[0].find("lineinfo=True") != std::string::npos); // how to get lines from Numba

  pass.kernels[0].lines[0].file = "(unknown cubin)";
  notes = source::pass_notes(pass);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].find("no cubin") != std::string::npos);

  const std::string other = source::unavailable_note(
      "CUPTI is held by another client (Nsight Systems): CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  CHECK(other.find("Nsight Systems") != std::string::npos);
  CHECK(other.find("runs on") != std::string::npos);
}

TEST_CASE("profile source: --source with --metrics is refused before the program runs", "[profile-source]") {
  app::profile_options o;
  o.program = {"/bin/true"};
  o.source = true;
  o.metrics = "default";
  o.out = (std::filesystem::temp_directory_path() / ("speedlab-profile-source-refused-" + std::to_string(::getpid()))).string();
  CHECK_THROWS_AS(app::command_profile(o), app::config_error);
  CHECK_FALSE(std::filesystem::exists(o.out)); // refused before the folder was made
}
