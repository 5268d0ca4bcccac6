// The CUPTI PC-sampling core of the source backend: one subscription that must exist
// before the program's first context and module load (CUPTI gives no records, and no cubin,
// for a module loaded before it), PC sampling enabled at each context's creation with
// start/stop control, cubins copied at module load and keyed by their CRC, samples read
// at stop and folded to file:line (model/source_view) at take().
// CUPTI headers stay in the .cpp. Setup failures throw source_unavailable with the cause in
// words; nothing throws from a CUPTI callback (problems become messages).
//
//   source_collector c;   // before the variant's setup: subscribes
//   ... setup, one warm-up repetition ...
//   c.start(); ... one repetition ...; c.next_phase(); ... one more (SASS metrics) ...; c.stop();
//   source::source_pass pass = c.take();
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/source_view.hpp"

namespace speedlab::profiling::source_core {

class source_unavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class source_collector {
public:
  source_collector(); // subscribes; throws source_unavailable (another profiler holds CUPTI, ...)
  ~source_collector();
  source_collector(const source_collector&) = delete;
  source_collector& operator=(const source_collector&) = delete;

  void start();              // samples from now on (every context sampling was enabled on)
  // Ends the sampling (read now) and starts the SASS-metrics phase: the next repetition's
  // kernels are patched to count global sectors and requests per instruction. A failure is
  // a note; the samples stay.
  void next_phase();
  void stop();               // synchronizes, stops the running phase and reads it
  source::source_pass take(); // folded to lines; the cubins' line tables read here
  std::vector<std::string> messages() const;

  struct impl; // public only so the CUPTI callback trampoline can name it

private:
  void stop_sampling();
  std::unique_ptr<impl> m;
};

} // namespace speedlab::profiling::source_core
