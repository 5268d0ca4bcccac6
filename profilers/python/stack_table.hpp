// Interning of captured Python stacks (python_interpreter.hpp's frame_ref chains): one id
// per distinct frame (code object, instruction offset) and one per distinct chain of them,
// so a CUDA call carries one number and no string. Called from CUPTI callbacks on many
// threads at once.
//
//   stack_table table;
//   std::uint32_t id = table.intern(frames, n);   // in the callback: 0 only for n == 0 or no memory
//   table.take_new_stacks(out);                   // the flush thread: chains first seen since
//   table.take_new_frames(keys);                  // the resolver: frames first seen since
//
// The hot path: a chain seen before on this thread is found in a per-thread cache without a
// lock or an allocation (one hash over the chain, one compare). A chain not in the cache
// takes the table's mutex (no Python call, no GIL, nothing else held under it).
//
// A code object's address may be reused once it is freed. A frame whose code object is
// resolved keeps it alive (the resolver holds a strong reference); one freed before that
// is forgotten with forget_code() (3.12+: a code watcher's destroy event), so a new code object
// at the same address gets new frame ids: forget_code() moves an epoch that invalidates
// every thread's cache.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "profilers/python/python_interpreter.hpp"

namespace speedlab::profiling::python {

struct frame_key {
  std::uint32_t id = 0;
  frame_ref frame;
};

struct stack_chain {
  std::uint32_t id = 0;
  std::vector<std::uint32_t> frames; // frame ids, OUTERMOST first
};

class stack_table {
public:
  stack_table();
  stack_table(const stack_table&) = delete;
  stack_table& operator=(const stack_table&) = delete;

  // The chain's id (ids from 1), innermost frame first in `frames`. 0: n == 0, or no memory.
  std::uint32_t intern(const frame_ref* frames, std::size_t n) noexcept;

  // Chains first seen since the last call (the flush thread).
  void take_new_stacks(std::vector<stack_chain>& out);
  // Frames first seen since the last call (the resolver).
  void take_new_frames(std::vector<frame_key>& out);
  // A code object about to be freed: its frames are never matched again.
  void forget_code(const void* code);

  std::size_t stack_count() const;
  std::size_t frame_count() const;

private:
  struct stored_stack {
    std::uint64_t hash = 0;
    std::uint32_t id = 0;
    std::vector<frame_ref> raw; // innermost first, as captured
  };
  struct ref_hash {
    std::size_t operator()(const frame_ref& f) const noexcept;
  };
  struct ids_hash {
    std::size_t operator()(const std::vector<std::uint32_t>& v) const noexcept;
  };

  const stored_stack* insert(const frame_ref* frames, std::size_t n, std::uint64_t hash);
  const stored_stack* cached(const frame_ref* frames, std::size_t n, std::uint64_t hash) const noexcept;
  void remember(const stored_stack* s, std::uint64_t epoch) const noexcept;

  mutable std::mutex m_mutex;
  std::unordered_map<frame_ref, std::uint32_t, ref_hash> m_frame_ids;
  std::unordered_map<std::vector<std::uint32_t>, const stored_stack*, ids_hash> m_stack_ids;
  std::deque<stored_stack> m_stacks; // stable addresses: the per-thread caches point into it
  std::deque<frame_key> m_frames;
  std::vector<std::vector<std::uint32_t>> m_chains; // by stack id - 1, outermost first
  std::size_t m_stacks_taken = 0, m_frames_taken = 0;
  std::atomic<std::uint64_t> m_epoch{0};
  const std::uint64_t m_serial; // a per-thread cache is this table's only
};

// How a call's stack was found (the stream's "how").
enum class call_how : std::uint8_t {
  own = 0,          // the calling thread's own frames
  other_thread = 1, // the thread had none (PyTorch's autograd engine threads, a C thread):
                    // the most recent stack captured on any thread that had frames
  unknown = 2,      // neither, or Python not running (before initialization, while finalizing)
};
struct call_stack {
  std::uint32_t stack = 0; // 0: none
  call_how how = call_how::unknown;
};

// One call's stack: the calling thread's frames captured into `scratch` (at most `max`) and
// interned; without frames, `last` (the latest own stack of any thread), which an own
// capture updates. No GIL, no allocation unless the chain is new.
call_stack attribute_call(const interpreter& py, stack_table& table, frame_ref* scratch, std::size_t max,
                          std::atomic<std::uint32_t>& last) noexcept;

// A hash of the chain's code pointers and offsets (the per-thread cache's key).
std::uint64_t chain_hash(const frame_ref* frames, std::size_t n) noexcept;

} // namespace speedlab::profiling::python
