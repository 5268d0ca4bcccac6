// One-off host parallelism (filling inputs, validation references): contiguous chunks per
// thread (static) or chunks taken from a shared counter (dynamic, for uneven work), on
// threads started per call. The measured `threads` variants use worker_team.hpp instead.
// Each thread owns its partial results; callers merge them after the join.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace speedlab::parallel {

inline int default_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

// Runs body(thread_index, begin, end) on `threads` threads over [0, n) in contiguous
// chunks. Exceptions from any thread are rethrown on the caller after the join.
template <class Body>
void for_static(int threads, std::size_t n, Body&& body) {
  threads = std::max(1, threads);
  const std::size_t t = std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(n, 1));
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](std::size_t i) {
    const std::size_t begin = n * i / t, end = n * (i + 1) / t;
    try {
      body(i, begin, end);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  for (std::size_t i = 1; i < t; ++i) pool.emplace_back(run, i);
  run(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// Dynamic scheduling: threads take `grain`-sized chunks of [0, n) until none are left.
template <class Body>
void for_dynamic(int threads, std::size_t n, std::size_t grain, Body&& body) {
  threads = std::max(1, threads);
  grain = std::max<std::size_t>(grain, 1);
  std::atomic<std::size_t> next{0};
  for_static(threads, static_cast<std::size_t>(threads), [&](std::size_t thread, std::size_t, std::size_t) {
    for (;;) {
      const std::size_t begin = next.fetch_add(grain, std::memory_order_relaxed);
      if (begin >= n) break;
      body(thread, begin, std::min(n, begin + grain));
    }
  });
}

} // namespace speedlab::parallel
