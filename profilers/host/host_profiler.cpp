// "host": per repetition, wall time and the CPU time of the whole process and of the thread
// that ran the repetition (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID), so the
// report can show how busy a multithreaded variant kept its cores.
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::profiling {
namespace {

std::uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

long current_tid() { return ::syscall(SYS_gettid); }

class host_session final : public session {
public:
  void start() override {}

  void repetition_begin() override {
    m_open = true;
    m_tid = current_tid();
    m_wall = steady_now_ns();
    m_process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    m_thread = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  }

  void repetition_end() override {
    const std::uint64_t thread = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    const std::uint64_t process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    const std::uint64_t wall = steady_now_ns();
    if (!m_open) {
      note_once("host: repetition_end without repetition_begin; repetition ignored");
      return;
    }
    m_open = false;
    host_usage u;
    u.wall_ns = wall - m_wall;
    u.process_cpu_ns = process - m_process;
    // A thread's CPU clock means nothing on another thread.
    if (current_tid() == m_tid) u.thread_cpu_ns = thread - m_thread;
    else note_once("host: repetition began and ended on different threads; thread CPU time left at 0");
    m_usage.push_back(u);
  }

  void stop() override {
    if (m_open) note_once("host: stop() inside an open repetition; that repetition is not counted");
    m_open = false;
  }

  void collect(profile_data& out) override {
    out.host.insert(out.host.end(), m_usage.begin(), m_usage.end());
    for (auto& m : m_messages) out.messages.push_back(std::move(m));
    m_messages.clear();
  }

private:
  void note_once(const char* msg) {
    for (const auto& m : m_messages)
      if (m == msg) return;
    m_messages.emplace_back(msg);
  }

  bool m_open = false;
  long m_tid = 0;
  std::uint64_t m_wall = 0, m_process = 0, m_thread = 0;
  std::vector<host_usage> m_usage;
  std::vector<std::string> m_messages;
};

class host_profiler final : public profiler {
public:
  std::string name() const override { return "host"; }
  std::string description() const override {
    return "wall, process CPU and calling-thread CPU time per repetition";
  }
  std::unique_ptr<session> create_session(const profiler_options&) override { return std::make_unique<host_session>(); }
};

} // namespace



std::unique_ptr<profiler> make_host_profiler() { return std::make_unique<host_profiler>(); }

} // namespace speedlab::profiling
