// Lesson 5-8 plugins (histogram, convolution, transpose, mandelbrot) and the template,
// loaded from the build tree with Boost.DLL: their descriptions, and their serial and
// threads variants run through the phase contract at small sizes (sizes that are not
// multiples of any tile or chunk included), whose validation must pass.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/dll/import.hpp>
#include "speedlab_catch.hpp"
#include "test_root.hpp"
#include "speedlab/config.hpp"

#include <speedlab/plugin.hpp>
#include "plugins/mandelbrot/mandelbrot_problem.hpp"

namespace {

std::filesystem::path plugin_file(const std::string& name) {
  return speedlab::testing::build_plugin_dir() / ("libspeedlab-" + name + ".so");
}

// The describe function holds the library; `workloads` (whose std::functions point into
// it) is declared after it, so it is destroyed first.
struct loaded_plugin {
  std::function<speedlab::describe_function> describe;
  std::vector<speedlab::workload_info> workloads;

  explicit loaded_plugin(const std::string& name) {
    const auto file = plugin_file(name);
    INFO("plugin file " << file);
    REQUIRE(std::filesystem::exists(file));
    describe = boost::dll::import_alias<speedlab::describe_function>(file, "speedlab_describe",
                                                                     boost::dll::load_mode::rtld_lazy);
    workloads = describe();
    REQUIRE(workloads.size() == 1);
  }
  const speedlab::workload_info& workload() const { return workloads.front(); }
  const speedlab::variant_spec& variant(const std::string& name) const {
    for (const auto& v : workload().variants)
      if (v.name == name) return v;
    FAIL("no variant " << name);
    throw; // unreachable
  }
};

speedlab::point make_point(const speedlab::workload_info& w, const std::map<std::string, std::string>& values) {
  std::map<std::string, std::string> all;
  for (const auto& p : w.parameters) all[p.name] = p.default_value;
  for (const auto& [k, v] : values) all[k] = v;
  return speedlab::point(all);
}

// setup, two repetitions, validate after each (as the runner does), teardown.
speedlab::validation run_variant(const speedlab::variant_spec& v, const speedlab::point& p, int threads = 3) {
  auto run = v.create(p, speedlab::run_context{threads, 0});
  run->setup();
  speedlab::validation last;
  for (int rep = 0; rep < 2; ++rep) {
    run->transfer_in();
    run->compute();
    run->transfer_out();
    last = run->validate();
    INFO(v.name << " repetition " << rep << ": " << last.message);
    CHECK(last.ok);
  }
  run->teardown();
  return last;
}

void run_host_variants(const loaded_plugin& plugin, const std::vector<std::map<std::string, std::string>>& points) {
  for (const auto& values : points) {
    const auto p = make_point(plugin.workload(), values);
    for (const char* name : {"serial", "threads"}) {
      std::string where = plugin.workload().name + "/" + name;
      for (const auto& [k, v] : values) where += " " + k + "=" + v;
      INFO(where);
      const auto result = run_variant(plugin.variant(name), p);
      CHECK(result.ok);
      CHECK_FALSE(result.message.empty());
    }
  }
}

} // namespace

TEST_CASE("lesson 5-8 plugins describe workloads, parameters and variants", "[plugins][lessons]") {
  const std::map<std::string, std::pair<std::string, std::vector<std::string>>> expected = {
      {"histogram", {"histogram", {"n", "bins"}}},
      {"convolution", {"convolution", {"size", "mask"}}},
      {"transpose", {"transpose", {"size"}}},
      {"mandelbrot", {"mandelbrot", {"size", "iterations"}}},
  };
  for (const auto& [file, want] : expected) {
    INFO("plugin " << file);
    loaded_plugin plugin(file);
    const auto& w = plugin.workload();
    CHECK(w.name == want.first);
    CHECK_FALSE(w.lesson.empty());
    std::vector<std::string> names;
    for (const auto& p : w.parameters) {
      names.push_back(p.name);
      CHECK_FALSE(p.default_value.empty());
      CHECK_FALSE(p.default_sweep.empty());
    }
    CHECK(names == want.second);

    std::set<std::string> variants;
    for (const auto& v : w.variants) {
      INFO("variant " << v.name);
      CHECK(variants.insert(v.name).second); // unique names
      CHECK(v.create);
      if (v.kind == speedlab::variant_kind::cuda) {
        CHECK(v.unavailable_reason);
        CHECK(v.expected_invalid == (v.name == "cuda-racy"));
      } else {
        CHECK_FALSE(v.expected_invalid);
      }
      // Every variant's work model at the default point does some work; only cuda-lesson copies.
      const auto p = make_point(w, {});
      const auto m = v.work ? v.work(p) : w.work(p);
      CHECK(m.bytes_read + m.bytes_written > 0);
      CHECK(m.items > 0);
      CHECK((m.host_to_device_bytes + m.device_to_host_bytes > 0) == (v.name == "cuda-lesson"));
    }
    CHECK(variants.count("serial") == 1);
    CHECK(variants.count("threads") == 1);
    if (variants.count("cuda")) CHECK(variants.count("cuda-lesson") == 1);
  }
}

