// Damaged or lost profile data is said: `speedlab analyze` / `report` of a profile folder whose
// stream is corrupt, empty, of the wrong magic or not a file, whose summary.json is damaged, or
// a job folder without one rank's stream, names the file (and the byte offset) on stderr,
// analyses what is valid, and exits 2 when nothing valid remains (issue 37, item 5).
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>

#include "app/profile/profile_report.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using Catch::Contains;
namespace fs = std::filesystem;
namespace t = speedlab::testing;

namespace {

constexpr const char* stream_name = "vm-536.slstream";

// A copy of a real profile folder (CuPy, one process; tests/fixtures/profile/counters/cupy).
fs::path copy_cupy(const fs::path& into) {
  const fs::path dir = into / "cupy";
  fs::copy(t::fixture_dir() / "profile" / "counters" / "cupy", dir, fs::copy_options::recursive);
  return dir;
}

void write_bytes(const fs::path& file, const std::string& data) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << data;
}

t::command_result run_speedlab(const std::string& command, const fs::path& dir) {
  return t::run_command(fmt::format("'{}' {} '{}'", t::speedlab_binary().string(), command, dir.string()));
}

// The stream with 4 bytes flipped at `at`.
std::string flipped(std::string data, std::size_t at) {
  for (std::size_t k = 0; k < 4; ++k) data[at + k] = static_cast<char>(~data[at + k]);
  return data;
}

} // namespace

TEST_CASE("profile damage: 4 flipped bytes in a records chunk: named with its offset, the rest analysed",
          "[profile_damage]") {
  t::temp_dir tmp;
  const fs::path dir = copy_cupy(tmp.path());
  const std::string good = t::read_text(dir / stream_name);
  const auto clean = run_speedlab("analyze --json", dir);
  REQUIRE(clean.exit_code == 0);
  const std::size_t second = good.find("SLP1", 4); // the first chunk after the header
  REQUIRE(second != std::string::npos);
  write_bytes(dir / stream_name, flipped(good, second + 40));
  const auto r = run_speedlab("analyze", dir);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains(fmt::format("speedlab: warning: {}: corrupt chunk at offset {}: CRC mismatch",
                                            (dir / stream_name).string(), second)));
  CHECK_THAT(r.output, Contains("1 used CUDA") && Contains("Where the time went")); // the process is still analysed
}

TEST_CASE("profile damage: header flipped, empty, wrong magic, a directory: named, exit 2, nothing written",
          "[profile_damage]") {
  struct damage {
    const char* what;
    std::string expect; // on stderr
  };
  t::temp_dir tmp;
  const std::string good = t::read_text(t::fixture_dir() / "profile" / "counters" / "cupy" / stream_name);
  const damage cases[] = {
      {"header-flipped", fmt::format("{}: corrupt chunk at offset 0: CRC mismatch", stream_name)},
      {"empty", fmt::format("{}: empty (0 bytes)", stream_name)},
      {"wrong-magic", fmt::format("{}: corrupt chunk header at offset 0 (wrong magic 'XXXX', a chunk begins with "
                                  "'SLP1')",
                                  stream_name)},
      {"directory", fmt::format("{}: not a regular file (a directory); skipped", stream_name)},
  };
  for (const auto& c : cases) {
    for (const char* command : {"analyze", "report"}) {
      const fs::path parent = tmp.path() / fmt::format("{}-{}", c.what, command);
      fs::create_directories(parent);
      const fs::path dir = copy_cupy(parent);
      const fs::path file = dir / stream_name;
      if (std::string(c.what) == "header-flipped") write_bytes(file, flipped(good, 40));
      if (std::string(c.what) == "empty") write_bytes(file, "");
      if (std::string(c.what) == "wrong-magic") write_bytes(file, "XXXX" + good.substr(4));
      if (std::string(c.what) == "directory") {
        fs::remove(file);
        fs::create_directory(file);
      }
      const auto r = run_speedlab(command, dir);
      INFO(c.what << ", " << command << ":\n" << r.output);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.output, Contains("speedlab: warning: ") && Contains(c.expect));
      CHECK_THAT(r.output,
                 Contains(fmt::format("speedlab: error: {}: no valid profile stream or summary left to analyse",
                                      dir.string())));
      CHECK_FALSE(fs::exists(dir / "report.md")); // no report of nothing
    }
  }
}

TEST_CASE("profile damage: a summary.json damaged with its streams gone is named with its byte offset",
          "[profile_damage]") {
  t::temp_dir tmp;
  const fs::path dir = copy_cupy(tmp.path());
  REQUIRE(run_speedlab("report --summary", dir).exit_code == 0);
  const std::string summary = t::read_text(dir / "summary.json");
  write_bytes(dir / "summary.json", summary.substr(0, 100)); // cut: the JSON ends at byte 100
  fs::remove(dir / stream_name);
  const auto r = run_speedlab("analyze", dir);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains((dir / "summary.json").string() + ": damaged at byte offset 100"));
  CHECK_THAT(r.output, Contains("no stream to read instead"));

  write_bytes(dir / "summary.json", ""); // empty
  const auto e = run_speedlab("analyze", dir);
  CHECK(e.exit_code == 2);
  CHECK_THAT(e.output, Contains((dir / "summary.json").string() + ": empty (0 bytes)"));
}

TEST_CASE("profile damage: a two-rank job without rank 1's stream names the rank and keeps rank 0's findings",
          "[profile_damage][ranks]") {
  t::temp_dir tmp;
  const fs::path dir = tmp.path() / "job";
  fs::copy(t::fixture_dir() / "ranks" / "inside", dir, fs::copy_options::recursive);
  const auto whole = speedlab::app::analyze_profile_folder(dir);
  REQUIRE(whole.processes.size() == 2);
  fs::remove(dir / "rank-1" / "vm-790.slstream");

  speedlab::app::profile_damage damage;
  const auto a = speedlab::app::analyze_profile_folder(dir, &damage);
  CHECK(a.processes.size() == 1);
  CHECK_FALSE(damage.nothing_valid);
  const auto r = run_speedlab("analyze", dir);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains((dir / "rank-1" / "vm-790.slstream").string() +
                                ": missing: the stream of rank 1, pid 790, named in"));
  CHECK_THAT(r.output, Contains("the comparison across ranks is incomplete: 1 rank(s) read of 2 (the world size), rank "
                                "1 missing"));
  // Rank 0's own findings stay: the same rules judge its process as in the whole job.
  const std::string rank0 = speedlab::analysis::process_point_id(789);
  std::multiset<std::string> before, after;
  for (const auto& f : whole.result.findings)
    if (f.point_id == rank0) before.insert(f.rule);
  for (const auto& f : a.result.findings)
    if (f.point_id == rank0) after.insert(f.rule);
  CHECK_FALSE(before.empty());
  CHECK(after == before);
  bool noted = false;
  for (const auto& n : a.result.notes)
    noted = noted || n.find("comparison across ranks is incomplete") != std::string::npos;
  CHECK(noted);
}
