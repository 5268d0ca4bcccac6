// A team of host threads kept alive from setup to teardown, for the `threads` variants:
// starting 15 threads per call (what parallel::for_static does) costs a visible part of a
// repetition of a few milliseconds. Work is handed out in chunks from a shared counter, so a
// thread that starts late or loses its core for a while (a busy or virtualized host) takes
// fewer chunks instead of delaying the end.
//
//   speedlab::parallel::worker_team team(16);                          // in setup
//   team.run(n, 4096, [&](std::size_t chunk, std::size_t lo, std::size_t hi) { ... });
//
// run() covers [0, n) with chunks [chunk * grain, min(n, (chunk + 1) * grain)), the caller
// working too, and returns when all are done (rethrowing the first exception). Chunk
// indices, not threads, identify partial results, so merging them in chunk order gives
// the same answer whatever the schedule.
//
// The caller never waits for a worker that has not started: a worker joins a run only while
// it is open, and the caller closes it once every chunk is taken, then waits for the workers
// that joined. So a worker that wakes late (waking a sleeping vCPU can take 100 us) costs
// nothing but its share of the work. Idle workers spin for 50 us (back-to-back repetitions
// start at once), then sleep on a futex (std::atomic::wait); they never yield-spin for long,
// since a busy waiting thread keeps the kernel from moving a preempted team member onto its
// CPU.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace speedlab::parallel {

class worker_team {
public:
  explicit worker_team(int threads) : m_size(static_cast<std::size_t>(std::max(1, threads))) {
    m_workers.reserve(m_size - 1);
    for (std::size_t i = 1; i < m_size; ++i) m_workers.emplace_back([this] { worker(); });
  }
  ~worker_team() {
    m_stop.store(true, std::memory_order_relaxed);
    m_generation.fetch_add(1, std::memory_order_release);
    m_generation.notify_all();
    for (std::thread& t : m_workers) t.join();
  }
  worker_team(const worker_team&) = delete;
  worker_team& operator=(const worker_team&) = delete;

  std::size_t size() const { return m_size; }

  template <class Body>
  void run(std::size_t n, std::size_t grain, Body&& body) {
    m_n = n;
    m_grain = std::max<std::size_t>(grain, 1);
    m_body = &body;
    m_invoke = [](void* b, std::size_t chunk, std::size_t lo, std::size_t hi) {
      (*static_cast<std::remove_reference_t<Body>*>(b))(chunk, lo, hi);
    };
    m_error = nullptr;
    m_next.store(0, std::memory_order_relaxed);
    const std::uint32_t generation = m_generation.load(std::memory_order_relaxed) + 1;
    m_run.store(std::uint64_t{generation} << 32, std::memory_order_release); // open, nobody joined
    m_generation.store(generation, std::memory_order_release);
    m_generation.notify_all();
    work();
    // Every chunk is taken: close the run, then wait for those who joined to finish theirs.
    std::uint64_t state = m_run.fetch_or(closed_bit, std::memory_order_acq_rel) | closed_bit;
    while (joined(state) != 0) {
      wait_change(m_run, state);
      state = m_run.load(std::memory_order_acquire);
    }
    if (m_error) std::rethrow_exception(m_error);
  }

private:
  // m_run: the run's generation (high 32 bits), closed flag, number of workers in it.
  static constexpr std::uint64_t closed_bit = std::uint64_t{1} << 31;
  static constexpr std::uint64_t joined_mask = closed_bit - 1;
  static std::uint64_t joined(std::uint64_t state) { return state & joined_mask; }

  // Spin for a short while, then sleep until the value changes.
  template <class T>
  static void wait_change(const std::atomic<T>& a, T old) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    for (unsigned spin = 1;; ++spin) {
      if (a.load(std::memory_order_acquire) != old) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (spin % 64 == 0 && std::chrono::steady_clock::now() > deadline) break;
    }
    while (a.load(std::memory_order_acquire) == old) a.wait(old, std::memory_order_acquire);
  }

  void work() {
    for (;;) {
      const std::size_t chunk = m_next.fetch_add(1, std::memory_order_relaxed);
      const std::size_t lo = chunk * m_grain;
      if (lo >= m_n) return;
      try {
        m_invoke(m_body, chunk, lo, std::min(m_n, lo + m_grain));
      } catch (...) {
        std::lock_guard lock(m_error_mutex);
        if (!m_error) m_error = std::current_exception();
      }
    }
  }

  // Joins the run of `generation` if it is still open.
  bool join(std::uint32_t generation) {
    std::uint64_t state = m_run.load(std::memory_order_acquire);
    for (;;) {
      if ((state >> 32) != generation || (state & closed_bit)) return false;
      if (m_run.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        return true;
    }
  }

  void leave() {
    const std::uint64_t before = m_run.fetch_sub(1, std::memory_order_acq_rel);
    if ((before & closed_bit) && joined(before) == 1) m_run.notify_all();
  }

  void worker() {
    std::uint32_t seen = 0;
    for (;;) {
      wait_change(m_generation, seen);
      seen = m_generation.load(std::memory_order_acquire);
      if (m_stop.load(std::memory_order_relaxed)) return;
      if (!join(seen)) continue; // woke after the run closed: nothing left to do
      work();
      leave();
    }
  }

  std::size_t m_size;
  std::vector<std::thread> m_workers;
  // Each on its own cache line: spinning readers must not share a line with the counter
  // every working thread increments.
  alignas(64) std::atomic<std::uint32_t> m_generation{0};
  alignas(64) std::atomic<std::uint64_t> m_run{0};
  alignas(64) std::atomic<std::size_t> m_next{0};
  alignas(64) void (*m_invoke)(void*, std::size_t, std::size_t, std::size_t) = nullptr;
  void* m_body = nullptr;
  std::size_t m_n = 0, m_grain = 1;
  std::atomic<bool> m_stop{false};
  std::exception_ptr m_error;
  std::mutex m_error_mutex;
};

} // namespace speedlab::parallel
