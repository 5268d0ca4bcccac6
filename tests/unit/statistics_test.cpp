#include "speedlab_catch.hpp"

#include "model/statistics.hpp"

using namespace speedlab;

TEST_CASE("statistics: median, quartiles, mean, spread", "[stats]") {
  const auto s = stats::summarize({5, 1, 4, 2, 3});
  CHECK(s.count == 5);
  CHECK(s.median == Approx(3));
  CHECK(s.q1 == Approx(2));
  CHECK(s.q3 == Approx(4));
  CHECK(s.mean == Approx(3));
  CHECK(s.stddev == Approx(std::sqrt(2.5)));
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  // Too few samples for order-statistic ranks: the interval is the whole range.
  CHECK(s.ci_low == 1);
  CHECK(s.ci_high == 5);
}

TEST_CASE("statistics: the median's confidence interval narrows with samples and contains the median", "[stats]") {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  const auto s = stats::summarize(v);
  CHECK(s.median == Approx(50.5));
  CHECK(s.ci_low < s.median);
  CHECK(s.ci_high > s.median);
  // Ranks 40 and 61 for n = 100 (n/2 -+ 1.96 sqrt(n)/2).
  CHECK(s.ci_low == 40);
  CHECK(s.ci_high == 61);
  CHECK(s.relative_noise() == Approx((61.0 - 40.0) / (2 * 50.5)));
}

TEST_CASE("statistics: empty and single samples", "[stats]") {
  CHECK(stats::summarize({}).count == 0);
  const auto one = stats::summarize({7});
  CHECK(one.median == 7);
  CHECK(one.stddev == 0);
}
