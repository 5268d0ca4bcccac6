// `speedlab profile -- PROGRAM` as a launcher, without a GPU: exit codes (the program's,
// 128+N for a signal, 127 when it cannot start), stdin/stdout passthrough, signals sent to
// speedlab reaching the program, the environment the program gets, the output folder's
// safety and profile.json's facts. Tiny shell programs stand in for PROGRAM.
#include "speedlab_catch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/profile/profile_command.hpp"
#include "model/counters.hpp"
#include "app/profile/program_launcher.hpp"
#include "model/profile_stream.hpp"
#include "test_support.hpp"

using namespace speedlab;
using Catch::Contains;
using testing::run_command;

namespace {

std::string profile_cmd(const std::filesystem::path& out, const std::string& program) {
  return testing::speedlab_binary().string() + " profile --out " + out.string() + " -- " + program;
}

nlohmann::json facts(const std::filesystem::path& out) {
  std::ifstream in(out / "profile.json");
  return nlohmann::json::parse(in);
}

// A stand-in for the injection library's stream: host "h", the pid, one kernel of 50 ns
// (20 to 70), closed or (truncated) not; the program under test copies it into DIR.
void write_stand_in_stream(const std::filesystem::path& path, std::uint32_t pid, std::vector<std::string> command_line,
                           bool closed) {
  profile::process_info info;
  info.pid = pid;
  info.host = "h";
  info.command_line = std::move(command_line);
  info.start_ns = 10;
  std::string error;
  auto w = profile::stream_writer::create(path, error);
  REQUIRE(w);
  w->write(profile::chunk_type::header, profile::header_json(info, 0, 500, "test"));
  trace::device_trace t;
  t.kernels.push_back({});
  t.kernels.back().name = "k";
  t.kernels.back().start = 20;
  t.kernels.back().end = 70;
  w->write(profile::chunk_type::records, profile::records_json(100, t));
  if (closed) w->write(profile::chunk_type::close, profile::close_json(90, "exit", 0));
}

} // namespace

TEST_CASE("profile: exits with the program's exit code and lists the direct child", "[profile_command]") {
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  const auto r = run_command(profile_cmd(out, "sh -c 'echo to-stdout; exit 3'"));
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.output, Contains("to-stdout"));
  const auto f = facts(out);
  CHECK(f["exit_code"] == 3);
  CHECK(f["command_line"] == nlohmann::json({"sh", "-c", "echo to-stdout; exit 3"}));
  REQUIRE(f["processes"].size() == 1);
  CHECK(f["processes"][0]["used_cuda"] == false);
  CHECK(f["processes"][0]["exit_code"] == 3);
  CHECK(f["wall_s"].get<double>() > 0);
  bool said = false;
  for (const auto& n : f["notes"]) said |= n.get<std::string>().find("never used CUDA") != std::string::npos ||
                                          n.get<std::string>().find("no process of the program used CUDA") != std::string::npos ||
                                          n.get<std::string>().find("without GPU profiling") != std::string::npos;
  CHECK(said);
}

TEST_CASE("profile: a program that cannot run exits 127 with a clear message and leaves no folder", "[profile_command]") {
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  auto r = run_command(profile_cmd(out, "/no/such/program --flag"));
  CHECK(r.exit_code == 127);
  CHECK_THAT(r.output, Contains("cannot run '/no/such/program'"));
  CHECK_THAT(r.output, Contains("No such file"));
  CHECK_FALSE(std::filesystem::exists(out));
  // Not executable.
  const auto script = dir.path() / "not-executable.sh";
  std::ofstream(script) << "echo hi\n";
  r = run_command(profile_cmd(out, script.string()));
  CHECK(r.exit_code == 127);
  CHECK_THAT(r.output, Contains("Permission denied"));
}

TEST_CASE("profile: a program killed by a signal gives 128+N", "[profile_command]") {
  testing::temp_dir dir;
  const auto r = run_command(profile_cmd(dir.path() / "p", "sh -c 'kill -KILL $$'"));
  CHECK(r.exit_code == 137);
  const auto f = facts(dir.path() / "p");
  CHECK(f["signal"] == 9);
}

