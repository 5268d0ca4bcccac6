// End-to-end through the speedlab binary: exit codes, streaming of results, list output.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "speedlab_catch.hpp"
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

using Catch::Contains;
namespace t = speedlab::testing;

namespace {
std::string speedlab_exe() { return t::speedlab_binary().string(); }
std::string faulty_path() { return " --plugin-path " + t::faulty_plugin().string(); }
std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}
const char* quick = " --max-time 0.05 --min-samples 2 --warmup 0 --calibrate off --reports markdown,json";
} // namespace

TEST_CASE("cli: --version and --help", "[cli]") {
  auto r = t::run_command(speedlab_exe() + " --version");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("speedlab 0."));
  for (const char* sub : {"list", "run", "report", "analyze", "calibrate"}) {
    r = t::run_command(speedlab_exe() + " " + sub + " --help");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Contains("Usage"));
  }
}

TEST_CASE("cli: -V on every command, usage on a mistyped option, -q keeps stderr to warnings and errors", "[cli]") {
  for (const char* sub : {"list", "run", "report", "compare", "analyze", "calibrate", "new", "profile"}) {
    auto r = t::run_command(speedlab_exe() + " " + sub + " --version");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Contains("speedlab 0."));
  }
  auto r = t::run_command(speedlab_exe() + " run --frobnicate");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("speedlab run: error: unknown option '--frobnicate'") &&
                           Contains("Usage: speedlab run [OPTIONS]") && !Contains("was not expected"));

  t::temp_dir dir;
  const std::string run = speedlab_exe() + " run --workload faulty --variant ok --param n=1000 --force --out " +
                          dir.path().string() + quick + faulty_path();
  r = t::run_command(run);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("speedlab: 1 points from") && Contains("[1/"));
  r = t::run_command(run + " -q");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, !Contains("points from") && !Contains("[1/") && !Contains("note:"));
  r = t::run_command(speedlab_exe() + " -q run --workload faulty --variant segfault --param n=1000 --force --out " +
                     dir.path().string() + quick + faulty_path());
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("segfault") && Contains("1 of 1 points failed")); // failures still print
}

TEST_CASE("cli: usage and configuration errors exit 2", "[cli]") {
  CHECK(t::run_command(speedlab_exe()).exit_code == 2);
  CHECK(t::run_command(speedlab_exe() + " frobnicate").exit_code == 2);
  auto r = t::run_command(speedlab_exe() + " run --workload faulti" + faulty_path());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("did you mean 'faulty'"));
  t::temp_dir dir;
  const auto suite = dir.path() / "bad.yaml";
  std::ofstream(suite) << "workloads:\n  - name: faulty\n    params: {n: 2^9..2^3}\n";
  r = t::run_command(speedlab_exe() + " run " + suite.string() + faulty_path());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains(suite.string() + ":3:") && Contains("start is larger than stop"));
  r = t::run_command(speedlab_exe() + " run /nonexistent.yaml");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("/nonexistent.yaml: cannot open"));
  r = t::run_command(speedlab_exe() + " report /nonexistent-dir");
  CHECK(r.exit_code == 2);
  r = t::run_command(speedlab_exe() + " run --workload faulty --profilers hots" + faulty_path());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("unknown profiler 'hots'") && Contains("did you mean 'host'"));
}

TEST_CASE("cli: exit 0 when every point is valid, 1 when one failed; failures keep the other results", "[cli]") {
  t::temp_dir dir;
  auto r = t::run_command(speedlab_exe() + " run --workload faulty --variant ok --variant unavailable --variant racy --out " +
                          dir.path().string() + quick + faulty_path());
  CHECK(r.exit_code == 0); // skipped and wrong-on-purpose points are not failures
  CHECK(read_jsonl(dir.path() / "results.jsonl").size() == 3);
  CHECK(std::filesystem::exists(dir.path() / "report.md"));

  r = t::run_command(speedlab_exe() + " run --workload faulty --variant ok --variant segfault --variant throw --variant abort"
                     " --variant wrong --variant racy --param n=1000,2000 --timeout 5 --force --out " + dir.path().string() +
                     quick + faulty_path());
  CHECK(r.exit_code == 1);
  const auto points = read_jsonl(dir.path() / "results.jsonl");
  REQUIRE(points.size() == 12);
  std::map<std::string, std::string> status;
  for (const auto& p : points) status[p["variant"].get<std::string>()] = p["status"].get<std::string>();
  CHECK(status["ok"] == "ok");
  CHECK(status["segfault"] == "crashed");
  CHECK(status["throw"] == "failed");
  CHECK(status["abort"] == "crashed");
  CHECK(status["wrong"] == "invalid");
  CHECK_THAT(r.output, Contains("SIGSEGV"));
}

