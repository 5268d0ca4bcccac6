// model/trace_fold.hpp: folding one trace's records into another (the stream reader of `speedlab
// profile` and the Python bridge both do it through append_records).
#include "speedlab_catch.hpp"

#include <fmt/format.h>

#include "model/trace_fold.hpp"

using namespace speedlab;

namespace {

trace::device_trace three_kernels(std::uint64_t first_start) {
  trace::device_trace t;
  for (std::uint64_t i = 0; i < 3; ++i) {
    trace::kernel_record k;
    k.start = first_start + 100 * i;
    k.end = k.start + 50;
    k.name = fmt::format("k{}", i);
    t.kernels.push_back(k);
  }
  trace::api_record a;
  a.start = first_start;
  a.end = first_start + 10;
  a.name = "cuLaunchKernel";
  t.api_calls.push_back(a);
  t.dropped_records = 2;
  t.buffer_bytes = 4096;
  return t;
}

} // namespace

TEST_CASE("trace: append_records adds every record, the drop counts and the larger buffer peak", "[trace]") {
  trace::device_trace into = three_kernels(1000);
  into.buffer_bytes = 1024;
  trace::append_records(into, three_kernels(5000));
  CHECK(into.kernels.size() == 6);
  CHECK(into.api_calls.size() == 2);
  CHECK(into.kernels[3].start == 5000);
  CHECK(into.dropped_records == 4);
  CHECK(into.buffer_bytes == 4096);
}

TEST_CASE("trace: append_records with a window keeps only records wholly inside it", "[trace]") {
  trace::device_trace into;
  // Kernels at [1000,1050], [1100,1150], [1200,1250]: the window [1090, 1240] holds only the second.
  trace::append_records(into, three_kernels(1000), 1090, 1240);
  REQUIRE(into.kernels.size() == 1);
  CHECK(into.kernels[0].name == "k1");
  CHECK(into.api_calls.empty()); // [1000, 1010] lies before the window
}
