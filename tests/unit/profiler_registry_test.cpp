#include "speedlab_catch.hpp"

#include <algorithm>

#include "profilers/profiler.hpp"
#include "speedlab/config.hpp"

using namespace speedlab::profiling;

TEST_CASE("profiler registry: built backends by name, left-out ones with a reason", "[profilers]") {
  const auto names = profiler_names();
  CHECK(std::count(names.begin(), names.end(), "host") == 1);
  CHECK(std::count(names.begin(), names.end(), "none") == 1);
  CHECK(make_profiler("host"));
  CHECK_FALSE(make_profiler("no-such-profiler"));
  CHECK(profiler_not_built_reason("host").empty());
  CHECK(profiler_not_built_reason("no-such-profiler").empty()); // unknown: an error elsewhere, not a note
#if SPEEDLAB_HAS_CUPTI
  CHECK(make_profiler("cupti"));
  CHECK(profiler_not_built_reason("cupti").empty());
#else
  CHECK_FALSE(make_profiler("cupti"));
  CHECK_THAT(profiler_not_built_reason("cupti"), Catch::Contains("without CUDA"));
#endif
}
