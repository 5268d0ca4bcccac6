// "none": measure without any profiler (the baseline for overhead comparisons).
#include "profilers/profiler.hpp"

namespace speedlab::profiling {
namespace {

class none_session final : public session {
public:
  void start() override {}
  void stop() override {}
  void collect(profile_data&) override {}
};

class none_profiler final : public profiler {
public:
  none_profiler() : profiler("none", "no profiling: wall time only") {}
  std::unique_ptr<session> create_session(const profiler_options&) override { return std::make_unique<none_session>(); }
};

} // namespace



std::unique_ptr<profiler> make_none_profiler() { return std::make_unique<none_profiler>(); }

} // namespace speedlab::profiling
