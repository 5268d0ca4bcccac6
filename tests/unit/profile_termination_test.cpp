// A program ended by a signal or _exit under `speedlab profile`, without a GPU: the
// injection library's termination path (profilers/inject/termination.hpp) writes what was
// recorded up to that moment and closes the stream saying how, then the program's own
// handler or the default action runs. speedlab_signal_probe (tests/helpers) starts the
// library by hand and records NVTX ranges; --flush-interval is ten minutes, so no periodic
// flush writes them: whatever the stream holds came from the termination path.
#include "speedlab_catch.hpp"

#include <chrono>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/profile/profile_command.hpp"
#include "app/profile/program_launcher.hpp"
#include "test_support.hpp"

using namespace speedlab;
using Catch::Contains;
using testing::run_command;

namespace {

std::filesystem::path probe() { return testing::speedlab_binary().parent_path() / "speedlab_signal_probe"; }

bool have_probe() {
  if (std::filesystem::exists(probe()) &&
      std::filesystem::exists(testing::speedlab_binary().parent_path() / "libspeedlab-inject.so"))
    return true;
  WARN("SKIPPED: no libspeedlab-inject.so or speedlab_signal_probe in this build (no CUDA toolkit)");
  return false;
}

// `speedlab profile` of the probe in the background; once the probe is ready, `signal` is
// sent to speedlab (which forwards it to the program, as to any program it runs), or to
// nobody when `signal` is empty. Prints speedlab's exit status as "status=N".
testing::command_result profile_probe(const std::filesystem::path& dir, const std::string& mode, long ranges,
                                      const std::string& signal) {
  const auto ready = dir / "ready";
  const std::string profile = testing::speedlab_binary().string() + " profile --flush-interval 600000 --out " +
                              (dir / "p").string() + " -- " + probe().string() + " " + std::to_string(ranges) + " " +
                              ready.string() + " " + mode + " " + (dir / "handled").string();
  const std::string script = profile + " & pid=$!; i=0; while [ ! -e " + ready.string() +
                             " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; " +
                             (signal.empty() ? "" : "kill -" + signal + " $pid; ") + "wait $pid; echo status=$?";
  return run_command("sh -c '" + script + "'");
}

nlohmann::json the_process(const std::filesystem::path& dir) {
  std::ifstream in(dir / "p" / "profile.json");
  const auto facts = nlohmann::json::parse(in);
  REQUIRE(facts["processes"].size() == 1);
  return facts["processes"][0];
}

std::string notes_of(const nlohmann::json& process) { return process["notes"].dump(); }

} // namespace

TEST_CASE("termination: a stream whose program was ended by SIGTERM reads back complete, closed by SIGTERM",
          "[termination]") {
  if (!have_probe()) return;
  testing::temp_dir dir;
  const auto r = profile_probe(dir.path(), "wait", 1000, "TERM");
  INFO(r.output);
  // The default action ran: the program died by SIGTERM, and speedlab says so (128+15).
  CHECK_THAT(r.output, Contains("status=143"));
  const auto p = the_process(dir.path());
  CHECK(p["signal"] == 15);
  CHECK(p["nvtx_ranges"] == 1000); // every range recorded before the signal
  CHECK(p["truncated"] == false);
  CHECK(p["tags"]["closed_by"] == "SIGTERM");
}

TEST_CASE("termination: SIGINT and SIGHUP without a handler end the program by that signal, records kept",
          "[termination]") {
  if (!have_probe()) return;
  for (const auto& [name, number] : {std::pair{"INT", 2}, std::pair{"HUP", 1}}) {
    testing::temp_dir dir;
    const auto r = profile_probe(dir.path(), "wait", 300, name);
    INFO(name << ": " << r.output);
    CHECK_THAT(r.output, Contains("status=" + std::to_string(128 + number)));
    const auto p = the_process(dir.path());
    CHECK(p["signal"] == number);
    CHECK(p["nvtx_ranges"] == 300);
    CHECK(p["tags"]["closed_by"] == std::string("SIG") + name);
  }
}