TEST_CASE("profile: stdin reaches the program; speedlab's own words go to stderr", "[profile_command]") {
  testing::temp_dir dir;
  const auto r = run_command("(printf 'line one\\nline two\\n' | " + profile_cmd(dir.path() / "p", "cat") +
                             " 2>/dev/null)");
  CHECK(r.exit_code == 0);
  CHECK(r.output == "line one\nline two\n");
}

TEST_CASE("profile: SIGTERM and SIGINT sent to speedlab reach the program", "[profile_command]") {
  for (int sig : {SIGTERM, SIGINT}) {
    testing::temp_dir dir;
    const auto out = dir.path() / "p";
    const auto marker = dir.path() / "got-signal";
    // The program records the signal it got, then exits 5; speedlab must pass it on and
    // then exit with the program's code.
    const std::string program = "trap 'echo got > " + marker.string() + "; exit 5' TERM INT; while :; do sleep 0.05; done";
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const std::string bin = testing::speedlab_binary().string();
      ::execl(bin.c_str(), bin.c_str(), "profile", "--out", out.c_str(), "--", "sh", "-c", program.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(99);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(pid, sig);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(pid, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!WIFEXITED(status) && !WIFSIGNALED(status)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL("speedlab did not end after the signal");
    }
    INFO("signal " << sig);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 5);
    CHECK(std::filesystem::exists(marker));
    CHECK(std::filesystem::exists(out / "profile.json"));
  }
}

TEST_CASE("profile: the program gets the injection variables; children inherit them", "[profile_command]") {
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  const auto r =
      run_command(profile_cmd(out, "sh -c 'sh -c \"echo OPTIONS=\\$" + std::string(profile::options_variable) +
                                       " CUDA=\\$CUDA_INJECTION64_PATH NVTX=\\$NVTX_INJECTION64_PATH\"'"));
  CHECK(r.exit_code == 0);
  // The library's options as one value: the folder and the flush interval.
  CHECK_THAT(r.output,
             Contains("OPTIONS={\"dir\":\"" + std::filesystem::absolute(out).string() + "\",\"flush_ms\":\"500\"}"));
  // speedlab looks for the library beside itself.
  const auto lib = testing::speedlab_binary().parent_path() / "libspeedlab-inject.so";
  if (!std::filesystem::exists(lib)) {
    WARN("no libspeedlab-inject.so in this build: CUDA_INJECTION64_PATH is not set");
    CHECK_THAT(r.output, Contains("CUDA= NVTX="));
  } else {
    CHECK_THAT(r.output, Contains("CUDA=" + lib.string() + " NVTX=" + lib.string()));
  }
  profile::injection_options injected;
  injected.dir = "rel";
  injected.flush_ms = 250;
  const auto env = app::injection_environment("/x/libspeedlab-inject.so", injected);
  CHECK(env.at("CUDA_INJECTION64_PATH") == "/x/libspeedlab-inject.so");
  CHECK(env.at("NVTX_INJECTION64_PATH") == "/x/libspeedlab-inject.so");
  const auto block = nlohmann::json::parse(env.at(profile::options_variable));
  CHECK(block.at("flush_ms") == "250");
  CHECK(std::filesystem::path(block.at("dir").get<std::string>()).is_absolute());
  const auto merged = app::environment_with({{"PATH", "/only"}});
  CHECK(std::count_if(merged.begin(), merged.end(), [](const std::string& e) { return e.rfind("PATH=", 0) == 0; }) == 1);
  CHECK(std::find(merged.begin(), merged.end(), "PATH=/only") != merged.end());
}

TEST_CASE("profile: under another CUDA tool its injection is left in place, with a note", "[profile_command]") {
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  const auto r = run_command("CUDA_INJECTION64_PATH=/opt/other/libToolsInjection64.so " +
                             profile_cmd(out, "sh -c 'echo CUDA=$CUDA_INJECTION64_PATH'"));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("CUDA=/opt/other/libToolsInjection64.so"));
  if (std::filesystem::exists(testing::speedlab_binary().parent_path() / "libspeedlab-inject.so")) {
    CHECK_THAT(r.output, Contains("another CUDA tool is attached"));
    const auto f = facts(out);
    REQUIRE(f["notes"].size() == 1);
    CHECK_THAT(f["notes"][0].get<std::string>(), Contains("left it in place"));
  }
}

