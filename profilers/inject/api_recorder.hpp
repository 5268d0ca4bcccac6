// API calls recorded from CUPTI's callback API instead of RUNTIME/DRIVER activity records
// (SPEEDLAB_PROFILE_API_SOURCE=callback, issue 29: the activity path cost 144 us a step on a
// PyTorch loop). Each launching thread appends to its own buffer without a lock; the flush
// thread drains every buffer into trace::api_record, the records the activity path made, so
// the stream, the reader and the analysis see no difference.
//
//   api_recorder rec(pid);
//   // in the callback, on the calling thread:
//   if (rec.enter(driver)) *cb->correlationData = now();          // entry
//   rec.exit(driver, cbid, cb->correlationId, *cb->correlationData, now(), status);
//   // on the flush thread (one drainer at a time):
//   std::vector<trace::api_record> calls = rec.drain();
//
// Nesting: a runtime call (cudaLaunchKernel) calls the driver (cuLaunchKernel); only the
// outer call is recorded, one record per runtime launch instead of two. A driver call with
// no runtime call around it (CuPy, Numba, NCCL launch through the driver) is recorded.
// No CUPTI here: the unit tests drive it with a fake sequence of callbacks.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "model/trace.hpp"

namespace speedlab::inject {

class api_recorder {
public:
  explicit api_recorder(std::uint32_t pid) : m_pid(pid) {}
  api_recorder(const api_recorder&) = delete;
  api_recorder& operator=(const api_recorder&) = delete;
  ~api_recorder() = default; // a buffer goes with the last of its recorder and its thread

  // A call's entry on the calling thread: true when its exit will be recorded (the caller
  // takes the start time only then: a driver call inside a runtime call costs no clock read).
  bool enter(bool driver) noexcept {
    thread_buffer* t = mine();
    if (!t) return false;
    if (driver) {
      if (t->runtime_depth == 0) return true;
      bump(t->nested); // one writer: no locked add on the hot path
      return false;
    }
    ++t->runtime_depth;
    return true;
  }

  // A call's exit: one record unless it is a driver call inside a runtime call. start == 0
  // (the entry was not seen: recording began during the call) keeps no record.
  void exit(bool driver, std::uint32_t cbid, std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
            std::int32_t status) noexcept {
    thread_buffer* t = mine();
    if (!t) return;
    if (!driver) {
      if (t->runtime_depth > 0) --t->runtime_depth;
    } else if (t->runtime_depth > 0) {
      return;
    }
    if (start == 0) {
      bump(t->unseen);
      return;
    }
    t->push({start, end, t->tid, correlation, cbid, status, driver});
  }

