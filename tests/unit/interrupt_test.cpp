// Signals during `speedlab run`: SIGINT and SIGTERM keep every finished point, abandon the
// one in a child (recording nothing for it), write the reports and exit 130 / 143; the
// child never outlives speedlab, whatever ends it.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "speedlab_catch.hpp"

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <iterator>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

using Catch::Contains;
namespace t = speedlab::testing;

namespace {

std::size_t result_lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

// Processes whose command line names `marker` (speedlab's children are forks: same argv).
std::vector<pid_t> processes_naming(const std::string& marker) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = t::read_text(entry.path() / "cmdline");
    std::ifstream stat_in(entry.path() / "stat");
    std::string stat_line;
    std::getline(stat_in, stat_line);
    const auto close = stat_line.rfind(')');
    const bool zombie = close != std::string::npos && stat_line.size() > close + 2 && stat_line[close + 2] == 'Z';
    if (!zombie && cmdline.find(marker) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

std::vector<pid_t> wait_for_count(const std::string& marker, std::size_t count) {
  std::vector<pid_t> found;
  for (int i = 0; i < 50; ++i) {
    found = processes_naming(marker);
    if (found.size() == count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return found;
}

// Starts speedlab itself (no shell between), output to DIR/log.txt: three quick points,
// then one that hangs until it is abandoned; each point in `rounds` rounds, so with more than
// one the hang comes in the first round, before any point is complete.
pid_t start_run(const std::filesystem::path& dir, const std::string& rounds) {
  const std::vector<std::string> args = {t::speedlab_binary().string(), "run", "--rounds", rounds, "--workload", "faulty",
                                         "--variant", "ok", "--variant", "hang", "--param", "n=1000,2000,3000",
                                         "--timeout", "60",
                                         "--max-time", "0.05", "--min-samples", "2", "--warmup", "0", "--calibrate", "off",
                                         "--reports", "markdown,json", "--plugin-path", t::faulty_plugin().string(),
                                         "--out", (dir / "out").string()};
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int log = ::open((dir / "log.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(log, 1);
    ::dup2(log, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits until `lines` points are in results.jsonl and the 'hang' child is running.
bool wait_for_hang(const std::filesystem::path& dir, std::size_t lines) {
  for (int i = 0; i < 300; ++i) {
    if (result_lines(dir / "out" / "results.jsonl") == lines && processes_naming((dir / "out").string()).size() == 2)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

} // namespace

TEST_CASE("interrupt: SIGINT and SIGTERM keep finished points, write the reports, exit 128+signal, leave no child",
          "[interrupt]") {
  for (const auto& [sig, code, name] : {std::tuple{SIGINT, 130, "SIGINT"}, std::tuple{SIGTERM, 143, "SIGTERM"}}) {
    t::temp_dir dir;
    const pid_t pid = start_run(dir.path(), "1");
    REQUIRE(pid > 0);
    const bool hanging = wait_for_hang(dir.path(), 3);
    INFO(t::read_text(dir.path() / "log.txt"));
    REQUIRE(hanging);
    ::kill(pid, sig); // speedlab alone, not its child
    CHECK(wait_exit(pid) == code);
    CHECK(wait_for_count((dir.path() / "out").string(), 0).empty());
    const auto out = dir.path() / "out";
    CHECK(result_lines(out / "results.jsonl") == 3); // the abandoned point is not recorded
    CHECK(std::filesystem::exists(out / "report.md"));
    const auto results = nlohmann::json::parse(t::read_text(out / "results.json"));
    CHECK(results["points"].size() == 3);
    CHECK_THAT(t::read_text(out / "run.json"), Contains(std::string("interrupted by ") + name));
    CHECK_THAT(t::read_text(dir.path() / "log.txt"), Contains("--resume"));
  }
}

TEST_CASE("interrupt: a stop between rounds saves each point with the rounds it has", "[interrupt][rounds]") {
  t::temp_dir dir;
  const pid_t pid = start_run(dir.path(), "3");
  REQUIRE(pid > 0);
  // Round 1 of the hang: the three 'ok' rounds have finished (their progress lines; no point is
  // complete before its last round) and the hang's child runs. Waiting for a child alone
  // raced with a slow 'ok' round (seen under ASan).
  bool hanging = false;
  for (int i = 0; i < 600 && !hanging; ++i) {
    hanging = t::read_text(dir.path() / "log.txt").find("[3/18]") != std::string::npos &&
              processes_naming((dir.path() / "out").string()).size() == 2;
    if (!hanging) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(t::read_text(dir.path() / "log.txt"));
  REQUIRE(hanging);
  ::kill(pid, SIGINT); // as Ctrl-C
  CHECK(wait_exit(pid) == 130);
  const auto out = dir.path() / "out";
  std::ifstream in(out / "results.jsonl");
  std::size_t kept = 0;
  for (std::string line; std::getline(in, line); ++kept) {
    const auto p = nlohmann::json::parse(line);
    CHECK(p.at("variant") == "ok"); // the abandoned round of the hang is not recorded
    CHECK(p.at("rounds") == 1);
    CHECK(p.at("rounds_planned") == 3);
    CHECK(p.at("sample_rounds").size() == p.at("samples_ns").size());
  }
  CHECK(kept == 3);
  CHECK_THAT(t::read_text(out / "run.json"), Contains("3 points have fewer rounds than the 3 planned"));
  // The message counts the points that have all their rounds, not those with some.
  const std::string log = t::read_text(dir.path() / "log.txt");
  CHECK_THAT(log, Contains("interrupted by SIGINT: 0 of 6 points have all their rounds, 3 have only some (saved with "
                           "the rounds they have), 3 were not measured; `speedlab run --resume` measures their missing "
                           "rounds and the points not measured"));
  CHECK_THAT(log, Contains("0 finished points and 3 partly measured are in"));

  // --resume measures the missing rounds of those points, keeping the rounds already measured:
  // the earlier lines stay byte for byte, each point is appended again with all its rounds,
  // its saved samples first and unchanged, and the reader keeps that line without a warning.
  const std::string before = t::read_text(out / "results.jsonl");
  const auto resumed = t::run_command(
      fmt::format("'{}' run --resume --rounds 3 --workload faulty --variant ok --param n=1000,2000,3000 --timeout 60 "
                  "--max-time 0.05 "
                  "--min-samples 2 --warmup 0 --calibrate off --reports markdown,json --plugin-path '{}' --out '{}'",
                  t::speedlab_binary().string(), t::faulty_plugin().string(), out.string()));
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK_THAT(resumed.output,
             Contains("--resume: 3 points already in") &&
                 Contains("(3 of them partly measured: their 3 rounds are kept and their missing rounds "
                          "measured); measuring the 0 others"));
  CHECK_THAT(resumed.output, !Contains("appears"));
  const std::string after = t::read_text(out / "results.jsonl");
  REQUIRE(after.size() > before.size());
  CHECK(after.compare(0, before.size(), before) == 0);
  std::map<std::string, nlohmann::json> first;
  std::size_t lines = 0;
  std::istringstream all(after);
  for (std::string line; std::getline(all, line); ++lines) {
    const auto p = nlohmann::json::parse(line);
    const std::string id = p.at("id");
    if (!first.count(id)) {
      first[id] = p;
      continue;
    }
    const auto& old = first[id];
    CHECK(p.at("rounds") == 3);
    REQUIRE(p.at("samples_ns").size() > old.at("samples_ns").size());
    for (std::size_t k = 0; k < old.at("samples_ns").size(); ++k) CHECK(p["samples_ns"][k] == old["samples_ns"][k]);
    CHECK(p.at("sample_rounds").back() == 2);
  }
  CHECK(lines == 6);
  const auto results = nlohmann::json::parse(t::read_text(out / "results.json"));
  REQUIRE(results["points"].size() == 3);
  for (const auto& p : results["points"]) CHECK(p.at("rounds") == 3);
}

TEST_CASE("interrupt: speedlab killed outright (SIGKILL) takes its child along", "[interrupt]") {
  t::temp_dir dir;
  const pid_t pid = start_run(dir.path(), "1"); // one round: each point appended as it ends
  REQUIRE(pid > 0);
  REQUIRE(wait_for_hang(dir.path(), 3));
  ::kill(pid, SIGKILL);
  CHECK(wait_exit(pid) == 1000 + SIGKILL);
  CHECK(wait_for_count((dir.path() / "out").string(), 0).empty());
  CHECK(result_lines(dir.path() / "out" / "results.jsonl") == 3);
}
