// analysis/run_settings: compare names every setting that differs between two runs with the
// points it affects, old run.json files still load, and plugins built without optimization
// are flagged in `list`, on the console and at the top of every report (issue 26 items 3, 4).
#include "speedlab_catch.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "analysis/compare.hpp"
#include "analysis/run_settings.hpp"
#include "app/plugins/plugin_loader.hpp"
#include "reports/compare/compare_report.hpp"
#include "test_support.hpp"

using namespace speedlab;

namespace {

point_result measured(const std::string& workload, const std::string& variant, const std::string& kind) {
  point_result p;
  p.workload = workload;
  p.variant = variant;
  p.kind = parse_variant_kind(kind);
  p.params = {{"n", "1024"}};
  p.id = workload + "/" + variant + "/n=1024";
  p.samples_ns = {1e6, 1e6, 1e6};
  p.wall.median = 1e6;
  return p;
}

run_info recorded(int threads) {
  run_info r;
  r.speedlab_version = "0.1.0";
  r.hostname = "ci-1";
  r.cpu_model = "EPYC";
  r.threads = threads;
  r.settings = {{"min_samples", "5"}, {"max_time_s", "3"}};
  r.plugin_builds["vector"] = plugin_build_from_flags(4 | 1 | 2);
  return r;
}

std::filesystem::path unoptimized_dir() { return speedlab::testing::test_plugin_dir() / "unoptimized"; }

} // namespace

TEST_CASE("compare names differing threads with the threads points only", "[compare][settings]") {
  const std::vector<point_result> points = {measured("vector", "serial", "serial"), measured("vector", "threads", "threads"),
                                            measured("scan", "threads", "threads"), measured("vector", "cuda", "cuda")};
  const auto c = analysis::compare_runs(recorded(1), points, recorded(2), points);
  REQUIRE(c.warnings.size() == 1);
  const std::string& w = c.warnings[0];
  CHECK(w.find("different threads (--threads): BASE 1, NEW 2") == 0);
  CHECK(w.find("affects the 2 threads points (vector/threads/n=1024, scan/threads/n=1024)") != std::string::npos);
  // At the top of every rendering of the comparison.
  const auto md = reports::compare_markdown(c);
  CHECK(md.find("> **Warning:** different threads") < md.find("| verdict |"));
  CHECK(reports::compare_html(c).find("Warning: different threads") != std::string::npos);
  CHECK(reports::compare_json(c).at("warnings").at(0) == w);
}

TEST_CASE("compare names every other differing setting", "[compare][settings]") {
  const std::vector<point_result> points = {measured("vector", "serial", "serial"), measured("vector", "cuda", "cuda"),
                                            measured("scan", "serial", "serial")};
  run_info a = recorded(2), b = recorded(2);
  b.hostname = "ci-2";
  b.gpu_name = "H100";
  b.driver_version = "12.4";
  b.speedlab_version = "0.2.0";
  b.settings["min_samples"] = "10";
  b.settings["measure[scan].max_time_s"] = "1";
  b.plugin_builds["vector"] = plugin_build_from_flags(4 | 2); // rebuilt without optimization
  const auto c = analysis::compare_runs(a, points, b, points);
  auto find = [&](const std::string& start) -> std::string {
    for (const auto& w : c.warnings)
      if (w.rfind(start, 0) == 0) return w;
    return "";
  };
  CHECK(find("different host: BASE ci-1, NEW ci-2").find("affects all 3 compared points") != std::string::npos);
  CHECK(find("different GPU: BASE none, NEW H100").find("affects the 1 cuda point (vector/cuda/n=1024)") !=
        std::string::npos);
  CHECK(!find("different CUDA driver: BASE none, NEW 12.4").empty());
  CHECK(!find("different speedlab version: BASE 0.1.0, NEW 0.2.0").empty());
  CHECK(find("different measurement setting 'min_samples': BASE 5, NEW 10").find("affects all 3") != std::string::npos);
  CHECK(find("different measurement setting 'measure[scan].max_time_s': BASE not set, NEW 1")
            .find("affects the 1 scan point (scan/serial/n=1024)") != std::string::npos);
  CHECK(find("different plugin build of 'vector': BASE optimized, NDEBUG, NEW not optimized, NDEBUG")
            .find("affects the 2 vector points") != std::string::npos);
  CHECK(c.warnings.size() == 7);
}