TEST_CASE("profile: a non-empty output folder is refused unless --force", "[profile_command]") {
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  std::filesystem::create_directories(out);
  std::ofstream(out / "keep.txt") << "mine";
  std::ofstream(out / "old-1.slstream") << "old";
  auto r = run_command(profile_cmd(out, "true"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("is not empty"));
  CHECK(std::filesystem::exists(out / "old-1.slstream"));
  r = run_command(testing::speedlab_binary().string() + " profile --force --out " + out.string() + " -- true");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(out / "old-1.slstream")); // an earlier profile's stream: replaced
  CHECK(std::filesystem::exists(out / "keep.txt"));              // anything else: kept
  r = run_command(testing::speedlab_binary().string() + " profile --out " + (dir.path() / "q").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("no program given"));
}

TEST_CASE("profile: a folder in use by another speedlab is refused", "[profile_command]") {
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  const auto bin = testing::speedlab_binary().string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl(bin.c_str(), bin.c_str(), "profile", "--out", out.c_str(), "--", "sleep", "2", static_cast<char*>(nullptr));
    ::_exit(99);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto r = run_command(bin + " profile --force --out " + out.string() + " -- true");
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("in use by another speedlab"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(std::filesystem::exists(out / "profile.json")); // the first one finished undisturbed
}

TEST_CASE("profile: streams written by processes of the program are read into profile.json", "[profile_command]") {
  // A stand-in for the injection library: the program writes a (truncated) stream with
  // its own pid, as an injected process would, and one for a grandchild.
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  std::filesystem::create_directories(out);
  write_stand_in_stream(dir.path() / "stage.slstream", 424242, {"python3", "worker.py"}, false);
  const auto r = run_command(profile_cmd(out, "cp " + (dir.path() / "stage.slstream").string() + " " +
                                                 (out / "h-424242.slstream").string()));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("truncated"));
  const auto f = facts(out);
  REQUIRE(f["processes"].size() == 2); // cp (never used CUDA) and the stream writer
  bool found = false;
  for (const auto& p : f["processes"])
    if (p["pid"] == 424242) {
      found = true;
      CHECK(p["used_cuda"] == true);
      CHECK(p["truncated"] == true);
      CHECK(p["kernels"] == 1);
      CHECK(p["kernel_ns"] == 50.0);
    }
  CHECK(found);
}

TEST_CASE("profile: --no-report records only; `speedlab report` analyzes the folder later", "[profile_command]") {
  // A stand-in for the injection library, as above: one stream with one kernel.
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  std::filesystem::create_directories(out);
  write_stand_in_stream(dir.path() / "stage.slstream", 434343, {"./storm"}, true);
  const std::string speedlab = testing::speedlab_binary().string();
  auto r = run_command(speedlab + " profile --no-report --out " + out.string() + " -- cp " +
                       (dir.path() / "stage.slstream").string() + " " + (out / "h-434343.slstream").string());
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("--no-report") && Contains("speedlab report " + out.string()));
  CHECK(facts(out)["processes"].size() == 2);
  CHECK_FALSE(std::filesystem::exists(out / "results.json"));
  CHECK_FALSE(std::filesystem::exists(out / "device.json")); // no device model either
  r = run_command(speedlab + " report " + out.string());
  CHECK(r.exit_code == 0);
  REQUIRE(std::filesystem::exists(out / "results.json"));
  std::ifstream in(out / "results.json");
  const auto results = nlohmann::json::parse(in);
  CHECK(results.dump().find("434343") != std::string::npos);
  // The program's exit code is still speedlab's.
  r = run_command(speedlab + " profile --no-report --out " + (dir.path() / "e").string() + " -- sh -c 'exit 7'");
  CHECK(r.exit_code == 7);
}

