#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include "profilers/profiler.hpp"
#include "speedlab/config.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;

namespace {

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Burns `ms` milliseconds of this thread's CPU time (not wall time: CI machines are shared).
void busy(int ms) {
  const std::uint64_t until = thread_cpu_ns() + static_cast<std::uint64_t>(ms) * 1000000u;
  volatile double x = 0;
  while (thread_cpu_ns() < until) x = x + 1.0;
}

// A child process that, on each byte from the parent, burns `ms` of CPU time (in itself, or
// in a grandchild it waits for) and answers with one byte: a Python worker's stand-in.
class busy_child {
public:
  busy_child(int ms, bool in_grandchild) {
    int to_child[2], to_parent[2];
    REQUIRE(::pipe(to_child) == 0);
    REQUIRE(::pipe(to_parent) == 0);
    m_pid = ::fork();
    REQUIRE(m_pid >= 0);
    if (m_pid == 0) {
      ::close(to_child[1]); // so the parent's close ends this child's reads
      ::close(to_parent[0]);
      char c;
      while (::read(to_child[0], &c, 1) == 1) {
        if (in_grandchild) {
          const pid_t g = ::fork();
          if (g == 0) {
            busy(ms);
            ::_exit(0);
          }
          int status = 0;
          ::waitpid(g, &status, 0);
        } else {
          busy(ms);
        }
        if (::write(to_parent[1], &c, 1) != 1) ::_exit(1);
      }
      ::_exit(0);
    }
    ::close(to_child[0]);
    ::close(to_parent[1]);
    m_out = to_child[1];
    m_in = to_parent[0];
  }
  ~busy_child() {
    ::close(m_out); // the child's read ends: it exits
    ::close(m_in);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
  }
  busy_child(const busy_child&) = delete;
  busy_child& operator=(const busy_child&) = delete;
  void work() {
    char c = 'x';
    REQUIRE(::write(m_out, &c, 1) == 1);
    REQUIRE(::read(m_in, &c, 1) == 1);
  }
  pid_t pid() const { return m_pid; }

private:
  pid_t m_pid = -1;
  int m_out = -1, m_in = -1;
};

} // namespace

TEST_CASE("profiler registry lists the built backends", "[host_profiler]") {
  const auto names = profiling::profiler_names();
  CHECK(std::find(names.begin(), names.end(), "none") != names.end());
  CHECK(std::find(names.begin(), names.end(), "host") != names.end());
  CHECK((std::find(names.begin(), names.end(), "cupti") != names.end()) == static_cast<bool>(SPEEDLAB_HAS_CUPTI));
  CHECK(profiling::make_profiler("no-such-profiler") == nullptr);
  auto none = profiling::make_profiler("none");
  REQUIRE(none);
  CHECK(none->name() == "none");
  CHECK(none->unavailable_reason().empty());
  auto s = none->create_session({});
  s->start();
  s->repetition_begin();
  s->repetition_end();
  s->stop();
  profiling::profile_data data;
  s->collect(data);
  CHECK(data.host.empty());
  CHECK(data.device.kernels.empty());
}

