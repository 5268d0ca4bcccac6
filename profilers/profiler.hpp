// Profiler backends behind one interface: a profiler is chosen by name from the
// registry, checked for availability, and creates one session per measured point.
// The runner calls start() before the first measured repetition, marks every
// repetition, calls stop() after the last, then collect() once. A session whose own_pass()
// is true (hardware counters: kernels are replayed) never sees the measured repetitions:
// the runner gives it one repetition of its own after the others' sessions are collected;
// a backend whose own_process() is true (source lines) gets that pass in another process.
// Sessions never throw from stop()/collect(): problems go to messages().
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/counters.hpp"
#include "model/named.hpp"
#include "model/result_sections.hpp"
#include "model/source_view.hpp"
#include "model/trace.hpp"
#include "profilers/options_section.hpp"

namespace speedlab::profiling {

// Each backend's own options block, keyed by the backend: a type with a `block_key` in the
// backend's folder (cupti_options, counters_options), filled by its suite section
// (options_section.hpp) and the command line, read by its sessions. A block never set reads
// as its type's defaults.
//
//   o.block<cupti_options>().buffer_bytes = 2u << 20;   // its suite section
//   const cupti_options& c = o.get<cupti_options>();    // its session
class profiler_options {
public:
  template <class T>
  const T& get() const {
    static const T defaults;
    auto it = m_blocks.find(T::block_key);
    return it == m_blocks.end() ? defaults : *std::any_cast<T>(&it->second);
  }
  template <class T>
  T& block() {
    auto [it, added] = m_blocks.try_emplace(T::block_key);
    if (added) it->second = T{};
    return *std::any_cast<T>(&it->second);
  }

private:
  std::map<std::string, std::any> m_blocks;
};

// CPU time of one repetition: the whole process and the thread that ran the phases,
// so multithreaded variants show how busy their workers were.
struct host_usage {
  std::uint64_t wall_ns = 0;
  std::uint64_t process_cpu_ns = 0; // this process's and its helper processes' (helper_cpu_ns)
  std::uint64_t thread_cpu_ns = 0;
  std::uint64_t helper_cpu_ns = 0; // the helper processes' share (a Python variant's worker)
};

// Processes doing a point's work beside this one (a Python variant's worker, spawned by the
// variant's run): while one is registered, the host backend counts its CPU time (user +
// system of all its threads, and of its children it waited for) with this process's, so a
// point's "cores busy" covers the work wherever it ran. Thread-safe.
void add_helper_process(int pid);
void remove_helper_process(int pid);
std::vector<int> helper_processes();

struct profile_data {
  trace::device_trace device;
  std::vector<host_usage> host; // one per measured repetition (host backend)
  result_sections sections;     // a backend's own results (counters, source): a section each
  std::vector<std::string> messages;
};

class session {
public:
  virtual ~session() = default;
  virtual void start() = 0;
  virtual void repetition_begin() {}
  virtual void repetition_end() {}
  virtual void stop() = 0;
  virtual void collect(profile_data& out) = 0;
  // True: run in a pass of its own (one unmeasured repetition), apart from the timed ones.
  virtual bool own_pass() const { return false; }
  // Repetitions an own pass needs (the source backend: one sampled, one with SASS metrics);
  // repetition_end() follows each of them.
  virtual std::size_t pass_repetitions() const { return 1; }
};

// name() and description(): model/named.hpp.
class profiler : public named {
public:
  using named::named;
  virtual ~profiler() = default;
  // Empty when usable here, else why not (stated once by the runner, never fatal).
  virtual std::string unavailable_reason() const { return {}; }
  // True: its sessions run in a process of their own, after the point's, created before the
  // variant's setup (CUPTI shows a module's code only to a subscriber present when it loads,
  // and one subscriber per process leaves no room beside the cupti backend's). The runner
  // then gives the session one warm-up and one repetition of its own (own_pass).
  virtual bool own_process() const { return false; }
  virtual std::unique_ptr<session> create_session(const profiler_options& options) = 0;
};

using profiler_factory = std::function<std::unique_ptr<profiler>()>;

// What the host knows of a backend by its name, in every build: the host iterates these and
// names no backend itself.
struct backend_entry {
  profiler_factory make;                     // null: this build left the backend out
  const char* not_built = "";                // then why
  const options_section* options = nullptr;  // its suite section (named after it) and notes
  bool first_round_only = false;             // reads each kernel once per point: later rounds leave it out
  bool traces_device = false;                // its session records the device trace (point_tracing.hpp)
};

// Registry keyed by name: the explicit list in registry.cpp (a new backend is one folder
// with a make_<name>_profiler() factory, and maybe an options section, plus one line there).
const std::map<std::string, backend_entry>& profiler_registry();
// A backend beside the explicit list, by name (a test's, or one built outside profilers/):
// the same entry as a line there; false when the name is taken. Call it before the run
// starts (registration is not synchronized).
bool register_backend(const std::string& name, backend_entry entry);
// nullptr for an unknown name.
const backend_entry* find_backend(const std::string& name);
std::unique_ptr<profiler> make_profiler(const std::string& name); // nullptr if unknown or not built
std::vector<std::string> profiler_names();                        // the backends built in
// Non-empty for a backend speedlab has but this build left out (cupti without a CUDA
// toolkit): why. Suites name it freely; such a build runs without it, with a note.
std::string profiler_not_built_reason(const std::string& name);
// Empty when the NVIDIA driver (libcuda.so.1) loads, else why not, then "; " and `then` (what
// it means for the backend) when given. Cheap and fork-safe: it never initializes CUDA, so
// backends may call it from unavailable_reason().
std::string no_driver_reason(std::string_view then = {});

} // namespace speedlab::profiling
