// What-if (Amdahl) projections from one point's time split: numbers and shown arithmetic.
#include "speedlab_catch.hpp"

#include "analysis_test_support.hpp"
#include "analysis/trace_summary.hpp"
#include "analysis/what_if.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {
const analysis::what_if* scenario(const std::vector<analysis::what_if>& v, const std::string& name) {
  for (const auto& w : v)
    if (w.scenario == name) return &w;
  return nullptr;
}
constexpr std::uint64_t ms = 1000000;
} // namespace

TEST_CASE("what-if bounds follow Amdahl's law on the split", "[analysis][whatif]") {
  // 10 ms: kernels 2, H2D 3, D2H 1, host 4.
  const auto p = cuda_point("vector", "cuda", {{"n", "1000"}}, make_split(2e6, 3e6, 1e6, 0, 0, 4e6));
  const auto w = analysis::what_ifs_for_point(p, nullptr, h100());

  const auto* k = scenario(w, "kernels take no time");
  REQUIRE(k);
  CHECK(k->measured_ns == 10e6);
  CHECK(k->projected_ns == 8e6);
  CHECK(k->max_speedup == Approx(1.25));
  CHECK(k->arithmetic == "10.0 ms wall - 2.00 ms kernels = 8.00 ms; 10.0 ms / 8.00 ms = 1.25x at most");

  const auto* o = scenario(w, "copies overlap kernels");
  REQUIRE(o);
  CHECK(o->projected_ns == 8e6); // min(4, 2) = 2 ms hidden
  CHECK(o->arithmetic.find("min(4.00 ms copies, 2.00 ms kernels)") != std::string::npos);

  const auto* d = scenario(w, "data stays on the device");
  REQUIRE(d);
  CHECK(d->projected_ns == 6e6);
  CHECK(d->max_speedup == Approx(10.0 / 6.0));

  CHECK(scenario(w, "copies use pinned memory") == nullptr); // no trace: pageable share unknown
}

TEST_CASE("the pinned-memory projection uses the measured bandwidth ratio", "[analysis][whatif]") {
  const auto p = cuda_point("vector", "cuda", {{"n", "1000"}}, make_split(2e6, 3e6, 1e6, 0, 0, 4e6));
  trace::device_trace t;
  t.repetitions.push_back(window(0, 10 * ms));
  t.memcpys.push_back(copy(trace::copy_htod, 0, 3 * ms, 30u << 20, trace::mem_pageable));
  t.memcpys.push_back(copy(trace::copy_dtoh, 5 * ms, 6 * ms, 20u << 20, trace::mem_pageable));
  const auto summary = analysis::summarize_trace(t);
  const auto w = analysis::what_ifs_for_point(p, &summary, h100());
  const auto* pin = scenario(w, "copies use pinned memory");
  REQUIRE(pin);
  // H2D 3 ms x (1 - 10/25) = 1.8 ms, D2H 1 ms x (1 - 20/25) = 0.2 ms: 2 ms saved.
  CHECK(pin->projected_ns == Approx(8e6));
  CHECK(pin->max_speedup == Approx(1.25));
  CHECK(pin->arithmetic.find("3.00 ms pageable H2D x (1 - 10.0 GB/s / 25.0 GB/s)") != std::string::npos);
  CHECK(pin->arithmetic.find("estimates") == std::string::npos);

  // Half of the H2D time pinned already: only the pageable half is projected.
  t.memcpys.push_back(copy(trace::copy_htod, 6 * ms, 9 * ms, 30u << 20, trace::mem_pinned));
  const auto s2 = analysis::summarize_trace(t);
  const auto w2 = analysis::what_ifs_for_point(p, &s2, h100(false));
  const auto* pin2 = scenario(w2, "copies use pinned memory");
  REQUIRE(pin2);
  CHECK(pin2->projected_ns == Approx(10e6 - (1.5e6 * 0.6 + 0.2e6)));
  CHECK(pin2->arithmetic.find("estimates") != std::string::npos);
}

TEST_CASE("no split, no what-if; no copies, no copy scenarios", "[analysis][whatif]") {
  const auto serial = make_point("vector", "serial", "serial", {{"n", "1000"}}, spread(1e6, 0.01));
  CHECK(analysis::what_ifs_for_point(serial, nullptr, h100()).empty());
  const auto resident = cuda_point("vector", "cuda_resident", {{"n", "1000"}}, make_split(2e6, 0, 0, 0, 0, 1e6));
  const auto w = analysis::what_ifs_for_point(resident, nullptr, h100());
  REQUIRE(w.size() == 1);
  CHECK(w[0].scenario == "kernels take no time");
  CHECK(w[0].max_speedup == Approx(3.0));
}

TEST_CASE("analyze reports what-ifs for every point with a split", "[analysis][whatif]") {
  const auto a = cuda_point("vector", "cuda", {{"n", "1000"}}, make_split(2e6, 3e6, 1e6, 0, 0, 4e6));
  const auto b = cuda_point("vector", "cuda", {{"n", "2000"}}, make_split(4e6, 6e6, 2e6, 0, 0, 4e6));
  const auto r = run({a, b}, h100());
  CHECK(r.what_ifs.size() == 6);
  for (const auto& w : r.what_ifs) {
    CHECK(w.projected_ns <= w.measured_ns);
    CHECK(w.max_speedup >= 1.0);
    CHECK(!w.arithmetic.empty());
  }
}
