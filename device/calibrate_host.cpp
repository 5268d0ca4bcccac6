// Host memory bandwidth: a STREAM-like triad a[i] = b[i] + s * c[i] over arrays far larger
// than the last-level cache, on every logical core and on one; bytes counted as STREAM
// does (two reads + one write per element, write-allocate not counted).
#include <algorithm>
#include <barrier>
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "model/device_keys.hpp"
#include "device/calibrate.hpp"
#include "device/host_info.hpp"

namespace speedlab::device::detail {

namespace {

using clock_type = std::chrono::steady_clock;

// A team of threads that run one triad pass together; the caller times between barriers.
class triad_team {
public:
  triad_team(std::size_t n, unsigned threads)
      : m_n(n), m_threads(threads), m_a(new double[n]), m_b(new double[n]), m_c(new double[n]),
        m_sync(static_cast<std::ptrdiff_t>(threads)) {
    for (unsigned t = 1; t < m_threads; ++t) m_workers.emplace_back([this, t] { work(t); });
    run(true); // first touch by the thread that will use each chunk
  }
  ~triad_team() {
    m_stop = true;
    m_sync.arrive_and_wait(); // release workers into the stop check
    for (auto& w : m_workers) w.join();
  }
  triad_team(const triad_team&) = delete;
  triad_team& operator=(const triad_team&) = delete;

  // One pass on every thread; returns seconds.
  double run(bool init = false) {
    m_init = init;
    m_sync.arrive_and_wait(); // start
    const auto t0 = clock_type::now();
    chunk(0);
    m_sync.arrive_and_wait(); // end
    return std::chrono::duration<double>(clock_type::now() - t0).count();
  }
  double bytes() const { return 3.0 * sizeof(double) * static_cast<double>(m_n); }
  double checksum() const { return m_a[m_n / 2]; }

private:
  void work(unsigned t) {
    for (;;) {
      m_sync.arrive_and_wait();
      if (m_stop) return;
      chunk(t);
      m_sync.arrive_and_wait();
    }
  }
  void chunk(unsigned t) {
    const std::size_t lo = m_n * t / m_threads, hi = m_n * (t + 1) / m_threads;
    double* __restrict a = m_a.get();
    const double* __restrict b = m_b.get();
    const double* __restrict c = m_c.get();
    if (m_init) {
      for (std::size_t i = lo; i < hi; ++i) {
        m_a[i] = 0;
        m_b[i] = 1.0;
        m_c[i] = 2.0;
      }
      return;
    }
    const double s = 3.0;
    for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
  }

  std::size_t m_n;
  unsigned m_threads;
  std::unique_ptr<double[]> m_a, m_b, m_c;
  std::barrier<> m_sync;
  std::vector<std::thread> m_workers;
  bool m_init = false; // published to the workers by the barrier
  bool m_stop = false;
};

double best_gbps(std::size_t n, unsigned threads, int reps, double& checksum) {
  triad_team team(n, threads);
  team.run(); // warm-up
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const double s = team.run();
    if (s > 0) best = std::max(best, team.bytes() / s / 1e9);
  }
  checksum += team.checksum();
  return best;
}

} // namespace

void calibrate_host(const calibrate_options& o, speedlab::device_model& m) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // Each array at least 4x the last-level cache, capped by 1/8 of physical memory.
  std::size_t bytes = o.quick ? (64u << 20) : (256u << 20);
  bytes = std::max(bytes, 4 * llc_bytes());
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) bytes = std::min(bytes, static_cast<std::size_t>(pages) * page / 24);
  bytes = std::min<std::size_t>(bytes, std::size_t(1) << 30);
  const std::size_t n = bytes / sizeof(double);
  const int reps = o.quick ? 5 : 20;
  double checksum = 0;

  const double all = best_gbps(n, threads, reps, checksum);
  const double one = best_gbps(n, 1, o.quick ? 3 : 10, checksum);
  const std::string mode = o.quick ? "quick" : "full";
  const std::string arrays = fmt::format("3 arrays of {} MiB", bytes >> 20);
  set_measured(m.host, keys::memory_bw,
                         {all, "GB/s", true, fmt::format("calibrate ({}): triad on {} threads, {}, best of {}", mode, threads, arrays, reps)});
  set_measured(m.host, keys::memory_bw_1thread,
                         {one, "GB/s", true, fmt::format("calibrate ({}): triad on 1 thread, {}", mode, arrays)});
  m.host[keys::cores] = {double(threads), "cores", true, "calibrate: std::thread::hardware_concurrency"};
  if (o.log) {
    o.log(fmt::format("host memory bandwidth (triad, {} threads): {:.1f} GB/s", threads, all));
    o.log(fmt::format("host memory bandwidth (triad, 1 thread):  {:.1f} GB/s", one));
  }
  if (checksum != checksum) m.properties["calibration_errors"] += "host triad produced NaN; ";
}

} // namespace speedlab::device::detail