TEST_CASE("histogram serial and threads match the serial count exactly", "[plugins][lessons][histogram]") {
  loaded_plugin plugin("histogram");
  run_host_variants(plugin, {{{"n", "100003"}, {"bins", "10"}},
                             {{"n", "7"}, {"bins", "4096"}},
                             {{"n", "65537"}, {"bins", "333"}},
                             {{"n", "1"}, {"bins", "1"}}});
  // bad parameters are refused, not silently run
  CHECK_THROWS(plugin.variant("serial").create(make_point(plugin.workload(), {{"bins", "100000"}}), {}));
}

TEST_CASE("convolution serial and threads are within 1e-5 of the double reference", "[plugins][lessons][convolution]") {
  loaded_plugin plugin("convolution");
  run_host_variants(plugin, {{{"size", "67"}, {"mask", "13"}},
                             {{"size", "5"}, {"mask", "31"}},
                             {{"size", "130"}, {"mask", "3"}},
                             {{"size", "1"}, {"mask", "1"}}});
  const auto r =
      run_variant(plugin.variant("threads"), make_point(plugin.workload(), {{"size", "64"}, {"mask", "9"}}), 1);
  CHECK(r.max_error <= 1e-5);
  CHECK_THROWS(plugin.variant("serial").create(make_point(plugin.workload(), {{"mask", "4"}}), {}));
}

TEST_CASE("transpose serial and threads give the exact transposed arange", "[plugins][lessons][transpose]") {
  loaded_plugin plugin("transpose");
  run_host_variants(plugin, {{{"size", "1"}}, {{"size", "33"}}, {{"size", "100"}}, {{"size", "257"}}});
}

TEST_CASE("mandelbrot serial and threads match serial membership", "[plugins][lessons][mandelbrot]") {
  loaded_plugin plugin("mandelbrot");
  run_host_variants(plugin, {{{"size", "1"}, {"iterations", "1"}},
                             {{"size", "97"}, {"iterations", "100"}},
                             {{"size", "128"}, {"iterations", "256"}}});
  // the work model counts iterations actually run: more allowed iterations, more flops
  const auto& w = plugin.workload();
  CHECK(w.work(make_point(w, {{"iterations", "1024"}})).flops > w.work(make_point(w, {{"iterations", "256"}})).flops);
}

// cuda-cardioid marks pixels inside the main cardioid or the period-2 bulb as members
// without iterating: on a grid that crosses both, every such pixel must be a member of the
// plain loop at many iterations, and the test must mark a good share of the members.
TEST_CASE("mandelbrot cardioid/bulb shortcut marks only members", "[plugins][lessons][mandelbrot]") {
  using namespace speedlab::plugins::mandelbrot;
  const int size = 301, iterations = 4096;
  int inside = 0, members = 0;
  for (int r = 0; r < size; ++r)
    for (int c = 0; c < size; ++c) {
      const double cx = coordinate(c, size), cy = coordinate(r, size);
      const bool member = escape_count(cx, cy, iterations) == iterations;
      members += member;
      if (in_cardioid_or_bulb(cx, cy)) {
        ++inside;
        INFO("pixel (" << r << ", " << c << ") c = " << cx << " + " << cy << "i");
        REQUIRE(member);
      }
    }
  CHECK(inside > members / 2);
  CHECK_FALSE(in_cardioid_or_bulb(0.3, 0.0)); // right of the cusp at 1/4: outside the set
  CHECK(in_cardioid_or_bulb(-1.0, 0.0));      // the bulb's centre
  CHECK(in_cardioid_or_bulb(0.0, 0.0));
}

TEST_CASE("template plugin runs and validates", "[plugins][template]") {
  const auto file = plugin_file("template");
  REQUIRE(std::filesystem::exists(file));
  std::function<speedlab::describe_function> describe = boost::dll::import_alias<speedlab::describe_function>(
      file, "speedlab_describe", boost::dll::load_mode::rtld_lazy);
  auto workloads = describe();
  REQUIRE(workloads.size() == 1);
  CHECK(workloads[0].name == "template-saxpy");
  CHECK(workloads[0].example); // `speedlab list` marks it as an example
  REQUIRE(!workloads[0].parameters.empty());
  CHECK(workloads[0].parameters[0].size_axis);
  // serial, and cuda where the plugin was built with CUDA (it runs only with a device)
  REQUIRE(workloads[0].variants.size() == (SPEEDLAB_HAS_CUDA ? 2u : 1u));
  const auto p = make_point(workloads[0], {{"n", "1001"}});
  CHECK(run_variant(workloads[0].variants[0], p).ok);
  if (workloads[0].variants.size() == 2) {
    CHECK(workloads[0].variants[1].kind == speedlab::variant_kind::cuda);
    const std::string why = workloads[0].variants[1].unavailable_reason();
    if (why.empty()) CHECK(run_variant(workloads[0].variants[1], p).ok); // the GPU machine
    else WARN("template cuda variant not run here: " << why);
  }
  workloads.clear();
}
