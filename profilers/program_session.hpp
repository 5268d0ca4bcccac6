// A backend inside a profiled program: the session contract of `speedlab profile`'s
// injection library (profilers/inject), in the manner of the run child's (profiler.hpp) and
// of Kineto's IActivityProfiler: a factory registered by name (program_registry.cpp), then a
// session that is configured from its own options block, started, asked to hand its records
// over, stopped and finished; what goes wrong is a note in the stream, never an exception.
// The library hosts the sessions and names none of them:
//
//   for (auto& s : sessions) if (s->configure(options, tags)) active.push_back(s); // before the header
//   for (auto& s : active) s->start(host);                                           // after it
//   every flush interval: for (auto& s : active) s->flush(flush_kind::periodic);
//   at exit: stop() each, then write_results(), flush(last) and close() as below.
//
// Sessions start in registry order (cupti first: it holds CUPTI's one subscription, which
// the others share through cupti::callback_hub) and end in reverse order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/profile_options.hpp"
#include "model/profile_stream.hpp"

namespace speedlab::profiling {

// What the library offers a session: its process's stream and a way to ask for a flush.
class program_host {
public:
  virtual ~program_host() = default;
  virtual std::uint32_t pid() const = 0;
  virtual std::uint64_t start_ns() const = 0; // steady clock, when the stream was opened
  // A note chunk: a problem or something the reader must know (not in a forked child).
  virtual void note(const std::string& text) = 0;
  virtual void write(profile::chunk_type type, const nlohmann::json& payload) = 0;
  virtual void write_bytes(profile::chunk_type type, std::string_view payload) = 0;
  // From a CUPTI callback (never blocks): the flush thread flushes at once.
  virtual void request_flush() noexcept = 0;
};

enum class flush_kind {
  periodic, // the flush thread's, every flush interval or when asked: the session may hold back
  now,      // speedlab_inject_flush(): everything so far
  last,     // the process ends (exit, or a signal or _exit the flush thread serves)
};

// How the process ends: its exit, or a signal or _exit served by the flush thread, where
// every wait is bounded (the stopped thread may hold the driver's locks).
struct program_end {
  std::string how = "exit"; // "exit", "SIGTERM", "_exit(3)"
  bool terminated = false;
  std::uint32_t wait_ms = 0; // terminated: the budget for the GPU's work
};

// One backend in one profiled process. The host serializes flush(), tick() and the ending
// calls under one lock; CUPTI callbacks never take it.
class program_session {
public:
  virtual ~program_session() = default;
  // Before the stream's header: reads this backend's part of the options and adds the
  // process's tags; false when the backend was not asked for (the session is dropped).
  virtual bool configure(const profile::parsed_injection_options& options,
                         std::map<std::string, std::string>& tags) = 0;
  // After the header, in registry order.
  virtual void start(program_host& host) = 0;
  // Hand the records over to the stream.
  virtual void flush(flush_kind) {}
  // The flush thread wakes for tick() in at most this many milliseconds (UINT64_MAX: never).
  virtual std::uint64_t until_tick_ms() { return UINT64_MAX; }
  virtual void tick() {}
  // The process ends: the GPU's work is waited for (bounded when end.terminated).
  virtual void stop(const program_end&) {}
  // At a normal exit, in reverse order, before the last flush: passes read once per process.
  virtual void write_results() {}
  // After the last flush, in reverse order: what the stream should say about the session.
  virtual void close(const program_end&) {}
  // Records lost so far (the closing chunk's count).
  virtual std::uint64_t dropped() const { return 0; }
  // The program switches the session's per-call capture off or on (speedlab_inject_capture:
  // a region left out, or the capture's cost measured inside one process); false when the
  // session has no such capture or cannot switch it now. Any thread, at any time.
  virtual bool set_capture(bool on) {
    (void)on;
    return false;
  }
};

using program_factory = std::function<std::unique_ptr<program_session>()>;
struct program_backend {
  std::string name;
  program_factory make;
};
// The explicit list of program backends, in start order (program_registry.cpp; compiled into
// the injection library only).
const std::vector<program_backend>& program_registry();

} // namespace speedlab::profiling