// Seen on the GPU machine with CuPy: a library put the injection library's handler back as a
// plain handler; taken for the program's own, it was chained to itself and SIGTERM or SIGINT
// ended the program with SIGSEGV (exit 139) after 15,000 nested calls.
TEST_CASE("termination: the library's handler put back as a plain handler still ends the program by the signal",
          "[termination]") {
  if (!have_probe()) return;
  for (const auto& [name, number] : {std::pair{"TERM", 15}, std::pair{"INT", 2}}) {
    testing::temp_dir dir;
    const auto r = profile_probe(dir.path(), "restore-plain", 200, name);
    INFO(name << ": " << r.output);
    CHECK_THAT(r.output, Contains("status=" + std::to_string(128 + number)));
    const auto p = the_process(dir.path());
    CHECK(p["signal"] == number);
    CHECK(p["nvtx_ranges"] == 200);
    CHECK(p["tags"]["closed_by"] == std::string("SIG") + name);
  }
}

TEST_CASE("termination: the program's own SIGTERM handler still runs, installed before or after the library",
          "[termination]") {
  if (!have_probe()) return;
  for (const std::string mode : {"handler-before", "handler-after"}) {
    testing::temp_dir dir;
    const auto r = profile_probe(dir.path(), mode, 500, "TERM");
    INFO(mode << ": " << r.output);
    // The handler wrote its file and chose the exit status; speedlab passes it on.
    CHECK(testing::read_text(dir.path() / "handled") == "handled SIGTERM\n");
    CHECK_THAT(r.output, Contains("status=42"));
    const auto p = the_process(dir.path());
    CHECK(p["exit_code"] == 42);
    CHECK(p["nvtx_ranges"] == 500);
    CHECK_THAT(notes_of(p), Contains("SIGTERM received: the records so far are written and the stream closed"));
    // The stream is closed before the program's handler runs (it left through _exit then).
    CHECK(p["truncated"] == false);
    CHECK(p["tags"]["closed_by"] == "SIGTERM");
    if (mode == "handler-after")
      CHECK_THAT(notes_of(p), Contains("the program installed its own handler for SIGTERM"));
  }
}

TEST_CASE("termination: a process leaving through _exit closes its stream", "[termination]") {
  if (!have_probe()) return;
  testing::temp_dir dir;
  const auto r = profile_probe(dir.path(), "exit", 700, "");
  INFO(r.output);
  CHECK_THAT(r.output, Contains("status=7"));
  const auto p = the_process(dir.path());
  CHECK(p["exit_code"] == 7);
  CHECK(p["nvtx_ranges"] == 700);
  CHECK(p["truncated"] == false);
  CHECK(p["tags"]["closed_by"] == "_exit(7)");
}

TEST_CASE("termination: SPEEDLAB_PROFILE_SIGNALS=0 leaves the program's signals alone", "[termination]") {
  if (!have_probe()) return;
  testing::temp_dir dir;
  setenv("SPEEDLAB_PROFILE_SIGNALS", "0", 1);
  const auto r = profile_probe(dir.path(), "wait", 100, "TERM");
  unsetenv("SPEEDLAB_PROFILE_SIGNALS");
  INFO(r.output);
  CHECK_THAT(r.output, Contains("status=143"));
  // Nothing flushed at the signal: the stream ends with its header, truncated, as before.
  const auto p = the_process(dir.path());
  CHECK(p["truncated"] == true);
  CHECK(p["nvtx_ranges"] == 0);
}

TEST_CASE("termination: the _exit shim goes in front of the program's own preloads", "[termination]") {
  testing::temp_dir dir;
  const auto lib = dir.path() / "libspeedlab-inject.so";
  // No shim beside the library: the program's LD_PRELOAD unchanged.
  CHECK(app::preload_with_exit_shim(lib, "") == "");
  CHECK(app::preload_with_exit_shim(lib, "/x/libmine.so") == "/x/libmine.so");
  std::ofstream(dir.path() / "libspeedlab-exit.so") << "";
  const std::string shim = (dir.path() / "libspeedlab-exit.so").string();
  CHECK(app::preload_with_exit_shim(lib, "") == shim);
  CHECK(app::preload_with_exit_shim(lib, "/x/libmine.so") == shim + ":/x/libmine.so");
  CHECK(app::preload_with_exit_shim("", "/x/libmine.so") == "/x/libmine.so");
}

