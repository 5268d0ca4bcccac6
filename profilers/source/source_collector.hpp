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
// Under `speedlab profile --source` the injection library makes it with external_callbacks
// (it holds the subscription), calls start() at the first launch, next_phase() and stop()
// at the ends of its launch windows (profilers/inject/inject.cpp).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/source_view.hpp"

namespace speedlab::profiling::source_core {

class source_unavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct collector_options {
  // The caller holds CUPTI's one subscription (the injection library, `speedlab profile
  // --source`): it enables resource_callbacks() on it and hands them to on_callback().
  bool external_callbacks = false;
};

class source_collector {
public:
  // Subscribes unless options.external_callbacks; throws source_unavailable (another
  // profiler holds CUPTI, ...).
  explicit source_collector(collector_options options = {});
  ~source_collector();
  source_collector(const source_collector&) = delete;
  source_collector& operator=(const source_collector&) = delete;

  void start();              // samples from now on (every context sampling was enabled on)
  // Ends the sampling (read now) and starts the SASS-metrics phase: the next repetition's
  // kernels are patched to count global sectors and requests per instruction. A failure is
  // a note; the samples stay.
  void next_phase();
  void stop();               // synchronizes, stops the running phase and reads it
  // At the program's exit with the SASS phase still on: patching switched off without
  // synchronizing or reading (a read at exit hung once in three on the H100); the samples
  // already read stay. False when no SASS phase was on.
  bool abandon_sass();
  source::source_pass take(); // folded to lines; the cubins' line tables read here
  std::vector<std::string> messages() const;

  // With external_callbacks: the (domain, id) pairs to enable (context creation, module
  // load), and the callback to hand them to (never throws).
  static std::vector<std::pair<int, unsigned>> resource_callbacks();
  void on_callback(int domain, unsigned id, const void* data) noexcept;

  struct impl; // public only so the CUPTI callback trampoline can name it

private:
  void stop_sampling();
  std::unique_ptr<impl> m;
};

} // namespace speedlab::profiling::source_core
