// GPU tests of the counters backend: K per distinct (kernel, grid, block) is enforced by the
// launch gate, and a c = a * b kernel reads and writes the bytes it must.
#include "speedlab_catch.hpp"

#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_CUPTI

#include <map>

#include "gpu/gpu_kernels.hpp"
#include "model/counters.hpp"
#include "profilers/counters/counters_options.hpp"
#include "profilers/profiler.hpp"

namespace {

using namespace speedlab;
namespace m = speedlab::counters::metric;

TEST_CASE("counters: the first K launches of each kernel are profiled, the rest skipped", "[gpu][counters]") {
  if (std::string why = gpu_test::device_problem(); !why.empty()) {
    WARN("skipped: " << why);
    return;
  }
  REQUIRE(gpu_test::launch_empty(1)); // a context exists before the pass
  REQUIRE(gpu_test::synchronize());
  auto prof = profiling::make_profiler("counters");
  REQUIRE(prof);
  REQUIRE(prof->unavailable_reason().empty());
  profiling::profiler_options o;
  o.block<profiling::counters_options>().counters_per_kernel = 2;
  auto s = prof->create_session(o);
  s->start();
  REQUIRE(gpu_test::launch_empty(10));
  for (int i = 0; i < 3; ++i) REQUIRE(gpu_test::spin(2000));
  const float ms = gpu_test::multiply_timed_by_events(1 << 24, false);
  REQUIRE(ms > 0);
  s->stop();
  profiling::profile_data d;
  s->collect(d);
  for (const auto& msg : d.messages) WARN(msg);
  REQUIRE(d.sections.has<counters::counter_pass>());
  const auto& c = *d.sections.get<counters::counter_pass>();
  // The default set reads the bound's units beside the instruction counters: several passes
  // (6 on the H100; 2 before the bound was read).
  CHECK(c.passes >= 2);
  CHECK(c.passes <= 8);
  CHECK(c.per_kernel_limit == 2);
  std::map<std::string, int> per_kernel;
  for (const auto& k : c.kernels) ++per_kernel[k.kernel];
  for (const auto& [k, n] : per_kernel) INFO(k << ": " << n);
  CHECK(c.launches == 15);          // 10 empty + 3 spin + blocker + multiply
  CHECK(c.skipped == 9);            // 8 empty + 1 spin beyond K
  CHECK(c.kernels.size() == 6);
  bool found_multiply = false;
  for (const auto& k : c.kernels) {
    CHECK(k.grid.size() == 3);
    if (k.kernel.find("multiply") == std::string::npos) continue;
    found_multiply = true;
    const auto f = counters::derive(k.metrics);
    const double n = 1 << 24;
    // a and b are read once (8 bytes an element), c written once (4); c may stay in L2.
    CHECK(*f.dram_read_bytes > 0.9 * 8 * n);
    CHECK(*f.dram_read_bytes < 1.2 * 8 * n);
    CHECK(*f.flops_fp32 == Approx(n).epsilon(0.01)); // one FMUL an element
    CHECK(*f.duration_ns > 0);
  }
  CHECK(found_multiply);
}

} // namespace

#endif