TEST_CASE("cli: a suite killed mid-way keeps every finished point", "[cli][streaming]") {
  t::temp_dir dir;
  // One round: a point is finished (and appended) as its one process ends. With more rounds
  // a SIGKILL loses the rounds of the points not yet complete (docs/safety.md).
  const std::string cmd = speedlab_exe() + " run --rounds 1 --workload faulty --variant ok --variant hang --param n=1000..5000:1000"
                          " --timeout 30 --out " + dir.path().string() + quick + faulty_path() + " >/dev/null 2>&1";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  // The five 'ok' points finish quickly; then the suite sits in the first 'hang' point.
  const auto results = dir.path() / "results.jsonl";
  std::size_t seen = 0;
  for (int i = 0; i < 200 && seen < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    seen = read_jsonl(results).size();
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  // speedlab is reaped; a point's child in its own group may still be exiting: wait until
  // speedlab's group is gone before reading the folder.
  for (int i = 0; i < 500 && ::kill(-pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto points = read_jsonl(results);
  REQUIRE(points.size() == 5);
  for (const auto& p : points) {
    CHECK(p["variant"] == "ok");
    CHECK(p["status"] == "ok");
  }
  // The report command still works on the partial folder (run.json never got written).
  const auto r = t::run_command(speedlab_exe() + " report " + dir.path().string() + " --format markdown");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("did not finish"));
}

TEST_CASE("cli: list shows workloads, variants, and why a variant cannot run", "[cli]") {
  auto r = t::run_command(speedlab_exe() + " list" + faulty_path());
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("faulty") && Contains("segfault") && Contains("cannot run here: test variant"));
  // stdout alone (notes go to stderr; run_command adds 2>&1 after the group).
  r = t::run_command("{ " + speedlab_exe() + " list --json" + faulty_path() + " 2>/dev/null; }");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.output);
  nlohmann::json faulty;
  for (const auto& w : j["workloads"])
    if (w["name"] == "faulty") faulty = w; // beside the built-in plugins, which are always loaded
  REQUIRE(faulty.is_object());
  CHECK(faulty["plugin"] == t::faulty_plugin().string());
  bool found = false;
  for (const auto& v : faulty["variants"])
    if (v["name"] == "unavailable") found = !v["available"].get<bool>();
  CHECK(found);
  r = t::run_command(speedlab_exe() + " list --plugin-path " + (t::test_plugin_dir() / "wrong-abi").string());
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("libspeedlab-wrong-abi.so") && Contains("ABI version"));
}

TEST_CASE("cli: report names unreadable lines and files of a saved run, and keeps the rest", "[cli]") {
  t::temp_dir dir;
  auto r = t::run_command(speedlab_exe() + " run --workload faulty --variant ok --out " + dir.path().string() + quick +
                          faulty_path());
  REQUIRE(r.exit_code == 0);
  std::ofstream(dir.path() / "results.jsonl", std::ios::app) << "{\"id\": \"torn line\n";
  std::ofstream(dir.path() / "device.json") << "not json";
  r = t::run_command(speedlab_exe() + " report " + dir.path().string() + " --format markdown");
  CHECK(r.exit_code == 0);
  // In words, never the parser's exception text.
  CHECK_THAT(r.output, Contains("results.jsonl:2: skipped: not valid JSON at column 18: truncated: a string has no "
                                "closing quote"));
  CHECK_THAT(r.output, Contains("device.json: unreadable, not used: not valid JSON at column 2: a bare word"));
  CHECK_THAT(r.output, !Contains("json.exception"));
  CHECK_THAT(t::run_command("cat " + (dir.path() / "report.md").string()).output, Contains("faulty"));
  r = t::run_command(speedlab_exe() + " report " + dir.path().string() + " --format pdf");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("unknown report format 'pdf'"));
}

