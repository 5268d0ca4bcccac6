// libspeedlab-inject.so: `speedlab profile -- PROGRAM` sets CUDA_INJECTION64_PATH and
// NVTX_INJECTION64_PATH to this library, so an unmodified program (C++, CuPy, Numba,
// PyTorch) is traced. The library is a host for the backends' program sessions
// (profilers/program_session.hpp, listed in profilers/program_registry.cpp) and names none:
// - CUDA calls InitializeInjection() when the process initializes CUDA: the library's one
//   options block is parsed (model/profile_options.hpp, as `speedlab profile` wrote it),
//   each session configured from it, the stream file (model/profile_stream.hpp) created
//   with its header, the sessions started, and a flush thread asks them for their records
//   every flush interval (500 ms by default). At exit the sessions are stopped, their last
//   records written and a closing chunk added. A process that never initializes CUDA never
//   gets here: no file, no thread, no cost.
// - NVTX calls InitializeInjectionNvtx2() at the program's first NVTX call: this library
//   is the NVTX tool itself (profilers/nvtx), not libcupti, because (1) naming libcupti
//   there loads the toolkit's libcupti by path, a second copy beside a PyTorch wheel's own,
//   (2) CUPTI 13.0.0 can crash in nvtxNameOsThreadA as the NVTX tool, and (3) ranges still
//   arrive when another CUPTI client (nsys, torch.profiler) holds CUPTI.
// - SIGTERM, SIGINT, SIGHUP and _exit (termination.hpp) have the flush thread stop the
//   sessions within a budget, write their records and close the stream.
// - speedlab_inject_flush() writes the sessions' records on demand: `speedlab run` injects
//   this library into the Python worker of a Python variant under the cupti profiler and asks
//   for the records after the measured repetitions (app/python/python_variants.cpp).
// - speedlab_inject_capture(backend, on) switches a session's per-call capture (the Python
//   lines; the cupti session's API callbacks) off and on from the program.
// Only these entry points are exported (inject.map). Nothing here throws out of a CUDA,
// CUPTI or NVTX callback; problems become note chunks in the stream.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "model/profile_options.hpp"
#include "model/profile_stream.hpp"
#include "profilers/inject/process_identity.hpp"
#include "profilers/inject/termination.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/program_session.hpp"

namespace speedlab::inject {
namespace {

using profiling::flush_kind;
using profiling::program_end;
using profiling::program_session;
using profiling::steady_now_ns;

// Taken by the termination flush; a test program holds it (speedlab_inject_test_hold) to
// stand for a thread busy inside the CUDA driver with the locks the flush needs.
std::mutex g_test_flush_lock;

// ---- the host ---------------------------------------------------------------------

class injector final : public profiling::program_host {
public:
  // Returns false (after noting why on stderr) when the stream cannot be written at all.
  bool start() {
    m_pid = static_cast<std::uint32_t>(::getpid());
    m_settings = profile::parse_injection_options();
    const profile::injection_options& o = m_settings.options;
    if (o.dir.empty()) {
      const std::string* why = m_settings.problem(profile::option::dir);
      const std::string text = why ? *why
                                   : fmt::format("no output folder in {} or {}", profile::options_variable,
                                                 profile::variable_name(profile::option::dir));
      std::fprintf(stderr, "speedlab-inject: %s; this process is not profiled\n", text.c_str());
      return false;
    }
    m_flush_ms = o.flush_ms;
    profile::process_info info = this_process(m_pid, steady_now_ns());
    for (const auto& backend : profiling::program_registry())
      if (auto s = backend.make(); s->configure(m_settings, info.tags)) {
        m_sessions.push_back(std::move(s));
        m_names.push_back(backend.name);
      }
    const std::uint64_t realtime = realtime_now_ns();
    std::string error;
    m_writer = profile::stream_writer::create(
        std::filesystem::path(o.dir) / profile::stream_file_name(info.host, m_pid), error);
    if (!m_writer) {
      std::fprintf(stderr, "speedlab-inject: %s; this process is not profiled\n", error.c_str());
      return false;
    }
    m_writer->write(profile::chunk_type::header,
                    profile::header_json(info, realtime, m_flush_ms, "libspeedlab-inject"));
    m_start_ns = info.start_ns;
    for (auto& s : m_sessions) s->start(*this);
    start_flush_thread();
    return true;
  }

