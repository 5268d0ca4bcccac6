#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "profilers/counters/counters_options.hpp"
#include "profilers/cupti/cupti_options.hpp"
#include "profilers/profiler.hpp"
#include "speedlab/config.hpp"
#include "speedlab_catch.hpp"

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

TEST_CASE("profiler registry: each backend's options section, in every build", "[profilers][config]") {
  // The sections exist whether or not the backend was built: a suite reads the same.
  const backend_entry* cupti = find_backend("cupti");
  const backend_entry* counters = find_backend("counters");
  REQUIRE(cupti);
  REQUIRE(counters);
  REQUIRE(cupti->options);
  REQUIRE(counters->options);
  CHECK(std::count(cupti->options->keys.begin(), cupti->options->keys.end(), "buffer_mib") == 1);
  CHECK(counters->options->keys == std::vector<std::string>{"metrics", "per_kernel"});
  CHECK_FALSE(find_backend("host")->options);
  CHECK_FALSE(find_backend("no-such-profiler"));
  // Which backends read each kernel once per point (the first round only) and which trace.
  CHECK(counters->first_round_only);
  CHECK(find_backend("source")->first_round_only);
  CHECK_FALSE(cupti->first_round_only);
  CHECK(cupti->traces_device);
  CHECK_FALSE(find_backend("host")->traces_device);
}

namespace {

// A section given as text values, so a backend's keys are tested without YAML.
class map_reader final : public section_reader {
public:
  explicit map_reader(std::map<std::string, std::string> values) : m_values(std::move(values)) {}
  bool has(const std::string& key) const override { return m_values.count(key) > 0; }
  double number(const std::string& key, const number_bounds& b) override {
    const double v = std::stod(m_values.at(key));
    if (v < b.min || v > b.max) fail(key, "out of range");
    return v;
  }
  bool boolean(const std::string& key) override { return m_values.at(key) == "true"; }
  std::string choice(const std::string& key, const std::vector<std::string>& choices) override {
    if (std::count(choices.begin(), choices.end(), m_values.at(key)) == 0) fail(key, "not a choice");
    return m_values.at(key);
  }
  std::vector<std::string> names(const std::string& key) override { return {m_values.at(key)}; }
  [[noreturn]] void fail(const std::string& key, const std::string& problem) override {
    throw std::runtime_error(key + ": " + problem);
  }

private:
  std::map<std::string, std::string> m_values;
};

} // namespace

TEST_CASE("profiler registry: a backend reads its own keys into the options and says what they mean",
          "[profilers][config]") {
  profiler_options o;
  map_reader cupti(std::map<std::string, std::string>{{"buffer_mib", "2"}, {"api_records", "false"}, {"clock", "offset"}});
  find_backend("cupti")->options->read(cupti, o);
  const cupti_options& c = o.get<cupti_options>();
  CHECK(c.buffer_bytes == 2u << 20);
  CHECK_FALSE(c.api_records);
  CHECK(c.clock == cupti_options::clock_mode::offset);
  // Set in the suite, the cupti options are noted whether the run uses cupti or not.
  CHECK_THAT(find_backend("cupti")->options->note(o, false), Catch::Contains("cupti options: buffer_mib=2 api_records=false"));
  CHECK(find_backend("cupti")->options->note(profiler_options{}, true).empty());

  map_reader counters(std::map<std::string, std::string>{{"metrics", "dram"}, {"per_kernel", "3"}});
  find_backend("counters")->options->read(counters, o);
  CHECK(o.get<counters_options>().metric_set == "dram");
  CHECK(o.get<counters_options>().counters_per_kernel == 3);
  CHECK(find_backend("counters")->options->note(o, false).empty()); // not run: nothing to say
  CHECK_THAT(find_backend("counters")->options->note(o, true), Catch::Contains("metric set 'dram', the first 3"));
  map_reader unknown(std::map<std::string, std::string>{{"metrics", "fastest"}});
  CHECK_THROWS_WITH(find_backend("counters")->options->read(unknown, o),
                    Catch::Contains("metrics: counters.metrics: unknown metric set 'fastest'"));
  map_reader too_big(std::map<std::string, std::string>{{"max_buffer_mib", "1"}, {"buffer_mib", "8"}});
  CHECK_THROWS_WITH(find_backend("cupti")->options->read(too_big, o), Catch::Contains("smaller than"));
}
