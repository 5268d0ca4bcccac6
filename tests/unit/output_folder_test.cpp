// The output folder's owner: refusal of an earlier run, --force, --resume, the lock, and
// the readers of a saved run (what they skip and what they refuse).
#include "speedlab_catch.hpp"

#include <unistd.h>

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "app/run/output_folder.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include "test_support.hpp"

using namespace speedlab;
using namespace speedlab::app;
using Catch::Contains;
namespace t = speedlab::testing;

namespace {
point_result measured(const std::string& n) {
  point_result p;
  p.workload = "faulty";
  p.variant = "ok";
  p.kind = speedlab::variant_kind::serial;
  p.params = {{"n", n}};
  p.id = "faulty/ok/n=" + n;
  p.samples_ns = {100, 110};
  p.wall.count = 2;
  p.wall.median = 105;
  return p;
}
} // namespace

TEST_CASE("output folder: an earlier run is refused, naming the folder and its files", "[output_folder]") {
  t::temp_dir dir;
  { output_folder(dir.path(), earlier_run::refuse).append(measured("1")); } // an empty folder is fine
  std::ofstream(dir.path() / "report.md") << "# old\n";
  CHECK_THROWS_AS(output_folder(dir.path(), earlier_run::refuse), folder_refused);
  CHECK_THROWS_WITH(output_folder(dir.path(), earlier_run::refuse),
                    Contains(dir.path().string() + " holds an earlier run (results.jsonl, report.md)") &&
                        Contains("--resume") && Contains("--force"));
  CHECK(t::read_text(dir.path() / "report.md") == "# old\n"); // nothing touched
}

TEST_CASE("output folder: --force removes the earlier run's files and nothing else", "[output_folder]") {
  t::temp_dir dir;
  { output_folder(dir.path(), earlier_run::refuse).append(measured("1")); }
  std::filesystem::create_directories(dir.path() / "traces");
  std::ofstream(dir.path() / "traces" / "x.json") << "{}";
  std::ofstream(dir.path() / "notes.txt") << "mine";
  output_folder folder(dir.path(), earlier_run::replace);
  CHECK(folder.replaced() == std::vector<std::string>{"results.jsonl", "traces"});
  CHECK(!std::filesystem::exists(dir.path() / "traces"));
  CHECK(t::read_text(dir.path() / "results.jsonl").empty());
  CHECK(t::read_text(dir.path() / "notes.txt") == "mine");
}

TEST_CASE("output folder: --resume keeps every earlier byte and knows the measured points", "[output_folder]") {
  t::temp_dir dir;
  {
    output_folder first(dir.path(), earlier_run::refuse);
    first.append(measured("1"));
    first.append(measured("2"));
  }
  std::ofstream(dir.path() / "results.jsonl", std::ios::app) << "{\"id\": \"torn"; // a crash mid-line
  const std::string before = t::read_text(dir.path() / "results.jsonl");
  {
    output_folder again(dir.path(), earlier_run::resume);
    CHECK(again.kept_points().size() == 2);
    CHECK(again.already_measured("faulty/ok/n=1"));
    CHECK(!again.already_measured("faulty/ok/n=3"));
    REQUIRE(again.warnings().size() == 1);
    CHECK_THAT(again.warnings()[0], Contains("results.jsonl:3: skipped"));
    again.append(measured("3"));
  }
  const std::string after = t::read_text(dir.path() / "results.jsonl");
  CHECK(after.substr(0, before.size()) == before);
  const auto saved = load_run(dir.path());
  CHECK(saved.points.size() == 3); // the torn line ended, the new point on its own line
  CHECK(saved.skipped == 1);
}