  // Final flush and the closing chunk, from atexit. Not in a forked child: the stream is the
  // parent's.
  void finish(const char* reason) {
    if (static_cast<std::uint32_t>(::getpid()) != m_pid) return;
    {
      std::lock_guard lock(m_mutex);
      if (m_finished) return;
      m_finished = true;
      m_stop = true;
    }
    termination::closed(); // from here a signal or _exit has nobody to ask
    termination::wake();
    if (m_thread.joinable()) m_thread.join();
    const program_end end{reason};
    for (auto& s : m_sessions) s->stop(end);
    std::lock_guard flushing(m_flush_mutex);
    for (auto s = m_sessions.rbegin(); s != m_sessions.rend(); ++s) (*s)->write_results();
    for (auto& s : m_sessions) s->flush(flush_kind::last);
    close_stream(end);
  }

  // speedlab_inject_flush(): the sessions' records so far, written before this returns (the
  // Python bridge asks for them after a point's measured repetitions, while the process
  // lives on). False when the stream is closed or this is a forked child.
  bool flush_now() {
    if (static_cast<std::uint32_t>(::getpid()) != m_pid) return false;
    {
      std::lock_guard lock(m_mutex);
      if (m_finished) return false;
    }
    std::lock_guard flushing(m_flush_mutex);
    for (auto& s : m_sessions) s->flush(flush_kind::now);
    return true;
  }

  // speedlab_inject_capture(): the named session's per-call capture switched by the program.
  bool set_capture(std::string_view backend, bool on) {
    if (static_cast<std::uint32_t>(::getpid()) != m_pid) return false;
    for (std::size_t i = 0; i < m_sessions.size(); ++i)
      if (m_names[i] == backend) return m_sessions[i]->set_capture(on);
    return false;
  }

  void on_fork_child() {
    // The flush thread did not survive the fork and the stream is the parent's.
    if (m_writer) m_writer->abandon();
    m_thread.detach();
  }

  // ---- program_host ----
  std::uint32_t pid() const override { return m_pid; }
  std::uint64_t start_ns() const override { return m_start_ns; }
  void note(const std::string& text) override {
    if (static_cast<std::uint32_t>(::getpid()) != m_pid) return;
    m_writer->write(profile::chunk_type::note, profile::note_json(steady_now_ns(), text));
  }
  void write(profile::chunk_type type, const nlohmann::json& payload) override { m_writer->write(type, payload); }
  void write_bytes(profile::chunk_type type, std::string_view payload) override {
    m_writer->write_bytes(type, payload);
  }
  void request_flush() noexcept override {
    m_flush_requested.store(true);
    termination::wake();
  }

private:
  // After the last flush: what each session has to say, then the closing chunk.
  void close_stream(const program_end& end) {
    std::uint64_t dropped = 0;
    for (auto s = m_sessions.rbegin(); s != m_sessions.rend(); ++s) {
      (*s)->close(end);
      dropped += (*s)->dropped();
    }
    m_writer->write(profile::chunk_type::close, profile::close_json(steady_now_ns(), end.how, dropped));
  }

