#include "app/process/machine_load.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <sys/resource.h>

namespace speedlab::app {

namespace {

std::uint64_t ns_of(const timeval& t) {
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(t.tv_usec) * 1000ull;
}

// This process's CPU time (all threads) and its reaped children's (with their reaped
// descendants: getrusage(2)).
std::uint64_t own_cpu_ns() {
  std::uint64_t ns = 0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    if (::getrusage(who, &u) == 0) ns += ns_of(u.ru_utime) + ns_of(u.ru_stime);
  }
  return ns;
}

std::uint64_t wall_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

} // namespace

std::optional<std::uint64_t> machine_busy_ns() {
  std::ifstream in("/proc/stat");
  std::string name;
  if (!(in >> name) || name != "cpu") return std::nullopt;
  std::uint64_t field[8] = {}; // user nice system idle iowait irq softirq steal
  for (auto& f : field)
    if (!(in >> f)) return std::nullopt;
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (hz <= 0) return std::nullopt;
  const std::uint64_t ticks = field[0] + field[1] + field[2] + field[5] + field[6] + field[7];
  return ticks * (1000000000ull / static_cast<std::uint64_t>(hz));
}

machine_load_meter::machine_load_meter() : m_busy_ns(machine_busy_ns()), m_own_ns(own_cpu_ns()), m_wall_ns(wall_ns()) {}

std::optional<machine_load> machine_load_meter::read() const {
  const auto busy = machine_busy_ns();
  const std::uint64_t own = own_cpu_ns(), wall = wall_ns();
  if (!m_busy_ns || !busy || *busy < *m_busy_ns || wall <= m_wall_ns || own < m_own_ns) return std::nullopt;
  const double other = static_cast<double>(*busy - *m_busy_ns) - static_cast<double>(own - m_own_ns);
  const double span = static_cast<double>(wall - m_wall_ns);
  // Ticks land whole: over a short span the figure can pass the machine's cores; it cannot
  // be more than all of them.
  const double cpus = static_cast<double>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  return machine_load{std::clamp(other / span, 0.0, cpus), span * 1e-9};
}

} // namespace speedlab::app
