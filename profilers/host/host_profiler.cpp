// "host": per repetition, wall time and the CPU time of the whole process and of the thread
// that ran the repetition (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID), so the
// report can show how busy a multithreaded variant kept its cores; plus the CPU time of the
// helper processes that did the point's work (a Python variant's worker).
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <sys/syscall.h>

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

std::mutex g_helpers_mutex;
std::vector<int> g_helpers;

// The CPU time of the children `pid` waited for (cutime + cstime of /proc/PID/stat, in clock
// ticks): a worker's multiprocessing pool, whose own clocks end with it. 0 when unreadable.
std::uint64_t reaped_children_cpu_ns(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto close = line.rfind(')'); // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  std::uint64_t ticks = 0;
  for (int i = 3; i <= 17 && fields >> field; ++i) // field 3 is the state; 16, 17: cutime, cstime
    if (i >= 16) ticks += std::strtoull(field.c_str(), nullptr, 10);
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? ticks * (1000000000ull / static_cast<std::uint64_t>(hz)) : 0;
}

// A helper's CPU time so far (all its threads, and its reaped children), nullopt once it is
// gone.
std::optional<std::uint64_t> helper_cpu_ns(int pid) {
  clockid_t id{};
  if (::clock_getcpuclockid(pid, &id) != 0) return std::nullopt;
  timespec ts{};
  if (::clock_gettime(id, &ts) != 0) return std::nullopt;
  const auto own = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  return own + reaped_children_cpu_ns(pid);
}

class host_session final : public session {
public:
  void start() override {}

  void repetition_begin() override {
    m_open = true;
    m_tid = current_tid();
    m_helpers.clear();
    for (const int pid : helper_processes())
      if (const auto ns = helper_cpu_ns(pid)) m_helpers[pid] = *ns;
    m_wall = steady_now_ns();
    m_process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    m_thread = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  }

  void repetition_end() override {
    const std::uint64_t thread = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    const std::uint64_t process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    const std::uint64_t wall = steady_now_ns();
    std::uint64_t helpers = 0;
    for (const auto& [pid, before] : m_helpers) {
      const auto now = helper_cpu_ns(pid);
      if (now && *now >= before)
        helpers += *now - before;
      else
        note_once("host: a helper process ended inside a repetition; its CPU time there is not counted");
    }
    if (!m_open) {
      note_once("host: repetition_end without repetition_begin; repetition ignored");
      return;
    }
    m_open = false;
    host_usage u;
    u.wall_ns = wall - m_wall;
    u.helper_cpu_ns = helpers;
    u.process_cpu_ns = process - m_process + helpers;
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
  std::map<int, std::uint64_t> m_helpers; // pid -> its CPU time at repetition_begin
  std::vector<host_usage> m_usage;
  std::vector<std::string> m_messages;
};

class host_profiler final : public profiler {
public:
  host_profiler()
      : profiler("host", "wall, process CPU (with helper processes such as a Python worker) and calling-thread CPU "
                         "time per repetition") {}
  std::unique_ptr<session> create_session(const profiler_options&) override { return std::make_unique<host_session>(); }
};

} // namespace

void add_helper_process(int pid) {
  const std::lock_guard lock(g_helpers_mutex);
  if (pid > 0 && std::find(g_helpers.begin(), g_helpers.end(), pid) == g_helpers.end()) g_helpers.push_back(pid);
}

void remove_helper_process(int pid) {
  const std::lock_guard lock(g_helpers_mutex);
  std::erase(g_helpers, pid);
}

std::vector<int> helper_processes() {
  const std::lock_guard lock(g_helpers_mutex);
  return g_helpers;
}

std::unique_ptr<profiler> make_host_profiler() { return std::make_unique<host_profiler>(); }

} // namespace speedlab::profiling
