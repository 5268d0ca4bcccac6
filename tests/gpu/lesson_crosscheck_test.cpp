// The lesson-style vector multiply (copies in and out on every call) through the speedlab
// binary with CUPTI and self-timing: its time split must show the transfers dominating, and
// speedlab's report must find CUPTI's kernel time within 5% of the variant's own cudaEvent
// timing of the same launches for kernels of 50 us or more (here 72 us and up). The events
// (gated and primed: speedlab/cuda_event_timer.hpp) hold the GPU front end's fixed gap
// of about 2.5 us more than the kernel, at every size.
#include "speedlab_catch.hpp"

#include "speedlab/config.hpp" // SPEEDLAB_HAS_CUPTI

#if SPEEDLAB_HAS_CUPTI

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "unit/test_support.hpp"

TEST_CASE("lesson vector multiply: transfers dominate; CUPTI kernel time within 5% of the variant's cudaEvents "
          "for kernels >= 50 us",
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
    CHECK(event_ns - cupti_ns <= 6e3);   // a fixed gap, whatever the kernel's length
    if (cupti_ns >= 50e3) {
      ++long_kernels;
      CHECK(std::fabs(diff) <= 0.05);
      CHECK(c.at("verdict") == "agree");
    }
  }
  CHECK(long_kernels >= 4);
}

#endif
