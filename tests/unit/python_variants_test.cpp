// The Python bridge (app/python/python_variants.hpp) end to end with a real interpreter: the
// lessons' NumPy and Numba variants validate on the workload's own inputs, and a crash, an
// exception, a hang and a wrong result in a Python variant each become a recorded result.
#include "speedlab_catch.hpp"

#include <filesystem>
#include <fstream>

#include "app/run/isolation.hpp"
#include "app/plugins/plugin_loader.hpp"
#include "app/python/python_variants.hpp"
#include "app/suite/suite_config.hpp"
#include "run_request_support.hpp"
#include "test_support.hpp"

using namespace speedlab;
using namespace speedlab::app;
using Catch::Contains;

namespace {

struct fixture {
  plugin_registry registry;
  std::vector<std::string> notes;
  fixture() {
    REQUIRE(registry.load_file(speedlab::testing::build_plugin_dir() / "libspeedlab-vector.so"));
    REQUIRE(registry.load_file(speedlab::testing::build_plugin_dir() / "libspeedlab-reduction.so"));
    REQUIRE(registry.load_file(speedlab::testing::build_plugin_dir() / "libspeedlab-convolution.so"));
    python_settings settings;
    settings.interpreter = speedlab::testing::test_python();
    settings.files = {(speedlab::testing::fixture_dir() / "python" / "faulty_variants.py").string()};
    notes = add_python_variants(registry, settings).notes;
  }
};

const fixture& shared() {
  static fixture f;
  return f;
}

point_result run(const std::string& workload, const std::string& variant, std::map<std::string, std::string> params,
                 double timeout_s = 30) {
  const auto* w = shared().registry.find(workload);
  REQUIRE(w);
  const variant_spec* v = w->find_variant(variant);
  INFO("variant " << variant << "; notes: " << shared().notes.size());
  REQUIRE(v);
  planned_point pp{workload, variant, std::move(params), {}, {}};
  pp.measure.min_samples = 3;
  pp.measure.max_samples = 20;
  pp.measure.min_time_s = 0;
  // A time cap loose enough that min_samples, not a loaded CI machine, decides the count
  // (0.2 s left 1 sample under a load of 10).
  pp.measure.max_time_s = 10;
  run_request req = testing::request(w, v, pp, 2, "host");
  return run_isolated(req, timeout_s).value();
}

} // namespace

TEST_CASE("python variants: the SDK's array_set checks names and element types", "[python]") {
  float x[4] = {};
  array_set a;
  a.add({"x", element_type::f32, {2, 2}}, x);
  CHECK(a.get<float>("x") == x);
  CHECK(a.count("x") == 4);
  CHECK_THROWS_WITH(a.get<double>("x"), Contains("holds float32"));
  CHECK_THROWS_WITH(a.get<float>("y"), Contains("no array 'y'"));
}

TEST_CASE("python variants: the lessons' variants are listed under their workloads", "[python]") {
  const auto* w = shared().registry.find("vector");
  REQUIRE(w);
  for (const char* name : {"py-numpy", "py-numba", "py-numba-parallel", "py-loop", "py-cupy", "py-cupy-lesson"}) {
    const variant_spec* v = w->find_variant(name);
    INFO(name);
    REQUIRE(v);
    CHECK(v->language == "python");
  }
  CHECK(w->find_variant("py-numba-parallel")->kind == variant_kind::threads);
  CHECK(w->find_variant("py-cupy")->kind == variant_kind::cuda);
  // A variant for a workload that is not loaded is left out with a note naming it.
  bool orphan_noted = false;
  for (const auto& n : shared().notes) orphan_noted |= n.find("py-orphan") != std::string::npos;
  CHECK(orphan_noted);
}

TEST_CASE("python variants: NumPy and Numba validate on the workload's inputs with its check", "[python]") {
  for (const char* variant : {"py-numpy", "py-numba", "py-numba-parallel"}) {
    INFO(variant);
    const auto r = run("vector", variant, {{"n", "4096"}, {"op", "mul"}});
    CHECK(r.status == point_status::ok);
    CHECK(r.language == "python");
    CHECK(r.first_validation.ok);
    CHECK_THAT(r.first_validation.message, Contains("4096"));
    CHECK(r.samples_ns.size() >= 3);
    // The Python side's own time of each compute comes back beside speedlab's.
    REQUIRE(r.self_timed_ns.count("python compute"));
    CHECK(r.self_timed_ns.at("python compute").size() == r.samples_ns.size());
  }
  const auto dot = run("reduction", "py-numpy", {{"n", "4096"}, {"op", "dot"}});
  CHECK(dot.status == point_status::ok);
  CHECK_THAT(dot.first_validation.message, Contains("24576")); // exactly 6n
}

