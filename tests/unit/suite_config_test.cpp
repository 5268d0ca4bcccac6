#include <chrono>
#include <fstream>

#include "app/plugins/plugin_loader.hpp"
#include "app/suite/suite_overrides.hpp"
#include "app/suite/suite_plan.hpp"
#include "profilers/counters/counters_options.hpp"
#include "profilers/cupti/cupti_options.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab::app;
using Catch::Contains;

namespace {
const plugin_registry& faulty_registry() {
  static plugin_registry reg;
  static bool loaded = reg.load_file(speedlab::testing::faulty_plugin());
  REQUIRE(loaded);
  return reg;
}
std::vector<planned_point> plan(const std::string& yaml) {
  return plan_points(parse_suite(yaml, "suite.yaml"), faulty_registry());
}
} // namespace

TEST_CASE("config: a full suite parses and expands sweeps", "[config]") {
  const auto s = parse_suite(R"(output: out-dir
isolate: false
timeout: 5
threads: 3
warmup: {runs: 2, min_time: 0.01}
measure: {min_samples: 3, max_samples: 9, min_time: 0, max_time: 2, target_noise: 0.05}
profilers: [host]
reports: [markdown, json]
calibrate: off
workloads:
  - name: faulty
    variants: [ok, wrong]
    params: {n: 2^10..2^12, mode: [a, b]}
)",
                             "suite.yaml");
  CHECK(s.output == "out-dir");
  CHECK_FALSE(s.isolate);
  CHECK(s.timeout_s == 5);
  CHECK(s.threads == 3);
  CHECK(s.measure.warmup_runs == 2);
  CHECK(s.measure.max_samples == 9);
  CHECK(s.profilers == std::vector<std::string>{"host"});
  CHECK(s.calibrate == "off");
  REQUIRE(s.workloads.size() == 1);
  CHECK(s.workloads[0].params.at("n") == std::vector<std::string>{"1024", "2048", "4096"});
  const auto points = plan_points(s, faulty_registry());
  CHECK(points.size() == 2 * 3 * 2); // variants x n x mode
  CHECK(points.front().params.at("scale") == "1.5"); // the declared default
}

TEST_CASE("config: YAML syntax errors give file:line:column", "[config]") {
  CHECK_THROWS_WITH(parse_suite("workloads:\n  - name: [unclosed\n", "bad.yaml"), Contains("bad.yaml:") && Contains("invalid YAML"));
}

TEST_CASE("config: unknown keys are named with their position and a did-you-mean", "[config]") {
  CHECK_THROWS_WITH(parse_suite("timout: 5\n", "s.yaml"),
                    Contains("s.yaml:1:1") && Contains("unknown key 'timout'") && Contains("did you mean 'timeout'"));
  CHECK_THROWS_WITH(parse_suite("measure:\n  max_tiem: 3\n", "s.yaml"),
                    Contains("s.yaml:2:3") && Contains("'max_tiem'") && Contains("max_time"));
  CHECK_THROWS_WITH(parse_suite("workloads:\n  - name: faulty\n    param: {n: 1}\n", "s.yaml"),
                    Contains("s.yaml:3:5") && Contains("did you mean 'params'"));
}

TEST_CASE("config: wrong types say what was expected", "[config]") {
  CHECK_THROWS_WITH(parse_suite("timeout: soon\n", "s.yaml"), Contains("s.yaml:1:10") && Contains("must be a number"));
  CHECK_THROWS_WITH(parse_suite("isolate: maybe\n", "s.yaml"), Contains("must be true or false"));
  CHECK_THROWS_WITH(parse_suite("workloads: vector\n", "s.yaml"), Contains("s.yaml:1:12") && Contains("must be a list"));
  CHECK_THROWS_WITH(parse_suite("measure: 3\n", "s.yaml"), Contains("must be a mapping"));
  CHECK_THROWS_WITH(parse_suite("measure: {min_samples: 2.5}\n", "s.yaml"), Contains("whole number"));
  CHECK_THROWS_WITH(parse_suite("calibrate: sometimes\n", "s.yaml"), Contains("off, cached, quick, full"));
}

TEST_CASE("config: impossible ranges are errors with a position", "[config]") {
  CHECK_THROWS_WITH(parse_suite("workloads:\n  - name: faulty\n    params: {n: 2^20..2^10}\n", "s.yaml"),
                    Contains("s.yaml:3:") && Contains("start is larger than stop"));
  CHECK_THROWS_WITH(parse_suite("measure: {min_samples: 10, max_samples: 5}\n", "s.yaml"),
                    Contains("min_samples (10) is larger than measure.max_samples (5)"));
  CHECK_THROWS_WITH(parse_suite("measure: {min_time: 10, max_time: 5}\n", "s.yaml"), Contains("min_time"));
  CHECK_THROWS_WITH(parse_suite("timeout: -1\n", "s.yaml"), Contains("between"));
}