TEST_CASE("cli: report refuses to rewrite results.json from fewer points than it holds, unless --force", "[cli]") {
  t::temp_dir dir;
  auto r = t::run_command(speedlab_exe() + " run --workload faulty --variant ok --param n=1000,2000,3000 --out " +
                          dir.path().string() + quick + faulty_path());
  REQUIRE(r.exit_code == 0);
  const auto jsonl = dir.path() / "results.jsonl", json = dir.path() / "results.json", md = dir.path() / "report.md";
  const std::string results_json = t::read_text(json), report = t::read_text(md);
  REQUIRE(nlohmann::json::parse(results_json)["points"].size() == 3);
  // results.jsonl cut in the middle of its second line: one point left of three.
  const std::string lines = t::read_text(jsonl);
  const std::size_t second = lines.find('\n') + 1;
  std::ofstream(jsonl, std::ios::trunc) << lines.substr(0, second + 40);
  r = t::run_command(speedlab_exe() + " report " + dir.path().string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("results.jsonl:2: skipped"));
  CHECK_THAT(r.output, Contains(fmt::format("speedlab: error: {} yields 1 points, fewer than the 3 in {}; results.json "
                                            "and the reports are not rewritten",
                                            jsonl.string(), json.string())));
  CHECK(t::read_text(json) == results_json); // the last complete copy stays
  CHECK(t::read_text(md) == report);
  // --force rewrites them from what is left, as asked.
  r = t::run_command(speedlab_exe() + " report --force " + dir.path().string());
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(t::read_text(json))["points"].size() == 1);
}

TEST_CASE("cli: cupti options that differ from the defaults are noted in run.json; --self-timing runs", "[cli]") {
  t::temp_dir dir;
  const auto suite = dir.path() / "suite.yaml";
  std::ofstream(suite) << "cupti: {api_records: false, buffer_mib: 2}\nworkloads:\n  - name: faulty\n    variants: [ok]\n";
  const auto out = dir.path() / "out";
  const auto r = t::run_command(speedlab_exe() + " run " + suite.string() + " --self-timing --profilers host --out " +
                                out.string() + quick + faulty_path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto run = nlohmann::json::parse(std::ifstream(out / "run.json"));
  bool noted = false;
  for (const auto& n : run.at("notes"))
    noted = noted || n.get<std::string>().find("cupti options: buffer_mib=2 api_records=false") != std::string::npos;
  CHECK(noted);
  const auto points = read_jsonl(out / "results.jsonl");
  REQUIRE(points.size() == 1);
  CHECK(points[0].at("self_timed_ns").at("summing").size() == points[0].at("samples_ns").size());
}

TEST_CASE("cli: a folder holding an earlier run is refused; --force replaces it and says so", "[cli][output_folder]") {
  t::temp_dir dir;
  const std::string run = speedlab_exe() + " run --workload faulty --variant ok --out " + dir.path().string() + quick + faulty_path();
  REQUIRE(t::run_command(run).exit_code == 0);
  const std::string before = t::read_text(dir.path() / "results.jsonl");
  auto r = t::run_command(run);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains(dir.path().string() + " holds an earlier run (results.jsonl, run.json") && Contains("--resume"));
  CHECK(t::read_text(dir.path() / "results.jsonl") == before);
  r = t::run_command(run + " --force");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("WARNING: --force: replaced the earlier run in " + dir.path().string()));
  CHECK(read_jsonl(dir.path() / "results.jsonl").size() == 1);
  CHECK_THAT(t::read_text(dir.path() / "run.json"), Contains("--force: replaced the earlier run"));
  CHECK(t::run_command(run + " --force --resume").exit_code == 2);
}

TEST_CASE("cli: --resume measures only the missing points and keeps the old lines byte for byte", "[cli][output_folder]") {
  t::temp_dir dir;
  const std::string run = speedlab_exe() + " run --workload faulty --variant ok --out " + dir.path().string() + quick + faulty_path();
  REQUIRE(t::run_command(run + " --param n=1000,2000").exit_code == 0);
  const std::string before = t::read_text(dir.path() / "results.jsonl");
  const auto r = t::run_command(run + " --param n=1000,2000,3000 --resume");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("--resume: 2 points already in") && Contains("measuring the 1 others"));
  const std::string after = t::read_text(dir.path() / "results.jsonl");
  CHECK(after.substr(0, before.size()) == before);
  const auto points = read_jsonl(dir.path() / "results.jsonl");
  REQUIRE(points.size() == 3);
  CHECK(points[2]["params"]["n"] == "3000");
  // The reports cover every point, the kept ones included.
  const auto results = nlohmann::json::parse(t::read_text(dir.path() / "results.json"));
  CHECK(results["points"].size() == 3);
}

