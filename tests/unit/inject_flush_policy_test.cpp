// The injection library's rule for forcing a periodic flush (profilers/cupti/flush_policy.hpp):
// never while GPU records keep arriving, and only after records were held back long enough.
#include "profilers/cupti/flush_policy.hpp"
#include "speedlab_catch.hpp"

using speedlab::inject::flush_policy;
using namespace speedlab;

namespace {

constexpr std::uint64_t ms = 1000000;

trace::device_trace batch_with(std::uint64_t launch_start, std::uint64_t kernel_end, const char* call = "cuLaunchKernel") {
  trace::device_trace b;
  if (launch_start) {
    trace::api_record a;
    a.start = launch_start;
    a.end = launch_start + 5000;
    a.name = call;
    b.api_calls.push_back(a);
  }
  if (kernel_end) {
    trace::kernel_record k;
    k.start = kernel_end - 1 * ms;
    k.end = kernel_end;
    b.kernels.push_back(k);
  }
  return b;
}

} // namespace

TEST_CASE("flush policy: GPU records that keep arriving never force a flush", "[inject]") {
  flush_policy p(5000 * ms);
  // Every flush delivers the launches and the kernels they started.
  for (std::uint64_t t = 1; t <= 100; ++t) {
    p.delivered(batch_with(t * 500 * ms, t * 500 * ms + 20 * ms), t * 500 * ms + 30 * ms);
    CHECK_FALSE(p.should_force(t * 500 * ms + 30 * ms));
  }
}

TEST_CASE("flush policy: kernel records held back past the limit force one flush, then wait again", "[inject]") {
  flush_policy p(5000 * ms);
  p.delivered(batch_with(100 * ms, 200 * ms), 250 * ms);
  // Launches keep coming (their API records are delivered), the kernels' records do not.
  std::uint64_t now = 250 * ms;
  for (int i = 1; i <= 9; ++i) {
    now += 500 * ms;
    p.delivered(batch_with(now - 10 * ms, 0), now);
    CHECK_FALSE(p.should_force(now)); // 4.75 s at most since the last kernel record
  }
  now += 500 * ms; // 5.25 s
  p.delivered(batch_with(now - 10 * ms, 0), now);
  CHECK(p.should_force(now));
  p.forced(now);
  CHECK_FALSE(p.should_force(now + 500 * ms));
  CHECK(p.should_force(now + 5000 * ms)); // still held back a whole period later
  // The forced flush's kernels end after every launch: nothing is held back any more.
  p.delivered(batch_with(0, now + 5100 * ms), now + 5100 * ms);
  CHECK_FALSE(p.should_force(now + 20000 * ms));
}

TEST_CASE("flush policy: an idle program, copies and the limit 0", "[inject]") {
  flush_policy idle(5000 * ms);
  idle.delivered(batch_with(0, 0), 1 * ms); // nothing launched at all
  CHECK_FALSE(idle.should_force(60000 * ms));

  // A synchronous copy call counts as work put on the GPU, its copy record as its answer.
  flush_policy copies(5000 * ms);
  copies.delivered(batch_with(100 * ms, 0, "cuMemcpyDtoH_v2"), 200 * ms);
  CHECK(copies.should_force(5200 * ms));
  trace::device_trace answer;
  trace::memcpy_record c;
  c.start = 110 * ms;
  c.end = 120 * ms;
  answer.memcpys.push_back(c);
  copies.delivered(answer, 5300 * ms);
  CHECK_FALSE(copies.should_force(60000 * ms));

  // Other calls (attribute queries, stream creation) put no work on the GPU.
  flush_policy queries(5000 * ms);
  queries.delivered(batch_with(100 * ms, 0, "cuDeviceGetAttribute"), 200 * ms);
  CHECK_FALSE(queries.should_force(60000 * ms));

  flush_policy never(0);
  never.delivered(batch_with(100 * ms, 0), 200 * ms);
  CHECK_FALSE(never.should_force(1000000 * ms));
}
