// A team of host threads kept alive from setup to teardown, for `threads` variants whose
// repetition lasts a few milliseconds or less: starting 15 threads per call (what
// parallel::for_static does) costs a visible part of that. Work is handed out in chunks
// from a shared counter, so a thread that starts late or loses its core for a while
// (a busy or virtualized host) takes fewer chunks instead of delaying the end.
// Used by the transcendental and montecarlo plugins; a candidate for plugins/common.
//
//   speedlab::parallel::worker_team team(16);                          // in setup
//   team.run(n, 4096, [&](std::size_t chunk, std::size_t lo, std::size_t hi) { ... });
//
// run() covers [0, n) with chunks [chunk * grain, min(n, (chunk + 1) * grain)), the caller
// working too, and returns when all are done (rethrowing the first exception). Chunk
// indices, not threads, identify partial results, so merging them in chunk order gives
// the same answer whatever the schedule. Idle workers spin briefly (back-to-back
// repetitions start at once), then yield, then sleep on a futex (std::atomic::wait).
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
    m_stop = true;
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
    m_remaining.store(static_cast<std::uint32_t>(m_size - 1), std::memory_order_relaxed);
    m_generation.fetch_add(1, std::memory_order_release);
    m_generation.notify_all();
    work();
    for (std::uint32_t left; (left = m_remaining.load(std::memory_order_acquire)) != 0;) wait_change(m_remaining, left);
    if (m_error) std::rethrow_exception(m_error);
  }

private:
  // Spin briefly, then yield (so oversubscribed threads still make progress) for up to
  // ~2 ms, then sleep until the value changes.
  template <class T>
  static void wait_change(const std::atomic<T>& a, T old) {
    const auto start = std::chrono::steady_clock::now();
    for (unsigned spin = 1;; ++spin) {
      if (a.load(std::memory_order_acquire) != old) return;
      if (spin < 2048) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        continue;
      }
      std::this_thread::yield();
      if (spin % 64 == 0 && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(2)) break;
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

  void worker() {
    std::uint32_t seen = 0;
    for (;;) {
      wait_change(m_generation, seen);
      seen = m_generation.load(std::memory_order_acquire);
      if (m_stop) return;
      work();
      if (m_remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) m_remaining.notify_all();
    }
  }

  std::size_t m_size;
  std::vector<std::thread> m_workers;
  // Each on its own cache line: spinning readers must not share a line with the counter
  // every working thread increments.
  alignas(64) std::atomic<std::uint32_t> m_generation{0};
  alignas(64) std::atomic<std::uint32_t> m_remaining{0};
  alignas(64) std::atomic<std::size_t> m_next{0};
  alignas(64) void (*m_invoke)(void*, std::size_t, std::size_t, std::size_t) = nullptr;
  void* m_body = nullptr;
  std::size_t m_n = 0, m_grain = 1;
  bool m_stop = false; // written before a generation bump, read after it
  std::exception_ptr m_error;
  std::mutex m_error_mutex;
};

} // namespace speedlab::parallel