TEST_CASE("cli: a second run into a folder in use is refused by the lock", "[cli][output_folder]") {
  t::temp_dir dir;
  const std::string cmd = speedlab_exe() + " run --workload faulty --variant hang --timeout 30 --out " + dir.path().string() +
                          quick + faulty_path() + " >/dev/null 2>&1";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  for (int i = 0; i < 100 && !std::filesystem::exists(dir.path() / ".speedlab.lock"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto r = t::run_command(speedlab_exe() + " run --workload faulty --variant ok --resume --out " + dir.path().string() +
                                quick + faulty_path());
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("is in use by another speedlab (pid " + std::to_string(pid) + ")"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  CHECK(read_jsonl(dir.path() / "results.jsonl").empty()); // the abandoned point is not recorded
}

TEST_CASE("cli: report and analyze exit non-zero when nothing valid was read or a report failed", "[cli][output_folder]") {
  t::temp_dir dir;
  const auto out = dir.path().string();
  auto r = t::run_command(speedlab_exe() + " report " + out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("results.jsonl: not found"));
  std::ofstream(dir.path() / "results.jsonl") << "{\"id\": 1}\n{\"a\": 2}\n";
  for (const char* sub : {" report ", " analyze "}) {
    r = t::run_command(speedlab_exe() + sub + out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Contains("no valid point to read (2 lines skipped)") && Contains("results.jsonl:1: skipped"));
  }
  std::filesystem::remove(dir.path() / "results.jsonl");
  std::filesystem::create_directories(dir.path() / "results.jsonl");
  r = t::run_command(speedlab_exe() + " analyze " + out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("results.jsonl: not a file"));
  std::filesystem::remove(dir.path() / "results.jsonl");
  r = t::run_command(speedlab_exe() + " report " + (dir.path() / "x.txt").string());
  CHECK(r.exit_code == 2);

  // A run, then a report format that cannot be written (a folder stands where report.md goes).
  const auto run_dir = dir.path() / "run";
  REQUIRE(t::run_command(speedlab_exe() + " run --workload faulty --variant ok --out " + run_dir.string() + quick + faulty_path())
              .exit_code == 0);
  std::filesystem::remove(run_dir / "report.md");
  std::filesystem::create_directories(run_dir / "report.md");
  r = t::run_command(speedlab_exe() + " report " + run_dir.string() + " --format markdown,csv");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Contains("report 'markdown' could not be written") && Contains("results.csv"));
}

TEST_CASE("cli: a newer schema version is refused and results.json is not rewritten", "[cli][output_folder]") {
  t::temp_dir dir;
  const auto run_dir = dir.path() / "run";
  REQUIRE(t::run_command(speedlab_exe() + " run --workload faulty --variant ok --out " + run_dir.string() + quick + faulty_path())
              .exit_code == 0);
  auto line = read_jsonl(run_dir / "results.jsonl").at(0);
  line["schema_version"] = 2;
  std::ofstream(run_dir / "results.jsonl", std::ios::app) << line.dump() << "\n";
  const std::string json_before = t::read_text(run_dir / "results.json");
  const auto r = t::run_command(speedlab_exe() + " report " + run_dir.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("results.jsonl:2: written by a newer speedlab (schema version 2"));
  CHECK(t::read_text(run_dir / "results.json") == json_before);
}

TEST_CASE("cli: --threads above the cap, a folder or an empty file as the suite are usage errors", "[cli]") {
  t::temp_dir dir;
  auto r = t::run_command(speedlab_exe() + " run --workload faulty --threads 99999 --out " + (dir.path() / "o").string() +
                          faulty_path());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("--threads") && Contains("4096"));
  const auto suite = dir.path() / "suite.yaml";
  std::ofstream(suite) << "threads: 99999\nworkloads:\n  - name: faulty\n";
  r = t::run_command(speedlab_exe() + " run " + suite.string() + faulty_path());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("4096"));
  r = t::run_command(speedlab_exe() + " run " + dir.path().string() + faulty_path());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains(dir.path().string() + ": is a folder, not a suite file"));
  std::ofstream(suite, std::ios::trunc) << "# nothing here\n\n";
  r = t::run_command(speedlab_exe() + " run " + suite.string() + faulty_path());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains(suite.string() + ": the suite file is empty"));
  CHECK(!std::filesystem::exists(dir.path() / "o"));
}