TEST_CASE("output folder: a point of an unknown kind is skipped, naming the file, line and kind", "[output_folder]") {
  t::temp_dir dir;
  { output_folder(dir.path(), earlier_run::refuse).append(measured("1")); }
  nlohmann::json bad = measured("2");
  bad["kind"] = "fpga";
  std::ofstream(dir.path() / "results.jsonl", std::ios::app) << bad.dump() << '\n';
  const auto saved = load_run(dir.path());
  CHECK(saved.points.size() == 1);
  std::string said; // every warning, the missing run.json's among them
  for (const auto& w : saved.warnings) said += w + "\n";
  CHECK_THAT(said, Contains("results.jsonl:2: skipped: point record: unknown kind 'fpga' (one of serial, threads, cuda)"));
}

TEST_CASE("output folder: the lock refuses a second writer and names the holder", "[output_folder]") {
  t::temp_dir dir;
  output_folder first(dir.path(), earlier_run::refuse);
  // The lock is a POSIX record lock, held by this process: another process is refused.
  const std::string holder = "in use by another speedlab (pid " + std::to_string(::getpid()) + ")";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 3;
    try {
      output_folder second(dir.path(), earlier_run::resume);
      code = 1;
    } catch (const folder_refused& e) {
      code = std::string(e.what()).find(holder) != std::string::npos ? 0 : 2;
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0); // 1: not refused, 2: refused without naming the holder
}

TEST_CASE("output folder: readers skip bad lines with file:line and refuse what they cannot read", "[output_folder]") {
  t::temp_dir dir;
  CHECK_THROWS_WITH(load_run(dir.path() / "nope"), Contains("no such folder"));
  std::ofstream(dir.path() / "file") << "x";
  CHECK_THROWS_WITH(load_run(dir.path() / "file"), Contains("not a folder"));
  CHECK_THROWS_WITH(load_run(dir.path()), Contains("results.jsonl: not found"));
  std::filesystem::create_directories(dir.path() / "results.jsonl");
  CHECK_THROWS_WITH(load_run(dir.path()), Contains("results.jsonl: not a file"));
  std::filesystem::remove(dir.path() / "results.jsonl");

  std::ofstream(dir.path() / "results.jsonl") << nlohmann::json(measured("1")).dump() << "\n"
                                              << "{\"id\": \"a\", \"workload\": \"w\", \"variant\": \"v\"}\n"
                                              << "not json\n";
  std::ofstream(dir.path() / "run.json") << "{\"wall_s\": -1}";
  auto saved = load_run(dir.path());
  CHECK(saved.points.size() == 1);
  CHECK(saved.skipped == 2);
  const std::string all = fmt::format("{}", fmt::join(saved.warnings, "\n"));
  CHECK_THAT(all, Contains("results.jsonl:2: skipped: 'status' is missing"));
  CHECK_THAT(all, Contains("results.jsonl:3: skipped"));
  CHECK_THAT(all, Contains("run.json: unreadable, not used: wall_s: -1 is negative"));

  // A newer schema anywhere: nothing is read (and so nothing rewritten).
  std::ofstream(dir.path() / "results.jsonl", std::ios::app) << "{\"schema_version\": 2, \"id\": \"x\"}\n";
  CHECK_THROWS_WITH(load_run(dir.path()), Contains("results.jsonl:4: written by a newer speedlab"));
}

TEST_CASE("output folder: traces are written atomically and read back only from traces/", "[output_folder]") {
  t::temp_dir dir;
  trace::device_trace t;
  t.backend = "cupti";
  trace::kernel_record k;
  k.start = 10;
  k.end = 20;
  t.kernels.push_back(k);
  point_result p = measured("1");
  p.trace_file = write_point_trace(dir.path(), p.id, t);
  CHECK(p.trace_file == "traces/faulty_ok_n_1.json");
  CHECK(load_point_trace(dir.path(), p)->kernels.size() == 1);
  p.trace_file = "../../etc/passwd";
  CHECK_THROWS_WITH(load_point_trace(dir.path(), p), Contains("is not under traces/"));
  p.trace_file = "traces/missing.json";
  CHECK_THROWS_WITH(load_point_trace(dir.path(), p), Contains("missing.json: cannot read"));
  p.trace_file.clear();
  CHECK(!load_point_trace(dir.path(), p));
}

