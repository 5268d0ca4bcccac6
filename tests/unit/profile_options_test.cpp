// The injection library's options (model/profile_options.hpp): what speedlab writes into a
// profiled program's environment parses back to the same options, defaults stay out of the
// environment, and a bad value is named, its default used.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "model/profile_options.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;
using profile::option;

namespace {

profile::parsed_injection_options parse(const std::map<std::string, std::string>& env) {
  return profile::parse_injection_options([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

} // namespace

TEST_CASE("profile options: every setting survives the round trip through the environment", "[profile_options]") {
  profile::injection_options o;
  o.dir = "/tmp/out";
  o.flush_ms = 250;
  o.cupti.force_after_ms = 0;
  o.cupti.max_buffer_mib = 64;
  o.cupti.buffer_kib = 512;
  o.cupti.launches.mode = profile::launch_mode::all; // the full capture's two settings
  o.cupti.launches.sampling = {5'000'000, 50'000'000};
  o.cupti.clock_offset = true;
  o.cupti.runtime_api = false;
  o.cupti.driver_api = false;
  o.cupti.all_api = true;
  o.cupti.api_records = profile::api_source::activity;
  o.cupti.sync_records = true;
  o.source.launches = 3;
  o.counters.metrics = {"dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  o.counters.metric_set = "dram";
  o.counters.per_kernel = 4;
  o.signal_wait_ms = 1500;
  o.signals = false;
  o.nvtx = false;
  o.python.lines = false;
  o.python.max_depth = 40;
  o.python.library_paths = {"/opt/vendor", "/srv/lib"};
  o.python.user_paths = {"/opt/vendor/mine"};
  const auto env = profile::to_environment(o);
  // One variable, the whole block; every setting differs from its default here.
  REQUIRE(env.size() == 1);
  CHECK(nlohmann::json::parse(env.at(profile::options_variable)).size() == profile::option_count);
  const auto back = parse(env);
  CHECK(back.problems.empty());
  CHECK(back.options == o);
  CHECK(back.set.size() == profile::option_count);
}

TEST_CASE("profile options: defaults stay out of the environment and parse back as defaults", "[profile_options]") {
  profile::injection_options o;
  o.dir = "/tmp/out";
  const auto env = profile::to_environment(o);
  // The folder and the interval, nothing else: a user's cost knob set outside passes through.
  REQUIRE(env.size() == 1);
  const auto block = nlohmann::json::parse(env.at(profile::options_variable));
  CHECK(block == nlohmann::json{{"dir", "/tmp/out"}, {"flush_ms", std::to_string(profile::default_flush_ms)}});
  const auto back = parse(env);
  CHECK(back.options == o);
  CHECK(back.options.force_after_ms_or_default() == 5000);
  CHECK(back.options.signal_wait_ms == profile::default_signal_wait_ms);
  CHECK_FALSE(back.is_set(option::metrics));
  // The variable names are distinct and all of the module's prefix.
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < profile::option_count; ++i) {
    const std::string name = profile::variable_name(static_cast<option>(i));
    CHECK(name.rfind("SPEEDLAB_PROFILE_", 0) == 0);
    CHECK(++seen[name] == 1);
  }
}

TEST_CASE("profile options: a bad value is named and its default used", "[profile_options]") {
  auto var = [](option o) { return std::string(profile::variable_name(o)); };
  const auto p = parse({{var(option::dir), "/d"},
                        {var(option::flush_ms), "0"},
                        {var(option::force_after_ms), "abc"},
                        {var(option::buffer_kib), "8"},
                        {var(option::launch_calls), "sometimes"},
                        {var(option::api_source), "both"},
                        {var(option::source_launches), "-2"},
                        {var(option::signal_wait_ms), "700000"},
                        {var(option::python_depth), "0"}});
  CHECK(p.options.flush_ms == profile::default_flush_ms);
  REQUIRE(p.problem(option::force_after_ms));
  CHECK(*p.problem(option::force_after_ms) ==
        var(option::force_after_ms) + "='abc' is not a whole number of milliseconds: 5000 ms is used");
  CHECK_FALSE(p.options.cupti.force_after_ms);
  REQUIRE(p.problem(option::buffer_kib));
  CHECK(*p.problem(option::buffer_kib) == var(option::buffer_kib) + "='8' is not 64 to 1048576: the default is used");
  CHECK_FALSE(p.options.cupti.buffer_kib);
  REQUIRE(p.problem(option::launch_calls));
  CHECK(p.options.cupti.launches.mode == profile::launch_mode::sampled); // the light default
  REQUIRE(p.problem(option::api_source));
  CHECK(p.options.cupti.api_records == profile::api_source::callback);
  REQUIRE(p.problem(option::source_launches));
  CHECK(*p.problem(option::source_launches) == var(option::source_launches) + "='-2' is not a positive whole number");
  CHECK(p.is_set(option::source_launches)); // asked for, though unusable: the library says so
  CHECK_FALSE(p.options.source.launches);
  REQUIRE(p.problem(option::signal_wait_ms));
  CHECK(p.options.signal_wait_ms == profile::default_signal_wait_ms);
  REQUIRE(p.problem(option::flush_ms));
  REQUIRE(p.problem(option::python_depth));
  CHECK_THAT(*p.problem(option::python_depth),
             Catch::Contains("='0' is not a whole number from 1 to 1024: 128 is used"));
  CHECK(p.options.python.max_depth == profile::default_python_depth);
  CHECK(p.problems.size() == 8);
  // The flush interval's one check, as `--flush-interval` applies it too.
  CHECK_FALSE(profile::valid_flush_ms(0));
  CHECK(profile::valid_flush_ms(1));
  CHECK(profile::valid_flush_ms(profile::max_flush_ms));
  CHECK_FALSE(profile::valid_flush_ms(profile::max_flush_ms + 1ll));
}

TEST_CASE("profile options: a user's variable fills what the block leaves out, never what it holds",
          "[profile_options]") {
  profile::injection_options o;
  o.dir = "/tmp/out";
  o.flush_ms = 250;
  auto env = profile::to_environment(o);
  env[profile::variable_name(option::flush_ms)] = "100";   // stale: speedlab's --flush-interval wins
  env[profile::variable_name(option::sync_records)] = std::string("1"); // a cost knob the block does not set
  const auto back = parse(env);
  CHECK(back.options.flush_ms == 250);
  CHECK(back.options.cupti.sync_records);
  CHECK(back.is_set(option::sync_records));
  CHECK_FALSE(back.is_set(option::metrics));
  // Without the block the variables alone still work (a library started by hand).
  const auto alone =
      parse({{profile::variable_name(option::dir), "/d"}, {profile::variable_name(option::flush_ms), "50"}});
  CHECK(alone.options.dir == "/d");
  CHECK(alone.options.flush_ms == 50);
}

TEST_CASE("profile options: a block that is not a JSON object is named and ignored", "[profile_options]") {
  const auto p = parse({{profile::options_variable, "{\"dir\": "}});
  CHECK(p.options.dir.empty());
  REQUIRE(p.problem(option::dir));
  CHECK_THAT(*p.problem(option::dir),
             Catch::Contains(std::string(profile::options_variable) + " is not a JSON object"));
}

TEST_CASE("profile options: the light capture is the default, the full one a setting away", "[profile_options]") {
  profile::injection_options light;
  CHECK(light.cupti.api_records == profile::api_source::callback);
  CHECK(light.cupti.launches.mode == profile::launch_mode::sampled);
  CHECK(parse(profile::to_environment(light)).options.cupti == light.cupti);
  profile::injection_options full;
  full.cupti.use_full_capture(); // `speedlab profile --full`
  const auto block = nlohmann::json::parse(profile::to_environment(full).at(profile::options_variable));
  CHECK(block.at("api_source") == "activity");
  CHECK(block.at("launch_calls") == "all");
  const auto back = parse(profile::to_environment(full));
  CHECK(back.options.cupti.api_records == profile::api_source::activity);
  CHECK(back.options.cupti.launches.mode == profile::launch_mode::all);
}
