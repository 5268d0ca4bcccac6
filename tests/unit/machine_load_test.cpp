// machine_load_meter: another program's CPU time is the machine's load. (That speedlab's own
// and its reaped children's is not, is checked on a real run: a serial point on a quiet
// machine reads near 0, docs/analysis.md.)
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <sys/wait.h>

#include "app/process/machine_load.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;

namespace {

// Burns `ms` milliseconds of this process's CPU time (not wall time: CI machines are shared).
void burn(int ms) {
  const auto cpu_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
  };
  const long long until = cpu_ns() + ms * 1000000ll;
  volatile double x = 0;
  while (cpu_ns() < until) x = x + 1.0;
}

pid_t burner(int ms) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    burn(ms);
    ::_exit(0);
  }
  return pid;
}

} // namespace

TEST_CASE("machine load: a program speedlab has not reaped is another program's load", "[machine_load]") {
  if (!app::machine_busy_ns()) {
    WARN("no /proc/stat here: nothing to measure");
    return;
  }
  const app::machine_load_meter meter;
  const pid_t other = burner(300);
  REQUIRE(other > 0);
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(other), &info, WEXITED | WNOWAIT) == 0); // ended, not reaped
  const auto load = meter.read();
  REQUIRE(::waitpid(other, nullptr, 0) == other);
  REQUIRE(load);
  CHECK(load->span_s >= 0.3);
  // At least its 300 ms (less two 10 ms ticks of /proc/stat's resolution); more where the
  // machine is shared.
  CHECK(load->other_busy_cores * load->span_s >= 0.28);
}