  // The flush thread starts with SIGTERM, SIGINT and SIGHUP blocked (inherited from this
  // thread's mask, so no signal can reach it before it runs), then the handlers go in: a
  // handler never runs on the thread it waits for (termination.hpp).
  void start_flush_thread() {
    sigset_t block{}, old{};
    sigemptyset(&block);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&block, sig);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    m_thread = std::thread([this] { flush_loop(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (const std::string* why = m_settings.problem(profile::option::signal_wait_ms)) note(*why);
    const std::uint32_t wait_ms = m_settings.options.signal_wait_ms;
    m_signal_wait_ms = wait_ms;
    std::string error;
    // signals off: the program's signals untouched (_exit is still handled).
    if (!termination::install(wait_ms, m_settings.options.signals, error))
      note("signals: " + error + "; records since the last flush are lost if the process is ended by a signal");
  }

  // Wakes for a termination request, a flush point or finish(); otherwise every
  // recheck_interval_ms (the program may have replaced a handler), when a session wants its
  // tick, and flushes every m_flush_ms.
  void flush_loop() {
    std::uint64_t next_flush = steady_now_ns() + m_flush_ms * 1000000ull;
    for (;;) {
      const std::uint64_t now = steady_now_ns();
      const std::uint64_t until_flush_ms = next_flush > now ? (next_flush - now + 999999) / 1000000 : 0;
      pollfd p{termination::wake_fd(), POLLIN, 0};
      ::poll(&p, 1,
             static_cast<int>(
                 std::min({until_flush_ms, std::uint64_t{termination::recheck_interval_ms}, until_tick_ms()})));
      const termination::request r = termination::take();
      {
        std::lock_guard lock(m_mutex);
        if (m_stop) break;
      }
      if (r.kind != termination::request::none) {
        on_termination(r);
        termination::done();
        if (r.final) break;
        continue;
      }
      tick();
      if (const std::string taken = termination::recheck(); !taken.empty())
        note("signals: the program installed its own handler for " + taken + "; speedlab's runs first and passes " +
             "the signal on to it");
      if (steady_now_ns() < next_flush && !m_flush_requested.exchange(false)) continue;
      periodic_flush();
      next_flush = steady_now_ns() + m_flush_ms * 1000000ull;
    }
  }

  std::uint64_t until_tick_ms() {
    std::lock_guard flushing(m_flush_mutex);
    std::uint64_t ms = UINT64_MAX;
    for (auto& s : m_sessions) ms = std::min(ms, s->until_tick_ms());
    return ms;
  }

  void tick() {
    std::lock_guard flushing(m_flush_mutex);
    for (auto& s : m_sessions) s->tick();
  }

  void periodic_flush() {
    try {
      std::lock_guard flushing(m_flush_mutex);
      for (auto& s : m_sessions) s->flush(flush_kind::periodic);
    } catch (...) {
    }
  }

  // A signal or _exit (termination.hpp), on the flush thread while the handler waits: the
  // sessions stopped (each wait bounded: the launching thread is stopped anywhere, maybe
  // inside the driver), their records written and, when the process ends next, the closing
  // chunk naming how. When the program's own handler runs next, the process may go on: a
  // note, and the stream stays open.
  void on_termination(const termination::request& r) noexcept {
    try {
      const std::string how = r.kind == termination::request::signal ? termination::signal_name(r.value)
                                                                     : fmt::format("_exit({})", r.value);
      if (r.signal_unix_ns != 0) // the work finished before it is what must be kept
        note(fmt::format("{} received at Unix time {:.6f} s", how, static_cast<double>(r.signal_unix_ns) / 1e9));
      const program_end end{how, true, m_signal_wait_ms};
      for (auto& s : m_sessions) s->stop(end);
      {
        std::lock_guard held_by_test(g_test_flush_lock); // stands for the driver's locks (tests)
        std::lock_guard flushing(m_flush_mutex);
        for (auto& s : m_sessions) s->flush(flush_kind::last);
      }
      if (r.handler_next)
        note(how + " received: the records so far are written and the stream closed; the program's own handler "
                   "runs next (records after it are not kept)");
      else if (!r.final) {
        note(how + " received: the records so far are written; the program's own handler runs next");
        return;
      }
      {
        std::lock_guard lock(m_mutex);
        if (m_finished) return;
        m_finished = m_stop = true;
      }
      termination::closed();
      close_stream(end);
    } catch (...) {
    }
  }

  std::uint32_t m_pid = 0;
  std::uint64_t m_start_ns = 0;
  profile::parsed_injection_options m_settings; // read once, at start()
  std::uint32_t m_flush_ms = profile::default_flush_ms;
  std::vector<std::unique_ptr<program_session>> m_sessions; // registry order
  std::vector<std::string> m_names;                         // each session's backend
  std::unique_ptr<profile::stream_writer> m_writer;
  std::thread m_thread;
  std::mutex m_mutex; // guards m_stop/m_finished; never held across a CUPTI call
  // One flush at a time. Held across CUPTI calls, so no CUPTI callback ever takes it.
  std::mutex m_flush_mutex;
  std::atomic<bool> m_flush_requested{false}; // a flush point asked for a flush now
  std::uint32_t m_signal_wait_ms = termination::default_wait_ms;
  bool m_stop = false, m_finished = false;
};

// Never destroyed: atexit handlers and CUPTI callbacks may run during static destruction.
injector* g_injector = nullptr;
std::once_flag g_cuda_once, g_nvtx_once;

void at_exit() noexcept {
  try {
    if (g_injector) g_injector->finish("exit");
  } catch (...) {
  }
}

void at_fork_child() noexcept {
  if (g_injector) g_injector->on_fork_child();
}

// NVTX ranges are recorded from the first NVTX call on, also before CUDA starts; they are
// written from the first flush once CUDA initialized this library.
void start_nvtx_capture() {
  std::call_once(g_nvtx_once, [] { new profiling::nvtx_capture; });
}

} // namespace
} // namespace speedlab::inject

extern "C" {

// Tests only (tests/helpers/signal_probe.cpp): 1 takes the lock the termination flush
// needs, 0 lets it go, from the calling thread.
__attribute__((visibility("default"))) void speedlab_inject_test_hold(int hold) {
  if (hold)
    speedlab::inject::g_test_flush_lock.lock();
  else
    speedlab::inject::g_test_flush_lock.unlock();
}

// CUDA's injection entry point (CUDA_INJECTION64_PATH), called once per process during
// CUDA initialization; the once flag guards against a second call all the same.
__attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace speedlab::inject;
  std::call_once(g_cuda_once, [] {
    try {
      start_nvtx_capture();
      auto* inj = new injector;
      if (!inj->start()) return;
      g_injector = inj;
      pthread_atfork(nullptr, nullptr, &at_fork_child);
      // The final flush runs in at_exit; exit() runs handlers in reverse order of
      // registration, static destructors included, so everything the flush uses is made
      // before at_exit is registered (seen on the GPU machine: a trace written from at_exit
      // with a destroyed static table of column names).
      (void)speedlab::profile::records_binary(0, speedlab::trace::device_trace{});
      std::atexit(&at_exit);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "speedlab-inject: setup failed: %s; this process is not profiled\n", e.what());
    } catch (...) {
    }
  });
  return 1;
}

// Writes the sessions' records so far to the stream now; 1 when written, 0 when this
// process is not being profiled (CUDA never started, or the stream is closed). For a
// process that lives on past a measurement (the Python worker of `speedlab run`), so
// nothing waits for the flush interval or the exit.
__attribute__((visibility("default"))) int speedlab_inject_flush(void) {
  using namespace speedlab::inject;
  try {
    return g_injector && g_injector->flush_now() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

// Switches a backend's per-call capture off (on = 0) or back on from the program, e.g.
// speedlab_inject_capture("python", 0) around a region whose Python lines are not wanted, or
// to measure their cost inside one process (scripts/bench/torch_loop.py --alternate-capture).
// 1 when switched, 0 when the process is not profiled, the backend is not running here or it
// has no capture to switch.
__attribute__((visibility("default"))) int speedlab_inject_capture(const char* backend, int on) {
  using namespace speedlab::inject;
  try {
    return backend && g_injector && g_injector->set_capture(backend, on != 0) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

// NVTX's injection entry point (NVTX_INJECTION64_PATH).
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  using namespace speedlab::inject;
  // Cost knob: nvtx off declines to be the NVTX tool (no ranges recorded).
  if (!speedlab::profile::parse_injection_options().options.nvtx) return 0;
  try {
    start_nvtx_capture();
  } catch (...) {
    return 0;
  }
  return speedlab::profiling::initialize_nvtx_tool(get_export_table);
}

} // extern "C"
