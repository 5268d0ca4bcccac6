// The lesson-style vector multiply (copies in and out on every call) through the speedlab
// binary with CUPTI and self-timing: its time split must show the transfers dominating, and
// speedlab's report sets CUPTI's kernel time beside the variant's own (gated) cudaEvent
// timing of the same launches. The events hold a fixed gap more than the kernel: 2.3-2.5 us of
// GPU front end with reused buffers, 5-9 us right after the lesson's cudaMalloc + copies
// (2.6-9.9 us; the diagnostic in cupti_session_test.cpp). So here the 5% agreement is asserted
// from 250 us (it held at 145 us in two of three runs), and below that the gap must stay that
// fixed amount, not grow with the kernel.
#include "speedlab/config.hpp"
#include "speedlab_catch.hpp"

#if SPEEDLAB_HAS_CUPTI

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "unit/test_support.hpp"

TEST_CASE("lesson vector multiply: transfers dominate; CUPTI kernel time within 5% of the variant's cudaEvents "
          "for kernels >= 250 us, a fixed gap below",
          "[gpu][lesson]") {
  namespace t = speedlab::testing;
  t::temp_dir dir;
  const std::string command =
      t::speedlab_binary().string() +
      " run --workload vector --variant cuda-lesson --param op=mul"
      " --param n=4194304,16777216,33554432,67108864,134217728 --self-timing --profilers host,cupti"
      " --reports json,markdown --calibrate off --min-samples 10 --max-time 5 --timeout 30 --out " +
      dir.path().string();
  const auto r = t::run_command(command);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto results = nlohmann::json::parse(std::ifstream(dir.path() / "results.json"));

  for (const auto& p : results.at("points")) {
    INFO(p.at("id").get<std::string>());
    REQUIRE(p.at("status") == "ok");
    const auto& s = p.at("split_median");
    REQUIRE(s.is_object());
    const double wall = s.at("wall_ns"), h2d = s.at("h2d"), d2h = s.at("d2h"), kernel = s.at("kernel");
    std::printf("lesson-split: %-40s wall %9.1f us  h2d %5.1f%%  d2h %5.1f%%  kernel %5.2f%%\n",
                p.at("id").get<std::string>().c_str(), wall / 1e3, 100 * h2d / wall, 100 * d2h / wall,
                100 * kernel / wall);
    CHECK(h2d + d2h > 0.5 * wall); // the copies are most of the run
    CHECK(h2d + d2h > 10 * kernel);
  }

  int long_kernels = 0;
  for (const auto& c : results.at("analysis").at("timing_checks")) {
    INFO(c.dump());
    REQUIRE(c.at("name") == "kernel");
    REQUIRE(c.at("repetitions").get<int>() >= 5); // every measured repetition has both figures
    const double cupti_ns = c.at("profiler_median_ns"), event_ns = c.at("self_median_ns");
    const double diff = c.at("median_difference");
    std::printf("lesson-events: %-40s events %9.2f us  cupti %9.2f us  median diff %+6.2f%%  max |diff| %5.2f%%  "
                "(%d repetitions)  %s\n",
                c.at("point_id").get<std::string>().c_str(), event_ns / 1e3, cupti_ns / 1e3, 100 * diff,
                100 * c.at("max_abs_difference").get<double>(), c.at("repetitions").get<int>(),
                c.at("verdict").get<std::string>().c_str());
    CHECK(cupti_ns <= event_ns * 1.001); // the kernel lies inside its events
    CHECK(event_ns - cupti_ns <= 12e3);  // a fixed gap, whatever the kernel's length
    if (cupti_ns >= 250e3) {
      ++long_kernels;
      CHECK(std::fabs(diff) <= 0.05);
      CHECK(c.at("verdict") == "agree");
    }
  }
  CHECK(long_kernels >= 2);
}

#endif
