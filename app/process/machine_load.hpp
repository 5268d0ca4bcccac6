// What other programs took of the machine while speedlab measured something: the machine's
// busy CPU time (all CPUs, from /proc/stat, a VM's steal time included) less speedlab's own
// and its reaped children's (the isolated point's process with its Python worker), over the
// wall time. On a 2-core machine a build beside the run shows as about 2 cores: the threads
// of a point then wait for cores, and its time says more about the machine than the code.
#pragma once

#include <cstdint>
#include <optional>

namespace speedlab::app {

struct machine_load {
  double other_busy_cores = 0; // at least 0
  double span_s = 0;           // /proc/stat counts 10 ms ticks: a short span reads coarsely
};

// Starts counting when made; read() gives the load since then (nullopt without /proc/stat).
// Children count as speedlab's own once reaped (waitpid), so read after the work's children
// have been waited for.
class machine_load_meter {
public:
  machine_load_meter();
  std::optional<machine_load> read() const;

private:
  std::optional<std::uint64_t> m_busy_ns;
  std::uint64_t m_own_ns = 0, m_wall_ns = 0;
};

// The machine's busy CPU time so far, all CPUs together (the "cpu" line of /proc/stat:
// user, nice, system, irq, softirq and steal; guest time is inside user), or nullopt.
std::optional<std::uint64_t> machine_busy_ns();

} // namespace speedlab::app
