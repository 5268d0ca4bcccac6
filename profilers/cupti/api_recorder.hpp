// API calls recorded from CUPTI's callback API instead of RUNTIME/DRIVER activity records
// (injection_options::api_records callback, issue 29: the activity path cost 144 us a step on a
// PyTorch loop). Each launching thread appends to its own buffer without a lock; the flush
// thread drains every buffer into trace::api_record, the records the activity path made, so
// the stream, the reader and the analysis see no difference.
//
//   api_recorder rec(pid);
//   // in the callback, on the calling thread:
//   if (rec.enter(driver, cb->correlationId)) *cb->correlationData = now();  // entry
//   rec.exit(driver, cbid, cb->correlationId, *cb->correlationData, now(), status);
//   // on the flush thread (one drainer at a time):
//   std::vector<trace::api_record> calls = rec.drain();
//
// Nesting: a runtime call (cudaLaunchKernel) calls the driver (cuLaunchKernel); only the
// outer call is recorded, one record per runtime launch instead of two. A driver call with
// no runtime call around it (CuPy, Numba, NCCL launch through the driver) is recorded.
// Each thread keeps its open calls by correlation id, so an exit is recorded only after its
// own entry was seen.
//
// Launch calls in windows (launch_mode::sampled): the flush thread switches
// the launch ids' callbacks on and off, then calls switched(). A call in flight at a switch
// loses its entry or its exit: an exit without its entry is not recorded, and an open
// switched call from before a switch is dropped at the thread's next call (its exit will not
// come), so the calls after it are not taken for nested ones. Neither counts as lost.
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
  // `switched`: the call's id is switched on and off (launch calls in windows).
  bool enter(bool driver, std::uint32_t correlation, bool switched = false) noexcept {
    thread_buffer* t = mine();
    if (!t) return false;
    t->drop_stale(m_epoch.load(std::memory_order_relaxed));
    if (driver && t->open_runtime > 0) {
      bump(t->nested); // one writer: no locked add on the hot path
      return false;
    }
    return t->open(correlation, driver, switched);
  }

  // A call's exit: one record unless it is a driver call inside a runtime call. An exit whose
  // entry was not seen (recording began during the call, or its id was switched on during
  // it), or start == 0, keeps no record.
  void exit(bool driver, std::uint32_t cbid, std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
            std::int32_t status, bool switched = false) noexcept {
    thread_buffer* t = mine();
    if (!t) return;
    if (!t->close(correlation, driver)) {
      if (driver && t->open_runtime > 0) return; // nested in a recorded runtime call
      if (t->overflow > 0) {
        --t->overflow; // a call deeper than the thread's stack: its entry was not kept
        return;
      }
      bump(switched ? t->switched_unseen : t->unseen);
      return;
    }
    if (start == 0) {
      bump(t->unseen);
      return;
    }
    t->push({start, end, t->tid, correlation, cbid, status, driver});
  }

  // The first call of a switched id (a launch) seen: its start (0 before one), which the
  // start-up window is timed from (launch_sampler.hpp). One relaxed load a call after it.
  void saw_switched(std::uint64_t start) noexcept {
    if (m_first_switched.load(std::memory_order_relaxed) != 0) return;
    std::uint64_t none = 0;
    m_first_switched.compare_exchange_strong(none, start, std::memory_order_relaxed);
  }
  std::uint64_t first_switched_ns() const noexcept { return m_first_switched.load(std::memory_order_relaxed); }

  // After the launch ids' callbacks were switched on or off (from the switching thread):
  // a switched call still open from before is one whose exit will not come.
  void switched() noexcept { m_epoch.fetch_add(1, std::memory_order_relaxed); }

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
        m_cut_of_ended += t.switched_unseen.load();
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
  // no memory for a new block. None in a normal run. Calls cut by a switch are not counted.
  std::uint64_t not_kept() {
    std::lock_guard lock(m_mutex);
    std::uint64_t n = m_not_kept_of_ended;
    for (const auto& t : m_threads) n += t->unseen.load() + t->lost.load();
    return n;
  }

  // Launch calls cut by a switch of their callbacks (entry or exit not seen): a few per window.
  std::uint64_t cut_by_switch() {
    std::lock_guard lock(m_mutex);
    std::uint64_t n = m_cut_of_ended;
    for (const auto& t : m_threads) n += t->switched_unseen.load();
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
    // The open calls, innermost last (the writer's): a runtime call may nest in another.
    bool open(std::uint32_t correlation, bool driver, bool switched) noexcept {
      if (open_n == calls.size()) {
        ++overflow;
        return false;
      }
      calls[open_n++] = {correlation, epoch, driver, switched};
      if (!driver) ++open_runtime;
      return true;
    }
    // The innermost open call closed if it is this one.
    bool close(std::uint32_t correlation, bool driver) noexcept {
      if (open_n == 0 || calls[open_n - 1].correlation != correlation || calls[open_n - 1].driver != driver) return false;
      --open_n;
      if (!driver) --open_runtime;
      return true;
    }
    // At the first call after a switch: the switched calls opened before it are closed unseen.
    void drop_stale(std::uint32_t now) noexcept {
      if (epoch == now) return;
      epoch = now;
      std::size_t kept = 0;
      for (std::size_t i = 0; i < open_n; ++i) {
        if (calls[i].switched && calls[i].epoch != now) {
          if (!calls[i].driver) --open_runtime;
          bump(switched_unseen);
        } else {
          calls[kept++] = calls[i];
        }
      }
      open_n = kept;
    }

    std::uint32_t tid;
    struct open_call {
      std::uint32_t correlation, epoch;
      bool driver, switched;
    };
    std::array<open_call, 16> calls{};
    std::size_t open_n = 0;
    int open_runtime = 0;      // runtime calls among them
    std::uint32_t epoch = 0;   // the switch count this thread last saw
    std::uint64_t overflow = 0; // entries past the stack, their exits still to come
    // Written by the thread alone, read by the drainer's counts.
    std::atomic<std::uint64_t> unseen{0}, lost{0}, nested{0}, switched_unseen{0};
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
  std::uint64_t m_not_kept_of_ended = 0, m_nested_of_ended = 0, m_cut_of_ended = 0;
  std::atomic<std::uint32_t> m_epoch{0}; // switches of the launch ids' callbacks so far
  std::atomic<std::uint64_t> m_first_switched{0};
};

} // namespace speedlab::inject