  // Every record appended since the last drain, thread by thread (finalize sorts them). One
  // drainer at a time (the injector's flush mutex); writers keep writing meanwhile.
  std::vector<trace::api_record> drain() {
    std::vector<trace::api_record> out;
    std::lock_guard lock(m_mutex);
    for (auto it = m_threads.begin(); it != m_threads.end();) {
      thread_buffer& t = **it;
      t.drain_into(out, m_pid);
      // A thread that ended and is drained: its buffer goes (its counts kept here).
      if (t.ended.load(std::memory_order_acquire) && t.empty()) {
        m_not_kept_of_ended += t.unseen.load() + t.lost.load();
        m_nested_of_ended += t.nested.load();
        it = m_threads.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }

  // Driver calls made inside a recorded runtime call, so not recorded (the callback API
  // calls back for them; CUPTI's activity path writes no record of them either).
  std::uint64_t nested_driver_calls() {
    std::lock_guard lock(m_mutex);
    std::uint64_t n = m_nested_of_ended;
    for (const auto& t : m_threads) n += t->nested.load(std::memory_order_relaxed);
    return n;
  }

  // Calls not kept so far: an exit without its entry (recording began during the call) or
  // no memory for a new block. None in a normal run.
  std::uint64_t not_kept() {
    std::lock_guard lock(m_mutex);
    std::uint64_t n = m_not_kept_of_ended;
    for (const auto& t : m_threads) n += t->unseen.load() + t->lost.load();
    return n;
  }

  static constexpr std::size_t block_records = 1024;

private:
  struct event {
    std::uint64_t start, end;
    std::uint32_t thread, correlation, cbid;
    std::int32_t status;
    bool driver;
  };
  struct block {
    std::array<event, block_records> events;
    std::atomic<std::size_t> count{0};
    std::atomic<block*> next{nullptr};
  };

  // One writer (its thread) and one reader (the drainer): the writer fills a block and then
  // publishes the count (release), links a new block once this one is full; the reader frees
  // a block only when it is full, read and linked, so the writer is past it.
  struct thread_buffer {
    thread_buffer() : head(new block), tail(head), tid(static_cast<std::uint32_t>(::syscall(SYS_gettid))) {}
    void push(const event& e) noexcept {
      std::size_t n = tail->count.load(std::memory_order_relaxed);
      if (n == block_records) {
        block* b = new (std::nothrow) block;
        if (!b) {
          bump(lost);
          return;
        }
        tail->next.store(b, std::memory_order_release);
        tail = b;
        n = 0;
      }
      tail->events[n] = e;
      tail->count.store(n + 1, std::memory_order_release);
    }
    void drain_into(std::vector<trace::api_record>& out, std::uint32_t pid) {
      for (;;) {
        const std::size_t n = head->count.load(std::memory_order_acquire);
        for (; read < n; ++read) {
          const event& e = head->events[read];
          trace::api_record r;
          r.start = e.start;
          r.end = e.end;
          r.process = pid;
          r.thread = e.thread;
          r.correlation = e.correlation;
          r.callback_id = e.cbid;
          r.driver = e.driver;
          r.return_value = e.status;
          out.push_back(std::move(r));
        }
        block* next = n == block_records ? head->next.load(std::memory_order_acquire) : nullptr;
        if (!next) return;
        delete head;
        head = next;
        read = 0;
      }
    }
    bool empty() const { return read == head->count.load(std::memory_order_acquire) && !head->next.load(); }
    ~thread_buffer() {
      while (head) {
        block* next = head->next.load();
        delete head;
        head = next;
      }
    }
    thread_buffer(const thread_buffer&) = delete;
    thread_buffer& operator=(const thread_buffer&) = delete;

    block* head;        // the reader's
    std::size_t read = 0;
    block* tail;        // the writer's
    std::uint32_t tid;
    int runtime_depth = 0;
    // Written by the thread alone, read by the drainer's counts.
    std::atomic<std::uint64_t> unseen{0}, lost{0}, nested{0};
    std::atomic<bool> ended{false};
  };

  // The calling thread's buffer, registered at its first call (the only lock a writer ever
  // takes). Tied to this recorder: a test's second recorder gets new buffers.
  thread_buffer* mine() noexcept {
    struct slot {
      const api_recorder* owner = nullptr;
      std::uint64_t serial = 0;
      std::shared_ptr<thread_buffer> buffer;
      ~slot() {
        if (buffer) buffer->ended.store(true, std::memory_order_release);
      }
    };
    thread_local slot s;
    if (s.owner == this && s.serial == m_serial) return s.buffer.get();
    try {
      auto b = std::make_shared<thread_buffer>();
      {
        std::lock_guard lock(m_mutex);
        m_threads.push_back(b);
      }
      if (s.buffer) s.buffer->ended.store(true, std::memory_order_release);
      s.owner = this;
      s.serial = m_serial;
      s.buffer = std::move(b);
      return s.buffer.get();
    } catch (...) {
      return nullptr;
    }
  }

  static void bump(std::atomic<std::uint64_t>& n) noexcept {
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  static std::uint64_t next_serial() {
    static std::atomic<std::uint64_t> n{0};
    return ++n;
  }

  std::uint32_t m_pid;
  const std::uint64_t m_serial = next_serial(); // a new recorder at a freed one's address
  std::mutex m_mutex;                           // guards m_threads
  std::vector<std::shared_ptr<thread_buffer>> m_threads;
  std::uint64_t m_not_kept_of_ended = 0, m_nested_of_ended = 0;
};

} // namespace speedlab::inject