TEST_CASE("python variants: the lesson's convolution in Python validates with the C++ check", "[python]") {
  // Size 45 with a 7 x 7 mask: the zero padding on every border, no multiple of a block.
  const std::map<std::string, std::string> params{{"size", "45"}, {"mask", "7"}};
  for (const char* variant : {"py-loop", "py-numpy", "py-numba", "py-numba-parallel"}) {
    INFO(variant);
    const auto r = run("convolution", variant, params, 60);
    CHECK(r.status == point_status::ok);
    CHECK(r.first_validation.ok);
    CHECK_THAT(r.first_validation.message, Contains("<= 1e-5") && Contains("45 of 45 rows"));
  }
  const auto* w = shared().registry.find("convolution");
  for (const char* name : {"py-numba-cuda-lesson", "py-numba-cuda", "py-cupy-lesson", "py-cupy"}) {
    INFO(name);
    REQUIRE(w->find_variant(name));
    CHECK(w->find_variant(name)->kind == variant_kind::cuda);
  }
  // Past the plain loop's limit: a skip with the reason.
  const auto big = run("convolution", "py-loop", {{"size", "256"}, {"mask", "3"}});
  CHECK(big.status == point_status::skipped);
  CHECK_THAT(big.reason, Contains("size = 64"));
}

namespace {

// Debian's python3 without its site packages: it runs the worker but cannot import numpy.
std::filesystem::path python_without_numpy(const std::filesystem::path& dir) {
  const auto python = dir / "python-without-numpy";
  {
    std::ofstream f(python);
    f << "#!/bin/sh\nexec " << speedlab::testing::test_python() << " -S \"$@\"\n";
  }
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  return python;
}

std::string joined(const python_variants_added& added) {
  std::string all = added.interpreter + "\n";
  for (const auto& n : added.notes) all += n + "\n";
  return all;
}

} // namespace

TEST_CASE("python variants: a chosen interpreter without NumPy is kept; every variant is skipped, named with the "
          "module",
          "[python]") {
  speedlab::testing::temp_dir dir;
  const auto python = python_without_numpy(dir.path());
  plugin_registry registry;
  REQUIRE(registry.load_file(speedlab::testing::build_plugin_dir() / "libspeedlab-vector.so"));
  python_settings settings;
  settings.interpreter = python.string();
  settings.chosen_by = "--python";
  settings.fallbacks = {speedlab::testing::test_python()}; // has NumPy, but --python is never overridden
  const auto added = add_python_variants(registry, settings);
  INFO(joined(added));
  CHECK_THAT(added.interpreter, Contains(python.string()) && Contains("chosen with --python"));
  CHECK_THAT(joined(added), Contains("cannot import numpy") && Contains("--python"));
  const variant_spec* v = registry.find("vector")->find_variant("py-numpy");
  REQUIRE(v);
  REQUIRE(v->unavailable_reason);
  CHECK_THAT(v->unavailable_reason(), Contains("numpy") && Contains("cannot import"));
}

TEST_CASE("python variants: without a chosen interpreter, the first that imports what a variant needs runs it",
          "[python]") {
  speedlab::testing::temp_dir dir;
  const auto python = python_without_numpy(dir.path());
  plugin_registry registry;
  REQUIRE(registry.load_file(speedlab::testing::build_plugin_dir() / "libspeedlab-vector.so"));
  python_settings settings;
  settings.interpreter = python.string(); // stands for python3 on the PATH without NumPy (a pyenv)
  settings.fallbacks = {speedlab::testing::test_python()};
  const auto added = add_python_variants(registry, settings);
  INFO(joined(added));
  const variant_spec* numpy = registry.find("vector")->find_variant("py-numpy");
  REQUIRE(numpy);
  CHECK_FALSE(numpy->unavailable_reason); // runs with the fallback, which has NumPy
  CHECK_THAT(added.interpreter, Contains(python.string()) && Contains("lacks numpy") &&
                                    Contains("using " + speedlab::testing::test_python()));
  CHECK_THAT(joined(added), !Contains("choose it with --python"));
  // And it measures: the point runs in the fallback interpreter and validates.
  const auto* w = registry.find("vector");
  planned_point pp{"vector", "py-numpy", {{"n", "1024"}, {"op", "mul"}}, {}, {}};
  pp.measure.min_samples = 2;
  pp.measure.max_samples = 5;
  pp.measure.min_time_s = 0;
  run_request req = testing::request(w, numpy, pp, 2, "host");
  const auto r = run_isolated(req, 30).value();
  CHECK(r.status == point_status::ok);
}

