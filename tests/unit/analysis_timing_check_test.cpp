// The variants' own timings set beside the profiler's: the verdict follows the median
// difference, repetitions line up by index, and names without a counterpart are kept.
#include "analysis/timing_check.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;
using namespace speedlab::analysis;

namespace {

// A valid point whose repetitions have the given kernel times (profiler) and own timings.
point_result point_with(const std::vector<double>& kernel_ns, const std::vector<double>& own_ns,
                        const std::string& name = "kernel") {
  point_result p;
  p.id = "vector/cuda-lesson/n=1,op=mul";
  p.workload = "vector";
  p.variant = "cuda-lesson";
  p.status = point_status::ok;
  for (double k : kernel_ns) {
    time_split s;
    s.kernel = k;
    s.h2d = 2 * k;
    s.wall_ns = 4 * k;
    p.splits.push_back(s);
    p.samples_ns.push_back(s.wall_ns);
  }
  p.self_timed_ns[name] = own_ns;
  return p;
}

} // namespace

TEST_CASE("timing check: kernel times within 5% of the events agree", "[analysis][timing]") {
  // profiler 2% shorter than the events in every repetition but one (10% shorter)
  const auto checks = timing_checks({point_with({98, 196, 294, 90}, {100, 200, 300, 100})});
  REQUIRE(checks.size() == 1);
  const auto& c = checks[0];
  CHECK(c.verdict == speedlab::timing_verdict::agree);
  CHECK(c.repetitions == 4);
  CHECK(c.median_difference == Approx(-0.02));
  CHECK(c.max_abs_difference == Approx(0.10));
  CHECK(c.self_median_ns == Approx(150));
  CHECK(c.profiler_median_ns == Approx(147));
  CHECK(c.compared_with.find("kernel") != std::string::npos);
}

TEST_CASE("timing check: a median difference beyond 5% differs", "[analysis][timing]") {
  const auto checks = timing_checks({point_with({80, 80, 80}, {100, 100, 100})});
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].verdict == speedlab::timing_verdict::differ);
  CHECK(checks[0].median_difference == Approx(-0.2));
  CHECK(checks[0].note.find("launch call") != std::string::npos); // why events run long
}

TEST_CASE("timing check: repetitions without an own timing are skipped, copies compare too", "[analysis][timing]") {
  auto p = point_with({10, 10, 10}, {0, 20, 20}, "h2d"); // h2d = 2 x kernel = 20
  const auto checks = timing_checks({p});
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].repetitions == 2);
  CHECK(checks[0].median_difference == Approx(0));
  CHECK(checks[0].verdict == speedlab::timing_verdict::agree);
}

TEST_CASE("timing check: no profiler data or no counterpart is said, not compared", "[analysis][timing]") {
  auto no_trace = point_with({}, {100, 100});
  no_trace.samples_ns = {300, 300};
  auto unknown_name = point_with({10, 10}, {5, 5}, "pack");
  auto invalid = point_with({10}, {10});
  invalid.status = point_status::invalid;
  const auto checks = timing_checks({no_trace, unknown_name, invalid});
  REQUIRE(checks.size() == 2); // invalid points are not checked
  CHECK(checks[0].verdict == speedlab::timing_verdict::not_compared);
  CHECK(checks[0].repetitions == 0);
  CHECK(checks[0].note.find("cupti") != std::string::npos);
  CHECK(checks[1].verdict == speedlab::timing_verdict::no_counterpart);
  CHECK(checks[1].self_median_ns == Approx(5));
}