TEST_CASE("termination: Python ended by an uncaught KeyboardInterrupt closes its stream as SIGINT", "[termination]") {
  // Python runs its SIGINT handler (KeyboardInterrupt), finalizes, then puts SIGINT back to
  // the default and signals itself, without exit(): the shim sees that kill.
  if (!have_probe()) return;
  testing::temp_dir dir;
  const auto r = run_command(testing::speedlab_binary().string() + " profile --out " + (dir.path() / "p").string() +
                             " -- " + testing::test_python() +
                             " -c 'import ctypes, os, signal, time; "
                             "ctypes.CDLL(os.environ[\"CUDA_INJECTION64_PATH\"]).InitializeInjection(); "
                             "os.kill(os.getpid(), signal.SIGINT); time.sleep(30)'");
  INFO(r.output);
  CHECK(r.exit_code == 130);
  CHECK_THAT(r.output, Contains("KeyboardInterrupt"));
  const auto p = the_process(dir.path());
  CHECK(p["signal"] == 2);
  CHECK(p["truncated"] == false);
  CHECK(p["tags"]["closed_by"] == "SIGINT");
  CHECK_THAT(notes_of(p), Contains("SIGINT received: the records so far are written"));
}

TEST_CASE("termination: a thread busy holding the lock the flush needs still has the stream closed, ended by the "
          "signal", "[termination]") {
  // The signal lands on the probe's only thread while it holds the lock (as a thread inside
  // the CUDA driver holds the driver's): the handler must not wait there. It returns, the
  // thread lets the lock go within 20 ms, the termination thread has the stream closed and
  // delivers SIGTERM again to the default action.
  if (!have_probe()) return;
  testing::temp_dir dir;
  const auto start = std::chrono::steady_clock::now();
  const auto r = profile_probe(dir.path(), "busy", 800, "TERM");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.output);
  CHECK_THAT(r.output, Contains("status=143"));
  CHECK(seconds < 4.5); // well inside the 5 s wait budget: nothing waited for it
  const auto p = the_process(dir.path());
  CHECK_THAT(notes_of(p), Contains("SIGTERM received at Unix time"));
  CHECK(p["signal"] == 15);
  CHECK(p["nvtx_ranges"] == 800);
  CHECK(p["truncated"] == false);
  CHECK(p["tags"]["closed_by"] == "SIGTERM");
}

TEST_CASE("termination: a lock never let go costs the wait budget, then the signal still ends the program",
          "[termination]") {
  if (!have_probe()) return;
  testing::temp_dir dir;
  setenv("SPEEDLAB_PROFILE_SIGNAL_WAIT_MS", "1500", 1);
  const auto start = std::chrono::steady_clock::now();
  const auto r = profile_probe(dir.path(), "stuck", 100, "TERM");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsetenv("SPEEDLAB_PROFILE_SIGNAL_WAIT_MS");
  INFO(r.output);
  // Never swallowed: the default action ran after the 1.5 s budget.
  CHECK_THAT(r.output, Contains("status=143"));
  CHECK(seconds < 6.0);
  const auto p = the_process(dir.path());
  CHECK(p["signal"] == 15);
}

TEST_CASE("termination: a Python SIGTERM handler that exits has the stream closed first, its exit status kept",
          "[termination]") {
  // The handler is installed after the library (as torch's or a job's is): the library puts
  // its own back in front within 250 ms, then the signal comes while Python sleeps.
  if (!have_probe()) return;
  testing::temp_dir dir;
  const auto r = run_command(testing::speedlab_binary().string() + " profile --out " + (dir.path() / "p").string() +
                             " -- " + testing::test_python() +
                             " -c 'import ctypes, os, signal, sys, time; "
                             "ctypes.CDLL(os.environ[\"CUDA_INJECTION64_PATH\"]).InitializeInjection(); "
                             "signal.signal(signal.SIGTERM, lambda *a: sys.exit(3)); time.sleep(0.8); "
                             "os.kill(os.getpid(), signal.SIGTERM); time.sleep(30)'");
  INFO(r.output);
  CHECK(r.exit_code == 3);
  const auto p = the_process(dir.path());
  CHECK(p["exit_code"] == 3);
  CHECK(p["truncated"] == false);
  CHECK(p["tags"]["closed_by"] == "SIGTERM");
  CHECK_THAT(notes_of(p), Contains("the stream closed; the program's own handler runs next"));
}