TEST_CASE("a run from before settings were recorded is said once, not guessed", "[compare][settings]") {
  const std::vector<point_result> points = {measured("vector", "serial", "serial")};
  run_info old = recorded(0);
  old.settings.clear();
  old.plugin_builds.clear();
  // An old run.json (no driver_version, threads, settings or plugin_builds keys) still loads.
  nlohmann::json j = old;
  for (const char* key : {"driver_version", "threads", "settings", "plugin_builds"}) j.erase(key);
  const auto loaded = j.get<run_info>();
  CHECK(loaded.threads == 0);
  CHECK(loaded.settings.empty());
  const auto c = analysis::compare_runs(loaded, points, recorded(2), points);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("BASE was written by a speedlab that did not record") == 0);
  CHECK(analysis::compare_runs(loaded, points, loaded, points).warnings.empty());
}

TEST_CASE("a run's settings and a point's plugin build round-trip through JSON", "[compare][settings]") {
  const run_info r = recorded(4);
  const auto back = nlohmann::json(r).get<run_info>();
  CHECK(back.threads == 4);
  CHECK(back.settings == r.settings);
  CHECK(back.plugin_builds == r.plugin_builds);
  point_result p = measured("vector", "serial", "serial");
  CHECK_FALSE(nlohmann::json(p).contains("plugin_build")); // unknown: absent, as in old results
  p.build = plugin_build_from_flags(4);
  const auto q = nlohmann::json(p).get<point_result>();
  CHECK(q.build.unoptimized());
  CHECK(q.build.words() == "not optimized, assertions on");
  CHECK(plugin_build_from_flags(-1).words() == "unknown");
  CHECK(plugin_build_from_flags(7).words() == "optimized, NDEBUG");
}

TEST_CASE("a plugin built with -O0 is flagged by the loader and in list", "[settings][plugin]") {
  app::plugin_registry registry;
  registry.load({unoptimized_dir()});
  REQUIRE(registry.errors().empty());
  const auto* w = registry.find("unoptimized");
  REQUIRE(w);
  CHECK(w->build.unoptimized());
  CHECK(w->build.ndebug == false);
  // The tests' own faulty plugin says how it was built, whatever the build type.
  app::plugin_registry faulty;
  faulty.load({speedlab::testing::faulty_plugin()});
  REQUIRE(faulty.find("faulty"));
  CHECK(faulty.find("faulty")->build.known());

  const auto bin = "'" + speedlab::testing::speedlab_binary().string() + "'";
  const auto text = speedlab::testing::run_command(bin + " list --plugin-path '" + unoptimized_dir().string() + "'");
  CHECK(text.output.find("WARNING: the plugin of workload 'unoptimized'") != std::string::npos);
  CHECK(text.output.find("timings may be affected") != std::string::npos);
  const auto json = speedlab::testing::run_command(bin + " list --json --plugin-path '" + unoptimized_dir().string() + "'");
  const auto j = nlohmann::json::parse(json.output.substr(json.output.find('{')));
  for (const auto& wl : j.at("workloads"))
    if (wl.at("name") == "unoptimized") {
      CHECK(wl.at("build").at("optimized") == false);
      CHECK(wl.at("warnings").size() == 1);
    }
}

TEST_CASE("a run of an unoptimized plugin warns on the console and at the top of every report", "[settings][plugin][cli]") {
  const speedlab::testing::temp_dir tmp;
  const auto out = tmp.path() / "run";
  const auto bin = "'" + speedlab::testing::speedlab_binary().string() + "'";
  const auto r = speedlab::testing::run_command(
      bin + " run --plugin-path '" + unoptimized_dir().string() + "' --workload unoptimized --out '" + out.string() +
      "' --reports md,html,json --calibrate off --profilers host --min-samples 2 --max-samples 3 --warmup 0 --no-python");
  REQUIRE(r.exit_code == 0);
  const auto warning_at = r.output.find("speedlab: WARNING: the plugin of workload 'unoptimized'");
  CHECK(warning_at != std::string::npos);
  CHECK(warning_at < r.output.find("points from")); // at run start, before any point
  const std::string md = speedlab::testing::read_text(out / "report.md");
  CHECK(md.find("> **Warning:** the plugin of workload 'unoptimized'") < md.find("\n## "));
  const std::string html = speedlab::testing::read_text(out / "report.html");
  CHECK(html.find("class=\"build-warning\"") < html.find("<nav"));
  const auto results = nlohmann::json::parse(speedlab::testing::read_text(out / "results.json"));
  REQUIRE(results.contains("warnings"));
  CHECK(results.at("warnings").at(0).get<std::string>().find("timings may be affected") != std::string::npos);
  CHECK(results.at("points").at(0).at("plugin_build").at("optimized") == false);
  CHECK(results.at("run").at("plugin_builds").at("unoptimized").at("optimized") == false);
}