TEST_CASE("output folder: one point id on several lines is a warning naming the lines; the last is used",
          "[output_folder]") {
  t::temp_dir dir;
  {
    std::ofstream out(dir.path() / "results.jsonl");
    for (const char* n : {"1", "2"}) {
      auto p = measured("7");
      p.samples_ns = {std::stod(n) * 100, 110};
      out << nlohmann::json(p).dump() << "\n";
    }
    out << nlohmann::json(measured("8")).dump() << "\n";
    auto last = measured("7");
    last.samples_ns = {300, 310};
    out << nlohmann::json(last).dump() << "\n" << nlohmann::json(last).dump() << "\n";
  }
  const auto saved = load_run(dir.path());
  REQUIRE(saved.points.size() == 2);
  CHECK(saved.points[0].id == "faulty/ok/n=8");
  CHECK(saved.points[1].id == "faulty/ok/n=7");
  CHECK(saved.points[1].samples_ns.front() == 300);
  const std::string all = fmt::format("{}", fmt::join(saved.warnings, "\n"));
  CHECK_THAT(all, Contains("point 'faulty/ok/n=7' appears 4 times, on lines 1, 2, 4, 5; line 5 is used"));
  CHECK_THAT(all, Contains("the file is not changed"));
}

TEST_CASE("output folder: a point resumed round by round is read from its last line without a warning",
          "[output_folder][resume]") {
  t::temp_dir dir;
  auto partial = measured("7");
  partial.rounds = 1;
  partial.rounds_planned = 3;
  partial.sample_rounds = {0, 0};
  auto more = partial;
  more.rounds = 2;
  more.samples_ns = {100, 110, 120};
  more.sample_rounds = {0, 0, 1};
  auto done = more;
  done.rounds = 3;
  done.samples_ns = {100, 110, 120, 130};
  done.sample_rounds = {0, 0, 1, 2};
  {
    std::ofstream out(dir.path() / "results.jsonl");
    for (const auto& p : {partial, measured("8"), more, done}) out << nlohmann::json(p).dump() << "\n";
  }
  auto saved = load_run(dir.path());
  REQUIRE(saved.points.size() == 2);
  CHECK(saved.points[1].rounds == 3);
  CHECK(saved.points[1].samples_ns == done.samples_ns);
  CHECK(saved.warnings.size() == 1); // run.json missing, nothing about the point
  // A line that does not carry the earlier samples is no continuation: said as before.
  auto fresh = done;
  fresh.samples_ns = {90, 95, 96, 97};
  std::ofstream(dir.path() / "results.jsonl", std::ios::app) << nlohmann::json(fresh).dump() << "\n";
  saved = load_run(dir.path());
  CHECK_THAT(fmt::format("{}", fmt::join(saved.warnings, "\n")), Contains("point 'faulty/ok/n=7' appears 4 times"));
}

TEST_CASE("output folder: a torn line is described in words, never the parser's exception", "[output_folder]") {
  t::temp_dir dir;
  const std::string line = nlohmann::json(measured("1")).dump();
  std::ofstream(dir.path() / "results.jsonl") << line << "\n" << line.substr(0, 40) << "\n";
  const auto saved = load_run(dir.path());
  const std::string all = fmt::format("{}", fmt::join(saved.warnings, "\n"));
  CHECK_THAT(all, Contains("results.jsonl:2: skipped: not valid JSON at column 41: truncated"));
  CHECK_THAT(all, !Contains("json.exception") && !Contains("parse_error"));
  // The parser would call a NUL byte the end of its input ("truncated").
  std::ofstream(dir.path() / "results.jsonl", std::ios::app) << std::string("{\"id\"\0\xff", 7) << "\n";
  const std::string again = fmt::format("{}", fmt::join(load_run(dir.path()).warnings, "\n"));
  CHECK_THAT(again, Contains("results.jsonl:3: skipped: not text: a NUL byte at column 6"));
}