TEST_CASE("host profiler: wall, process and thread CPU time per repetition", "[host_profiler]") {
  auto prof = profiling::make_profiler("host");
  REQUIRE(prof);
  CHECK(prof->unavailable_reason().empty());
  auto s = prof->create_session({});
  s->start();

  // Repetition 1: this thread busy. Repetition 2: sleeping. Repetition 3: two helpers busy.
  s->repetition_begin();
  busy(40);
  s->repetition_end();
  s->repetition_begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  s->repetition_end();
  s->repetition_begin();
  {
    std::thread a([] { busy(40); }), b([] { busy(40); });
    a.join();
    b.join();
  }
  s->repetition_end();
  s->stop();
  profiling::profile_data data;
  s->collect(data);
  REQUIRE(data.host.size() == 3);
  CHECK(data.messages.empty());

  const auto& busy_rep = data.host[0];
  CHECK(busy_rep.thread_cpu_ns >= 40'000'000u);
  CHECK(busy_rep.wall_ns >= busy_rep.thread_cpu_ns);
  CHECK(busy_rep.process_cpu_ns >= busy_rep.thread_cpu_ns);

  const auto& sleep_rep = data.host[1];
  CHECK(sleep_rep.wall_ns >= 40'000'000u);
  CHECK(sleep_rep.thread_cpu_ns < 10'000'000u); // asleep, not burning CPU

  const auto& threads_rep = data.host[2];
  CHECK(threads_rep.thread_cpu_ns < 10'000'000u);   // the caller only waited
  CHECK(threads_rep.process_cpu_ns >= 80'000'000u); // both helpers' CPU time counts
  CHECK(threads_rep.process_cpu_ns > 4 * threads_rep.thread_cpu_ns);
}

TEST_CASE("host profiler: misuse is reported, not fatal", "[host_profiler]") {
  auto s = profiling::make_profiler("host")->create_session({});
  s->start();
  s->repetition_end(); // no begin
  s->repetition_begin();
  std::uint64_t thread_cpu = 1;
  std::thread([&] {
    s->repetition_end(); // ends on another thread
  }).join();
  s->repetition_begin();
  s->stop(); // inside an open repetition
  profiling::profile_data data;
  s->collect(data);
  REQUIRE(data.host.size() == 1);
  thread_cpu = data.host[0].thread_cpu_ns;
  CHECK(thread_cpu == 0);
  CHECK(data.messages.size() == 3);
}

TEST_CASE("host profiler: a helper process's CPU time counts while it is registered", "[host_profiler][python]") {
  busy_child child(60, false), pool(60, true);
  auto s = profiling::make_profiler("host")->create_session({});
  s->start();
  // Repetition 1: the child works, not registered. 2: registered. 3: its grandchild works.
  s->repetition_begin();
  child.work();
  s->repetition_end();
  profiling::add_helper_process(child.pid());
  profiling::add_helper_process(pool.pid());
  s->repetition_begin();
  child.work();
  s->repetition_end();
  s->repetition_begin();
  pool.work();
  s->repetition_end();
  profiling::remove_helper_process(child.pid());
  profiling::remove_helper_process(pool.pid());
  CHECK(profiling::helper_processes().empty());
  s->stop();
  profiling::profile_data data;
  s->collect(data);
  REQUIRE(data.host.size() == 3);
  CHECK(data.messages.empty());

  CHECK(data.host[0].helper_cpu_ns == 0);
  CHECK(data.host[0].process_cpu_ns < 30'000'000u); // this process only waited
  CHECK(data.host[1].helper_cpu_ns >= 60'000'000u);
  CHECK(data.host[1].process_cpu_ns >= data.host[1].helper_cpu_ns);
  CHECK(data.host[1].wall_ns >= 60'000'000u);
  // A grandchild's time arrives when its parent waits for it, in clock ticks (10 ms).
  CHECK(data.host[2].helper_cpu_ns >= 50'000'000u);
}

TEST_CASE("host profiler: a helper process that ends inside a repetition is noted, not fatal",
          "[host_profiler][python]") {
  auto s = profiling::make_profiler("host")->create_session({});
  s->start();
  pid_t pid = 0;
  {
    busy_child child(1, false);
    pid = child.pid();
    profiling::add_helper_process(pid);
    s->repetition_begin();
  } // the child exits and is reaped here
  s->repetition_end();
  profiling::remove_helper_process(pid);
  s->stop();
  profiling::profile_data data;
  s->collect(data);
  REQUIRE(data.host.size() == 1);
  CHECK(data.host[0].helper_cpu_ns == 0);
  REQUIRE(data.messages.size() == 1);
  CHECK(data.messages[0].find("helper process ended") != std::string::npos);
}
