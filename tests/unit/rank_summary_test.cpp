// Summary files (analysis/rank_summary_file.hpp): a profile folder reduced where it was
// recorded (`speedlab report DIR --summary`) and merged from that summary alone must say
// what the merge of its streams says. Checked on the NCCL fixture (tests/fixtures/ranks/nccl:
// two H200, one rank each, rank 1 slowed 20 ms per step), and the reader refuses a damaged
// or newer file by name.
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/rank_summary_file.hpp"
#include "app/profile/profile_report.hpp"
#include "model/profile_stream.hpp"
#include "model/saved_records.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab;

namespace {

std::filesystem::path nccl() { return speedlab::testing::fixture_dir() / "ranks" / "nccl"; }

// The fixture's two rank folders copied into dir (the test writes beside them).
void copy_job(const std::filesystem::path& dir) {
  for (const char* rank : {"rank-0", "rank-1"})
    std::filesystem::copy(nccl() / rank, dir / rank, std::filesystem::copy_options::recursive);
}

void remove_streams(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().extension() == ".slstream") std::filesystem::remove(e.path());
}

bool has_note(const analysis::program_analysis& a, const std::string& part) {
  for (const auto& n : a.result.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

void check_same_ranks(const analysis::program_analysis& from_summary, const analysis::program_analysis& raw) {
  REQUIRE(raw.ranks);
  REQUIRE(from_summary.ranks);
  const auto& s = *from_summary.ranks;
  const auto& r = *raw.ranks;
  REQUIRE(r.straggler);
  REQUIRE(s.straggler);
  CHECK(*s.straggler == *r.straggler);
  CHECK(s.steps == r.steps);
  CHECK(s.step_method == r.step_method);
  CHECK(s.wait_method == r.wait_method);
  CHECK(s.straggler_excess_ns == Approx(r.straggler_excess_ns).epsilon(0.01));
  REQUIRE(s.ranks.size() == r.ranks.size());
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    INFO("rank " << i << ": " << s.wait_per_step_ns[i] << " against " << r.wait_per_step_ns[i]);
    CHECK(s.wait_per_step_ns[i] == Approx(r.wait_per_step_ns[i]).epsilon(0.01).margin(1e3));
    CHECK(s.wait_total_ns[i] == Approx(r.wait_total_ns[i]).epsilon(0.01).margin(1e3));
    CHECK(s.ranks[i].gpu == r.ranks[i].gpu);
    CHECK(s.ranks[i].comm_ends == r.ranks[i].comm_ends);
  }
  CHECK(from_summary.processes.size() == raw.processes.size());
  REQUIRE(!raw.kernels.empty());
  CHECK(from_summary.kernels.front().name == raw.kernels.front().name);
  CHECK(from_summary.kernels.front().total_ns == Approx(raw.kernels.front().total_ns));
}

} // namespace

TEST_CASE("rank summaries: the NCCL job merged from its summaries names the same straggler and waits", "[ranks][summary]") {
  const auto raw = app::analyze_profile_folder(nccl());
  speedlab::testing::temp_dir dir;
  copy_job(dir.path());
  const auto written = app::write_profile_summaries(dir.path());
  REQUIRE(written.size() == 2);
  for (const auto& f : written) CHECK(std::filesystem::is_regular_file(f));

  SECTION("beside the streams") {
    const auto merged = app::analyze_profile_folder(dir.path());
    CHECK(has_note(merged, "2 of 2 profile folder(s) merged from their summary file"));
    check_same_ranks(merged, raw);
  }
  SECTION("the streams removed: the summaries are all the merge reads") {
    remove_streams(dir.path());
    const auto merged = app::analyze_profile_folder(dir.path());
    check_same_ranks(merged, raw);
    // And a summary whose streams are gone is never replaced.
    const std::string before = speedlab::testing::read_text(written.front());
    CHECK(app::write_profile_summaries(dir.path()).empty());
    CHECK(speedlab::testing::read_text(written.front()) == before);
  }
  SECTION("a summary that no longer matches its streams is not used, and the merge says so") {
    auto j = nlohmann::json::parse(speedlab::testing::read_text(written.front()));
    j["streams"][0]["bytes"] = j["streams"][0]["bytes"].get<std::uint64_t>() + 1;
    std::ofstream(written.front()) << j.dump();
    const auto merged = app::analyze_profile_folder(dir.path());
    CHECK(has_note(merged, "1 of 2 profile folder(s) merged from their summary file"));
    CHECK(has_note(merged, "not used, the streams changed since it was written"));
    check_same_ranks(merged, raw);
  }
}

TEST_CASE("rank summaries: a damaged or newer summary file is refused by name", "[ranks][summary]") {
  speedlab::testing::temp_dir dir;
  copy_job(dir.path());
  const auto written = app::write_profile_summaries(dir.path());
  REQUIRE(!written.empty());
  const auto file = written.front();
  const auto good = nlohmann::json::parse(speedlab::testing::read_text(file));
  auto rewrite = [&file](const nlohmann::json& j) { std::ofstream(file) << j.dump(); };

  CHECK(analysis::read_summary_file(file).streams.size() == 1);

  auto j = good;
  j["streams"][0]["rank"]["steps"]["compute_ns"][3] = -5.0;
  rewrite(j);
  CHECK_THROWS_WITH(analysis::read_summary_file(file),
                    Catch::Contains(file.string()) && Catch::Contains("streams[0]") && Catch::Contains("compute_ns"));

  j = good;
  j["streams"][0]["rank"]["steps"]["end"].erase(0);
  rewrite(j);
  CHECK_THROWS_WITH(analysis::read_summary_file(file), Catch::Contains("'end' holds"));

  j = good;
  j["streams"][0]["file"] = "../elsewhere.slstream";
  rewrite(j);
  CHECK_THROWS_AS(analysis::read_summary_file(file), bad_record);

  j = good;
  j["schema_version"] = analysis::summary_file_schema_version + 1;
  rewrite(j);
  CHECK_THROWS_AS(analysis::read_summary_file(file), newer_schema_error);
  // Never rewritten by this speedlab, even with the streams there.
  CHECK_THROWS_WITH(app::write_profile_summaries(dir.path()), Catch::Contains("not replaced"));
  CHECK(nlohmann::json::parse(speedlab::testing::read_text(file))["schema_version"] == j["schema_version"]);

  // Unreadable with its streams gone: that folder is left out, named with the byte offset,
  // and the other folders are still merged.
  std::ofstream(file) << "{\"format\": ";
  CHECK_THROWS_AS(analysis::read_summary_file(file), bad_record);
  remove_streams(dir.path());
  app::profile_damage damage;
  const auto merged = app::analyze_profile_folder(dir.path(), &damage);
  CHECK_FALSE(damage.nothing_valid);
  CHECK(merged.processes.size() + 1 == written.size());
  CHECK_THAT(fmt::format("{}", fmt::join(damage.messages, "\n")),
             Catch::Contains(file.string() + ": damaged at byte offset 11") &&
                 Catch::Contains("has no stream to read instead: nothing of it is merged"));
}