TEST_CASE("profile: under a launcher each rank writes a folder of its own", "[profile]") {
  auto env_of = [](std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* k) -> const char* {
      auto it = vars.find(k);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  CHECK(app::launcher_rank(env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}})) == 1);
  CHECK(app::launcher_rank(env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}})) == 3);
  CHECK(app::launcher_rank(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}})) == 0);
  CHECK(app::launcher_rank(env_of({{"PMI_RANK", "5"}, {"PMI_SIZE", "6"}})) == 5);
  CHECK_FALSE(app::launcher_rank(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}))); // one process
  CHECK_FALSE(app::launcher_rank(env_of({{"RANK", "0"}})));                                 // no world size
  CHECK_FALSE(app::launcher_rank(env_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}})));
  CHECK_FALSE(app::launcher_rank(env_of({})));
}

TEST_CASE("profile: a bad SPEEDLAB_PROFILE_FORCE_AFTER_MS is noted in the stream, the default used", "[profile_command]") {
  // The injection library started by hand (no CUDA driver here calls it): it writes its
  // stream's header, then the note; CUPTI itself is unavailable without a GPU.
  const auto lib = testing::speedlab_binary().parent_path() / "libspeedlab-inject.so";
  if (!std::filesystem::exists(lib)) {
    WARN("SKIPPED: no libspeedlab-inject.so in this build (no CUDA toolkit)");
    return;
  }
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  const auto r = run_command(profile_cmd(out, "env SPEEDLAB_PROFILE_FORCE_AFTER_MS=abc " + testing::test_python() +
                                                  " -c 'import ctypes, os; "
                                                  "ctypes.CDLL(os.environ[\"CUDA_INJECTION64_PATH\"]).InitializeInjection()'"));
  REQUIRE(r.exit_code == 0);
  const auto f = facts(out);
  REQUIRE(f["processes"].size() == 1);
  const std::string notes = f["processes"][0]["notes"].dump();
  CHECK_THAT(notes, Contains("SPEEDLAB_PROFILE_FORCE_AFTER_MS='abc' is not a whole number of milliseconds: 5000 ms is used"));
}

TEST_CASE("profile: --metrics passes the metric names to the program; an unknown set is refused", "[profile_command]") {
  testing::temp_dir dir;
  const auto out = dir.path() / "p";
  const std::string speedlab = testing::speedlab_binary().string();
  auto r = run_command(speedlab + " profile --metrics dram --counters-per-kernel 3 --out " + out.string() +
                       " -- sh -c 'echo $" + profile::options_variable + "'");
  CHECK(r.exit_code == 0);
  // The set's own metric names (the injection library has no sets of its own).
  std::string names;
  for (const auto& m : counters::metric_set("dram")) names += (names.empty() ? "" : ",") + m;
  CHECK_THAT(r.output, Contains("\"counters_k\":\"3\""));
  CHECK_THAT(r.output, !Contains("python_lines")); // Python lines on: the default, left out of the block
  CHECK_THAT(r.output, Contains("\"metric_set\":\"dram\",\"metrics\":\"" + names + "\""));
  // --no-python-lines reaches the library as python_lines 0.
  r = run_command(speedlab + " profile --no-python-lines --out " + (dir.path() / "n").string() + " -- sh -c 'echo $" +
                  profile::options_variable + "'");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("\"python_lines\":\"0\""));
  r = run_command(speedlab + " profile --metrics nosuch --out " + (dir.path() / "q").string() + " -- true");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("--metrics nosuch: unknown metric set 'nosuch'"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "q"));
  r = run_command(speedlab + " profile --metrics dram --counters-per-kernel 0 --out " + (dir.path() / "z").string() + " -- true");
  CHECK(r.exit_code == 2);
}

TEST_CASE("profile: an unknown --calibrate mode is refused before the program runs", "[profile_command]") {
  testing::temp_dir dir;
  const std::string speedlab = testing::speedlab_binary().string();
  const auto r = run_command(speedlab + " profile --calibrate sometimes --out " + (dir.path() / "c").string() +
                             " -- sh -c 'echo RAN'");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("--calibrate") && Contains("off,cached,quick,full"));
  CHECK_THAT(r.output, !Contains("RAN"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "c"));
}