TEST_CASE("python variants: on this machine, python3 on the PATH then /usr/bin/python3", "[python]") {
  // The case where it exists here (pyenv's python3 first on the PATH, NumPy and Numba
  // in Debian's): with no interpreter chosen, py-numpy and py-numba run wherever one of the
  // two interpreters imports them.
  if (!speedlab::testing::python_imports_numpy("/usr/bin/python3")) {
    WARN("/usr/bin/python3 has no NumPy here: the discovery is not exercised on this machine");
    return;
  }
  plugin_registry registry;
  REQUIRE(registry.load_file(speedlab::testing::build_plugin_dir() / "libspeedlab-vector.so"));
  const auto added = add_python_variants(registry, python_settings{});
  INFO(joined(added));
  const variant_spec* numpy = registry.find("vector")->find_variant("py-numpy");
  REQUIRE(numpy);
  CHECK_FALSE(numpy->unavailable_reason);
  if (!speedlab::testing::python_imports_numpy("python3"))
    CHECK_THAT(added.interpreter, Contains("python3 on the PATH") && Contains("lacks numpy") &&
                                      Contains("using /usr/bin/python3"));
}

TEST_CASE("python variants: a crash, an exception, a hang and a wrong result are recorded", "[python]") {
  const std::map<std::string, std::string> params{{"n", "1024"}, {"op", "mul"}};
  const auto aborted = run("vector", "py-abort", params);
  CHECK(aborted.status == point_status::failed);
  CHECK_THAT(aborted.reason, Contains("Python process ended during compute") && Contains("SIGABRT"));

  const auto raised = run("vector", "py-raise", params);
  CHECK(raised.status == point_status::failed);
  CHECK_THAT(raised.reason, Contains("ZeroDivisionError") && Contains("faulty_variants.py:"));

  const auto hung = run("vector", "py-hang", params, 2);
  CHECK(hung.status == point_status::timeout);

  const auto wrong = run("vector", "py-wrong", params);
  CHECK(wrong.status == point_status::invalid);
  CHECK_THAT(wrong.reason, Contains("1024 of 1024 elements wrong"));

  // The other points are unaffected.
  CHECK(run("vector", "serial", params).status == point_status::ok);
  CHECK(run("vector", "py-noop", params).status == point_status::ok);
}

TEST_CASE("python variants: a missing package or a size past the limit is a skip with the reason", "[python]") {
  const auto missing = run("vector", "py-needs-missing", {{"n", "1024"}, {"op", "mul"}});
  CHECK(missing.status == point_status::skipped);
  CHECK_THAT(missing.reason, Contains("speedlab_no_such_package"));
  const auto big = run("vector", "py-loop", {{"n", "1048576"}, {"op", "mul"}});
  CHECK(big.status == point_status::skipped);
  CHECK_THAT(big.reason, Contains("n = 65536"));
}

TEST_CASE("python variants: an interpreter that cannot start leaves a note, not an error", "[python]") {
  plugin_registry registry;
  REQUIRE(registry.load_file(speedlab::testing::build_plugin_dir() / "libspeedlab-vector.so"));
  python_settings settings;
  settings.interpreter = "/nonexistent/python3";
  settings.chosen_by = "--python";
  const auto notes = add_python_variants(registry, settings).notes;
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Contains("/nonexistent/python3"));
  CHECK(registry.find("vector")->find_variant("py-numpy") == nullptr);
}

TEST_CASE("python variants: the suite keys python and python_variants", "[python]") {
  const auto s = parse_suite("python: /opt/venv/bin/python\npython_variants: [mine.py, /abs/theirs.py]\n",
                             "/suites/s.yaml");
  CHECK(s.python == "/opt/venv/bin/python");
  REQUIRE(s.python_variants.size() == 2);
  CHECK(s.python_variants[0] == "/suites/mine.py"); // relative to the suite file
  CHECK(s.python_variants[1] == "/abs/theirs.py");
  CHECK_THROWS_WITH(parse_suite("python_variants: {a: 1}\n", "s.yaml"), Contains("python_variants"));
  CHECK_THROWS_WITH(parse_suite("python: [a, b]\n", "s.yaml"), Contains("python"));
}
