// The stopping rule (app/suite/stopping.hpp): the limits and minimums every criterion runs
// inside, the default criterion (noise) and the others, the registry by name, and the
// suite's `measure: stopping:` key.
#include "speedlab_catch.hpp"

#include "app/suite/stopping.hpp"
#include "app/suite/suite_config.hpp"

using namespace speedlab;
using namespace speedlab::app;
using Catch::Contains;
using Catch::StartsWith;

namespace {
measure_options bounds() {
  measure_options m;
  m.min_samples = 5;
  m.max_samples = 50;
  m.min_time_s = 0.1;
  m.max_time_s = 1.0;
  m.target_noise = 0.01;
  return m;
}
std::string why(const measure_options& m, const std::vector<double>& samples, double elapsed_s) {
  return find_stopping_criterion(m.stopping).stop_reason(m, {samples, elapsed_s});
}
} // namespace

TEST_CASE("stopping rule: every bound ends the measurement", "[stopping]") {
  const measure_options m = bounds();
  CHECK(m.stopping == "noise"); // the default criterion
  const std::vector<double> steady(10, 100.0);
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 100.0 : 300.0);

  CHECK(why(m, {100, 100}, 0.5).empty());                   // too few samples
  CHECK(why(m, steady, 0.05).empty());                      // too little time
  CHECK_THAT(why(m, steady, 0.2), StartsWith("converged")); // quiet enough
  CHECK(why(m, noisy, 0.5).empty());                        // noisy: keep going
  CHECK_THAT(why(m, noisy, 1.0), StartsWith("max_time"));   // but never past max_time
  CHECK_THAT(why(m, std::vector<double>(50, 1.0), 0.0), StartsWith("max_samples"));
  CHECK(why(m, {}, 5.0).empty()); // max_time needs one sample at least
}

TEST_CASE("stopping rule: the limits hold for every criterion, and alone", "[stopping]") {
  measure_options m = bounds();
  CHECK(limit_reason(m, {std::vector<double>(10, 1.0), 0.5}).empty());
  CHECK_THAT(limit_reason(m, {std::vector<double>(50, 1.0), 0.0}), StartsWith("max_samples (50) reached"));
  CHECK_THAT(limit_reason(m, {{1.0}, 1.0}), StartsWith("max_time (1 s) reached"));
  CHECK(past_time_limit(m, 1.0, 1));
  CHECK(!past_time_limit(m, 1.0, 0)); // a warm-up or measurement always gets one run
  CHECK(!past_time_limit(m, 0.99, 5));
  for (const auto& name : stopping_criterion_names()) {
    m.stopping = name;
    CHECK_THAT(why(m, std::vector<double>(50, 1.0), 0.0), StartsWith("max_samples"));
    CHECK(why(m, {100, 100}, 0.5).empty()); // the minimums hold for every criterion too
  }
}

TEST_CASE("stopping rule: fixed stops at the minimums whatever the noise", "[stopping]") {
  measure_options m = bounds();
  m.stopping = "fixed";
  std::vector<double> noisy;
  for (int i = 0; i < 5; ++i) noisy.push_back(i % 2 ? 100.0 : 300.0);
  CHECK(why(m, noisy, 0.05).empty());
  CHECK_THAT(why(m, noisy, 0.1), StartsWith("fixed: min_samples (5) and min_time (0.1 s) met"));
  m.stopping = "noise";
  CHECK(why(m, noisy, 0.1).empty()); // the default keeps going on the same samples
}

TEST_CASE("stopping rule: criteria by name, an unknown one named with the known", "[stopping]") {
  CHECK(stopping_criterion_names() == std::vector<std::string>{"noise", "fixed"});
  CHECK(find_stopping_criterion("noise").name() == "noise");
  CHECK(!find_stopping_criterion("noise").parameters().empty()); // target_noise
  CHECK_THROWS_AS(find_stopping_criterion("entropy"), config_error);
  CHECK_THROWS_WITH(find_stopping_criterion("entropy"),
                    Contains("unknown stopping criterion 'entropy' (one of noise, fixed)"));
}

TEST_CASE("stopping rule: the suite selects a criterion by name, and refuses an unknown one", "[stopping][suite]") {
  const suite_config s = parse_suite("measure: {stopping: fixed, min_samples: 3}\n", "s.yaml");
  CHECK(s.measure.stopping == "fixed");
  CHECK(parse_suite("rounds: 1\n", "s.yaml").measure.stopping == "noise");
  CHECK_THROWS_WITH(
      parse_suite("measure:\n  stopping: entropy\n", "s.yaml"),
      Contains("s.yaml:2:13: measure.stopping: unknown stopping criterion 'entropy' (one of noise, fixed)"));
}
