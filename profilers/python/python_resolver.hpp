// Turns the interned frames (stack_table.hpp: code object, instruction offset) into file,
// qualified name, line and source text, OFF the capture path: with the GIL, on a thread of
// its own, never the injection library's flush thread (PyGILState_Ensure once finalization
// has begun ends the calling thread, python/cpython Doc/c-api/init.rst).
//
//   resolver r(py, table, rule);
//   r.start_thread();                     // detached: polls the table, takes the GIL for new frames
//   auto done = r.take_resolved();        // the flush thread: no GIL; text read and folded here
//   auto rest = r.take_unresolved();      // the last flush: what was never resolved
//
// The GIL is taken (PyGILState_Ensure/Release) only when Py_IsInitialized() and not
// finalizing, and no lock of ours is held while waiting for it (a Python thread holding the
// GIL may be waiting on one: a CUPTI callback interning a stack). Python is never called
// with a lock of ours held either (a decref may run a code watcher, which takes them).
// At its first GIL acquisition the resolver reads sys's prefixes (the folding rule,
// user_frames.hpp) and registers a Python atexit callback that resolves everything left
// before finalization, after which the resolver is done and never takes the GIL again.
//
// Code objects: each is kept alive once resolved (Py_IncRef, never released), so its
// address is not reused while its frames are interned. One freed between its capture and
// its resolution (up to the polling interval; code made by exec() or torch.compile and
// dropped at once): on 3.12+ a code watcher (PyCode_AddWatcher) resolves it on its destroy
// event, while it is still valid, and has the table forget it; on 3.10 and 3.11 there is no
// such event: its frames are read from freed memory (a wrong or empty name, or a crash if
// that memory was returned to the system, which CPython's small-object allocator rarely
// does) -- the limit of this design there.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "profilers/python/python_interpreter.hpp"
#include "profilers/python/stack_table.hpp"
#include "profilers/python/user_frames.hpp"

namespace speedlab::profiling::python {

struct resolved_frame {
  std::uint32_t id = 0;
  std::string file, function, text; // function: co_qualname (3.11+), else co_name
  std::int32_t line = 0;            // 0: unknown
  bool user = false;
};

class resolver {
public:
  // `extra`: the options' library and user prefixes, added to those read from sys.
  resolver(const interpreter& py, stack_table& table, fold_rule extra, std::uint32_t interval_ms = 100);
  resolver(const resolver&) = delete;
  resolver& operator=(const resolver&) = delete;

  // The polling thread (detached; the resolver must live to the end of the process).
  void start_thread();
  // Every frame interned so far, resolved now with the GIL (taken here); false when Python
  // no longer allows it (finalizing, not initialized, or the resolver is done).
  bool resolve_now();
  // Frames resolved since the last call, their source text read and folded (no GIL).
  std::vector<resolved_frame> take_resolved();
  // Every frame never resolved: file "", the code object's address as function.
  std::vector<resolved_frame> take_unresolved();
  // The folding rule once its prefixes were read (first GIL acquisition), else nullopt.
  std::optional<fold_rule> rule() const;
  bool done() const { return m_done.load(std::memory_order_acquire); }
  // Done, or Python finalizing or gone after it ran: the polling thread ends.
  bool python_over() const;
  std::uint32_t interval_ms() const { return m_interval_ms; }
  // What went wrong so far (atexit or the watcher not registered), each said once.
  std::vector<std::string> take_messages();

  // With the GIL held (the atexit callback, the code watcher): see python_resolver.cpp.
  void resolve_with_gil();
  void code_destroyed(const void* code);
  void finish_at_exit();

private:
  struct code_info {
    std::string file, function;
  };
  struct raw_frame {
    frame_key key;
    code_info where;
    std::int32_t line = 0;
  };

  bool python_allows() const;
  bool nothing_pending() const;
  void first_acquisition();
  void pull_new_frames(); // the table's new frames into m_pending (takes m_mutex)
  std::vector<frame_key> take_pending(const void* only_code);
  const code_info& describe(const void* code);
  std::string text_of(const std::string& file, std::int32_t line);
  resolved_frame finished(const raw_frame& r, const fold_rule& rule);

  const interpreter& m_py;
  stack_table& m_table;
  const std::uint32_t m_interval_ms;
  std::atomic<bool> m_done{false}, m_thread_started{false}, m_first_done{false};
  std::atomic<std::size_t> m_seen{0}; // frames pulled from the table so far

  // Under the GIL only (the resolving thread, atexit, the watcher hold it).
  std::unordered_map<const void*, code_info> m_codes;

  mutable std::mutex m_mutex; // what the flush thread reads; never held while waiting for the GIL
  std::vector<frame_key> m_pending;
  std::unordered_set<const void*> m_pending_codes;
  std::vector<raw_frame> m_raw;
  std::optional<fold_rule> m_rule;
  fold_rule m_extra;
  std::vector<std::string> m_messages;
  std::map<std::string, std::vector<std::string>> m_sources; // file -> lines (flush thread only)
};

} // namespace speedlab::profiling::python
