// `speedlab profile` inside each rank of a launcher writes DIR/rank-<R>; `speedlab report DIR`
// and `analyze DIR` merge the rank folders (app/profile/profile_report.hpp), reading one stream at a
// time.
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "app/run/output_folder.hpp"
#include "app/profile/profile_report.hpp"
#include "model/profile_stream.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;

namespace {

constexpr std::uint64_t us = 1000, ms = 1000 * us;

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    path = std::filesystem::temp_directory_path() / ("speedlab-rank-folders-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

// One rank's folder as `speedlab profile` leaves it: profile.json and the rank's stream, 10
// steps of 1 ms compute (+ extra) and an all-reduce that ends when the slowest has arrived.
void write_rank_folder(const std::filesystem::path& dir, int rank, std::uint64_t extra, std::uint64_t slowest, int exit_code) {
  std::filesystem::create_directories(dir);
  profile::process_info info;
  info.pid = 500 + static_cast<std::uint32_t>(rank);
  info.parent_pid = 400 + static_cast<std::uint32_t>(rank);
  info.host = "node";
  info.command_line = {"python3", "train.py"};
  info.start_ns = 1 * ms;
  info.tags = {{"RANK", std::to_string(rank)}, {"LOCAL_RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"}};
  trace::device_trace t;
  for (int s = 0; s < 10; ++s) {
    const std::uint64_t t0 = 10 * ms + static_cast<std::uint64_t>(s) * 3 * ms;
    trace::kernel_record k;
    k.start = t0;
    k.end = t0 + 1 * ms + extra;
    k.name = "gemm";
    t.kernels.push_back(k);
    k.start = k.end;
    k.end = t0 + 1 * ms + slowest + 100 * us;
    k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    t.kernels.push_back(k);
    t.ranges.push_back({t0, t0 + 2 * ms, info.pid, info.pid, "", "train_step"});
  }
  std::string error;
  auto w = profile::stream_writer::create(dir / profile::stream_file_name(info.host, info.pid), error);
  REQUIRE(w);
  w->write(profile::chunk_type::header, profile::header_json(info, 1'700'000'000'000'000'000ULL, 500, "test"));
  w->write(profile::chunk_type::note,
           profile::note_json(2 * ms, "gpu 0: Test GPU, uuid GPU-00112233-4455-6677-8899-aabbccddeeff"));
  w->write(profile::chunk_type::records, profile::records_json(50 * ms, t));
  w->write(profile::chunk_type::close, profile::close_json(45 * ms, "exit", 0));
  analysis::program_facts facts{{"python3", "train.py"}, "2026-11-23T10:00:0" + std::to_string(rank) + "Z", "node", "0.9",
                                0.04 + 0.01 * rank, exit_code, {"note of rank " + std::to_string(rank)}};
  app::write_json_file(dir / app::profile_facts_file, nlohmann::json(facts));
}

} // namespace

TEST_CASE("rank folders: report DIR merges the ranks' own folders", "[ranks][profile-report]") {
  temp_dir dir;
  CHECK_FALSE(app::is_profile_folder(dir.path));
  write_rank_folder(dir.path / "rank-1", 1, 400 * us, 400 * us, 3);
  write_rank_folder(dir.path / "rank-0", 0, 0, 400 * us, 0);
  std::filesystem::create_directories(dir.path / "not-a-rank");
  REQUIRE(app::is_profile_folder(dir.path));
  const auto parts = app::profile_parts(dir.path);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].filename() == "rank-0");

  const auto saved = app::load_profile(dir.path);
  CHECK(saved.processes.size() == 2);
  CHECK(saved.facts.exit_code == 3);               // the first failing rank's
  CHECK(saved.facts.wall_s == Approx(0.05));       // the longest
  CHECK(saved.facts.started_at == "2026-11-23T10:00:00Z");
  CHECK(saved.facts.notes.front().find("merged 2 profile folders") != std::string::npos);

  for (const auto& p : saved.processes) { // the GPU note became tags
    CHECK(p.process.tags.at("gpu") == "0");
    CHECK(p.process.tags.at("gpu_name") == "Test GPU");
    CHECK(p.process.notes.empty());
  }

  const auto a = app::analyze_profile_folder(dir.path);
  REQUIRE(a.ranks);
  CHECK(a.ranks->ranks.size() == 2);
  REQUIRE(a.ranks->straggler);
  CHECK(*a.ranks->straggler == 1);
  CHECK(a.ranks->wait_method == "collective kernels");
  CHECK(a.ranks->wait_per_step_ns[0] == Approx(400.0 * us).epsilon(0.01));
  CHECK(a.processes.size() == 2);
  CHECK(a.ranks->ranks[0].gpu == "cuda:0 GPU-00112233-4455-6677-8899-aabbccddeeff");
  // Read chunk by chunk (analysis::summarize_streams) as read whole (load_profile): the same ranks.
  const auto whole = analysis::analyze_program(saved.processes, saved.facts, {});
  REQUIRE(whole.ranks);
  CHECK(whole.ranks->straggler == a.ranks->straggler);
  CHECK(whole.ranks->wait_per_step_ns == a.ranks->wait_per_step_ns);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& x = whole.ranks->ranks.at(i);
    const auto& y = a.ranks->ranks.at(i);
    CHECK(x.compute_ns == y.compute_ns);
    CHECK(x.comm_ns == y.comm_ns);
    CHECK(x.idle_ns == y.idle_ns);
    CHECK(x.steps.size() == y.steps.size());
    CHECK(x.comm_ends == y.comm_ends);
  }

  const auto written = app::report_profile_folder(dir.path, {"json", "perfetto"});
  CHECK(written.failed == 0);
  std::ifstream in(dir.path / "results.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["program"]["ranks"]["straggler"] == 1);
  CHECK(j["program"]["ranks"]["ranks"][0]["step_figures"].size() == 10);
  std::ifstream trace(dir.path / "trace.json");
  const std::string text((std::istreambuf_iterator<char>(trace)), std::istreambuf_iterator<char>());
  CHECK(text.find("ncclDevKernel_AllReduce") != std::string::npos); // the streams read again for the trace
}

TEST_CASE("rank folders: a run folder stays a run whatever profile its subfolders hold", "[ranks][profile-report]") {
  // tests/fixtures/counters/h100-sol packs a profile beside the run's records: `report` on it
  // must report the run's points, not replace its reports with the profile's.
  temp_dir dir;
  write_rank_folder(dir.path / "profile-cupy", 0, 0, 400 * us, 0);
  REQUIRE(app::is_profile_folder(dir.path));
  std::ofstream(dir.path / app::layout::results) << "";
  CHECK_FALSE(app::is_profile_folder(dir.path));
  CHECK(app::profile_parts(dir.path).empty());
  CHECK(app::is_profile_folder(dir.path / "profile-cupy")); // the profile itself is still one
}