TEST_CASE("config: unknown workload, variant or parameter lists the valid names", "[config]") {
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulti\n"),
                    Contains("suite.yaml:2:11") && Contains("unknown workload 'faulti'") &&
                        Contains("did you mean 'faulty'") && Contains("valid workloads: faulty"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    variants: [ok, segfalt]\n"),
                    Contains("suite.yaml:3:20") && Contains("unknown variant 'segfalt'") &&
                        Contains("did you mean 'segfault'") && Contains("abort"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    params: {size: 3}\n"),
                    Contains("unknown parameter 'size'") && Contains("valid parameters: n, mode, scale"));
}

TEST_CASE("config: parameter values are checked against the declared type and bounds", "[config]") {
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    params: {n: 0}\n"), Contains("below the minimum 1"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    params: {n: 1.5}\n"), Contains("expected an integer"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    params: {n: lots}\n"), Contains("expected an integer"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    params: {mode: c}\n"), Contains("expected one of a, b"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    params: {scale: 11}\n"), Contains("above the maximum 10"));
}

TEST_CASE("config: command-line overrides replace the file's values", "[config]") {
  auto s = parse_suite("workloads:\n  - name: faulty\n    params: {n: 1000}\n", "s.yaml");
  cli_overrides cli;
  cli.variants = {"ok"};
  cli.params = {"n=2^10..2^11"};
  cli.output = "elsewhere";
  cli.max_time_s = 0.5;
  apply_overrides(s, cli);
  CHECK(s.output == "elsewhere");
  CHECK(s.measure.max_time_s == 0.5);
  const auto points = plan_points(s, faulty_registry());
  REQUIRE(points.size() == 2);
  CHECK(points[0].params.at("n") == "1024");
  CHECK(points[1].variant == "ok");
  cli_overrides bad;
  bad.params = {"n"};
  CHECK_THROWS_WITH(apply_overrides(s, bad), Contains("name=value"));
}

TEST_CASE("config: the built-in default suite parses", "[config]") {
  const auto s = parse_suite(default_suite_yaml(), "<built-in default suite>");
  CHECK_FALSE(s.workloads.empty());
  CHECK(s.measure.max_time_s <= 1.0); // keeps the default run short
}

TEST_CASE("config: self_timing is off by default, set by the suite or the command line", "[config]") {
  CHECK_FALSE(parse_suite("threads: 2\n", "s.yaml").self_timing);
  auto s = parse_suite("self_timing: true\n", "s.yaml");
  CHECK(s.self_timing);
  CHECK_THROWS_WITH(parse_suite("self_timing: often\n", "s.yaml"), Contains("s.yaml:1:14") && Contains("true or false"));
  CHECK_THROWS_WITH(parse_suite("self_timings: true\n", "s.yaml"), Contains("did you mean 'self_timing'"));
  cli_overrides cli;
  cli.self_timing = false;
  apply_overrides(s, cli);
  CHECK_FALSE(s.self_timing);
}

TEST_CASE("config: the cupti section sets the profiler options, with positions on errors", "[config]") {
  using opts = speedlab::profiling::cupti_options;
  const auto defaults = parse_suite("threads: 1\n", "s.yaml").profiler_options.get<opts>();
  CHECK(defaults.api_records);
  CHECK(defaults.launches == opts::launch_mode::activity);
  const auto s = parse_suite("cupti: {buffer_mib: 1, max_buffer_mib: 4, api_records: false, launch_records: callback,"
                             " clock: offset, driver_api: true}\n",
                             "s.yaml");
  const auto& o = s.profiler_options.get<opts>();
  CHECK(o.buffer_bytes == 1u << 20);
  CHECK(o.max_buffer_bytes == 4u << 20);
  CHECK_FALSE(o.api_records);
  CHECK(o.launches == opts::launch_mode::callback);
  CHECK(o.clock == opts::clock_mode::offset);
  CHECK(o.driver_api);
  CHECK_THROWS_WITH(parse_suite("cupti:\n  launch_records: sometimes\n", "s.yaml"),
                    Contains("s.yaml:2:19") && Contains("activity, callback, none") && Contains("'sometimes'"));
  CHECK_THROWS_WITH(parse_suite("cupti:\n  clok: offset\n", "s.yaml"), Contains("s.yaml:2:3") && Contains("did you mean 'clock'"));
  CHECK_THROWS_WITH(parse_suite("cupti: {buffer_mib: 8, max_buffer_mib: 1}\n", "s.yaml"), Contains("smaller than"));
  CHECK_THROWS_WITH(parse_suite("cupti: on\n", "s.yaml"), Contains("must be a mapping"));
}

TEST_CASE("config: the counters metric set is checked by one function, from the suite or the command line",
          "[config][counters]") {
  CHECK(checked_metric_set("full", "x", "--metrics") == "full");
  CHECK_THROWS_WITH(checked_metric_set("fast", "where", "--metrics"),
                    Contains("where: --metrics: unknown metric set 'fast'"));
  // The suite: a named set, a list of names, and a bad entry with its position.
  CHECK(parse_suite("counters: {metrics: dram, per_kernel: 3}\n", "s.yaml")
            .profiler_options.get<speedlab::profiling::counters_options>()
            .metric_set == "dram");
  const auto listed = parse_suite("counters:\n  metrics: [dram__bytes_read.sum, gpu__time_duration.sum]\n", "s.yaml");
  CHECK(listed.profiler_options.get<speedlab::profiling::counters_options>().metric_set ==
        "dram__bytes_read.sum,gpu__time_duration.sum");
  CHECK_THROWS_WITH(parse_suite("counters:\n  metrics: fastest\n", "s.yaml"),
                    Contains("s.yaml:2:12: counters.metrics: unknown metric set 'fastest'"));
  // The command line: the same check, the same words.
  suite_config s = parse_suite("threads: 1\n", "s.yaml");
  cli_overrides cli;
  cli.metric_set = "dram__bytes_read.sum,,x";
  CHECK_THROWS_WITH(apply_overrides(s, cli), Contains("<command line>: --metrics: metric list") && Contains("not a metric name"));
  cli.metric_set = "full";
  apply_overrides(s, cli);
  CHECK(s.profiler_options.get<speedlab::profiling::counters_options>().metric_set == "full");
}

TEST_CASE("config: duplicate keys are refused with both places", "[config]") {
  CHECK_THROWS_WITH(parse_suite("timeout: 5\nthreads: 2\ntimeout: 9\n", "s.yaml"),
                    Contains("s.yaml:3:1") && Contains("key 'timeout' appears twice") && Contains("first at s.yaml:1:1"));
  CHECK_THROWS_WITH(parse_suite("workloads:\n  - name: faulty\n    params: {n: 1, n: 2}\n", "s.yaml"),
                    Contains("'n' appears twice"));
  // A key that is not a name gets the file and position, not yaml-cpp's "bad conversion".
  CHECK_THROWS_WITH(parse_suite("? [a, b]\n: 1\n", "s.yaml"), Contains("s.yaml:1:") && Contains("must be a single value"));
}

TEST_CASE("config: an empty variants list is an error, not every variant", "[config]") {
  CHECK_THROWS_WITH(parse_suite("workloads:\n  - name: faulty\n    variants: []\n", "s.yaml"),
                    Contains("s.yaml:3:15") && Contains("empty list"));
}

TEST_CASE("config: an empty workloads list is an error naming its line, not every workload", "[config]") {
  CHECK_THROWS_WITH(parse_suite("timeout: 5\nworkloads: []\n", "s.yaml"),
                    Contains("s.yaml:2:12") && Contains("'workloads' is an empty list") &&
                        Contains("selects no workload"));
  // Left out, it still means every workload.
  CHECK(parse_suite("timeout: 5\n", "s.yaml").workloads.empty());
}

TEST_CASE("config: a suite file that is not UTF-8 text is refused, naming the file and the byte", "[config]") {
  speedlab::testing::temp_dir dir;
  const auto nul = dir.path() / "nul.yaml";
  std::ofstream(nul, std::ios::binary) << std::string(3, '\0');
  CHECK_THROWS_WITH(load_suite_file(nul.string()), Contains(nul.string() + ":1:1") && Contains("not text") &&
                                                       Contains("NUL byte") && Contains("YAML"));
  CHECK_THROWS_WITH(parse_suite("timeout: 5\nworkloads: [faulty]\x01\n", "s.yaml"),
                    Contains("s.yaml:2:20") && Contains("byte 0x01") && Contains("control character"));
  CHECK_THROWS_WITH(parse_suite("output: caf\xe9\n", "s.yaml"), Contains("s.yaml:1:12") && Contains("not UTF-8"));
  CHECK_THROWS_WITH(parse_suite(std::string("\xff\xfet\0i\0", 6), "s.yaml"), Contains("UTF-16") && Contains("UTF-8"));
  // UTF-8 text with tabs in comments, CRLF line ends and non-ASCII stays readable.
  CHECK(parse_suite("# caf\xc3\xa9\t\r\noutput: r\xc3\xa9sultats\r\n", "s.yaml").output == "r\xc3\xa9sultats");
}

TEST_CASE("config: YAML nested past the reader's limit says so, with the line", "[config]") {
  const std::string deep = "workloads:\n  - " + std::string(200000, '[') + std::string(200000, ']') + "\n";
  CHECK_THROWS_WITH(parse_suite(deep, "s.yaml"),
                    Contains("s.yaml:2:") && Contains("nested more than") && !Contains("bad file"));
}

TEST_CASE("config: a NUL byte in a name or path is refused, naming the key", "[config]") {
  CHECK_THROWS_WITH(parse_suite("output: \"out\\0put\"\n", "s.yaml"),
                    Contains("s.yaml:1:9") && Contains("output") && Contains("NUL byte"));
  CHECK_THROWS_WITH(parse_suite("workloads: [\"faulty\\0\"]\n", "s.yaml"),
                    Contains("workload name") && Contains("NUL"));
  CHECK_THROWS_WITH(parse_suite("python: \"/usr/bin/python3\\0\"\n", "s.yaml"), Contains("python") && Contains("NUL"));
  CHECK_THROWS_WITH(parse_suite("workloads:\n  - name: faulty\n    params: {\"n\\0\": 1}\n", "s.yaml"),
                    Contains("s.yaml:3:14") && Contains("a key in 'params'") && Contains("NUL"));
}

TEST_CASE("config: the plan is bounded before anything is expanded", "[config][bounds]") {
  // 25,000 sweeps of 4096 points each in one list.
  std::string many = "workloads:\n  - name: faulty\n    params:\n      n: [";
  for (int i = 0; i < 25000; ++i) many += (i ? ",\"1..4096\"" : "\"1..4096\"");
  many += "]\n";
  CHECK_THROWS_WITH(parse_suite(many, "s.yaml"), Contains("at most 4096"));
  // One entry repeated through aliases: 1000 entries of 4096 x 4096 points.
  std::string bomb = "workloads:\n  - &w {name: faulty, params: {n: 1..4096, scale: \"0..4.095:0.001\"}}\n";
  for (int i = 0; i < 999; ++i) bomb += "  - *w\n";
  const auto start = std::chrono::steady_clock::now();
  try {
    const auto s = parse_suite(bomb, "s.yaml");
    CHECK_THROWS_WITH(plan_points(s, faulty_registry()), Contains("at most 100000 points"));
  } catch (const config_error& e) {
    CHECK_THAT(e.what(), Contains("in all")); // the parse budget may stop it first
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  std::string too_many = "workloads:\n";
  for (int i = 0; i < 1001; ++i) too_many += "  - faulty\n";
  CHECK_THROWS_WITH(parse_suite(too_many, "s.yaml"), Contains("at most 1000"));
  // Within one workload the product is checked too.
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    params: {n: 1..4096, scale: \"0..1:0.01\"}\n"),
                    Contains("at most 100000 points"));
}

TEST_CASE("config: integer parameters keep every digit and a point is planned once", "[config]") {
  auto s = parse_suite("workloads:\n  - name: faulty\n    variants: [ok]\n", "s.yaml");
  cli_overrides cli;
  cli.params = {"n=2e9..2e9"};
  apply_overrides(s, cli);
  CHECK_THROWS_WITH(plan_points(s, faulty_registry()), Contains("above the maximum 100000000")); // one clear answer
  cli.params = {"n=9007199254740992..9007199254740993"};
  apply_overrides(s, cli);
  CHECK_THROWS_WITH(plan_points(s, faulty_registry()), Contains("'9007199254740992'") && Contains("above the maximum"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    variants: [ok]\n    params: {n: [1000, 1e3]}\n"),
                    Contains("the value 1000 is given twice"));
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    variants: [ok, ok]\n"), Contains("variant 'ok' is named twice"));
  // Two sweeps that cross: the shared point is planned once, every other point of both is kept.
  const auto crossing = plan("workloads:\n  - name: faulty\n    variants: [ok]\n    params: {n: [1000, 2000, 4000]}\n"
                             "  - name: faulty\n    variants: [ok]\n    params: {n: [500, 1000]}\n");
  std::vector<std::string> ns;
  for (const auto& p : crossing) ns.push_back(p.params.at("n"));
  CHECK(ns == std::vector<std::string>{"1000", "2000", "4000", "500"});
  // The same point with other measurement settings is ambiguous: which one was meant?
  CHECK_THROWS_WITH(plan("workloads:\n  - name: faulty\n    variants: [ok]\n  - name: faulty\n    variants: [ok]\n"
                         "    measure: {min_samples: 7}\n"),
                    Contains("suite.yaml:4:") && Contains("already planned by the entry at suite.yaml:2:") &&
                        Contains("other measurement settings"));
  CHECK(plan("workloads:\n  - name: faulty\n    variants: [ok]\n    params: {n: 2e3}\n").at(0).params.at("n") == "2000");
}
