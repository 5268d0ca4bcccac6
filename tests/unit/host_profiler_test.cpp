#include "speedlab_catch.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include "profilers/profiler.hpp"
#include "speedlab/config.hpp"

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
  CHECK(threads_rep.thread_cpu_ns < 10'000'000u);        // the caller only waited
  CHECK(threads_rep.process_cpu_ns >= 80'000'000u);      // both helpers' CPU time counts
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
