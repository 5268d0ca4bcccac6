// Which variants the rules judge, against which baselines (docs/analysis.md, "Which variants
// each rule judges"): C++ against C++, a Python variant against the lesson's Python baseline,
// and a comparison across languages only where it says "C++".
#include <algorithm>

#include "analysis/comparisons.hpp"
#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"
#include "analysis_test_support.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {

point_result python_point(const std::string& workload, const std::string& variant, const std::string& kind,
                          std::map<std::string, std::string> params, std::vector<double> samples, int threads = 1) {
  point_result p = make_point(workload, variant, kind, std::move(params), std::move(samples), threads);
  p.language = "python";
  return p;
}

const std::map<std::string, std::string> at_n = {{"n", "65536"}};

// The lesson's shape: C++ serial fast, the Python loop slow, Numba near C++, its parallel
// build on 2 threads.
struct lesson {
  point_result serial = make_point("mandel", "serial", "serial", at_n, spread(1e6, 0.01));
  point_result threads = make_point("mandel", "threads", "threads", at_n, spread(0.55e6, 0.01), 2);
  point_result py_numpy = python_point("mandel", "py-numpy", "serial", at_n, spread(8e6, 0.01));
  point_result py_numba = python_point("mandel", "py-numba", "serial", at_n, spread(1.2e6, 0.01));
  point_result py_parallel = python_point("mandel", "py-numba-parallel", "threads", at_n, spread(0.65e6, 0.01), 2);
};

bool mentions_serial_unlabelled(const analysis::finding& f) {
  const auto unlabelled = [](const std::string& s) {
    for (std::size_t at = s.find("serial"); at != std::string::npos; at = s.find("serial", at + 1))
      if (at < 4 || s.compare(at - 4, 4, "C++ ") != 0) return true;
    return false;
  };
  if (unlabelled(f.title)) return true;
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const analysis::evidence_item& e) { return unlabelled(e.name); });
}

} // namespace

TEST_CASE("a Python threads variant is judged against its own serial build, not C++ serial", "[rules][scope]") {
  lesson l;
  const auto r = run({l.serial, l.threads, l.py_numpy, l.py_numba, l.py_parallel}, h100());
  const auto f = findings_of(r, "parallel-efficiency", l.py_parallel.id);
  REQUIRE(f.size() == 1);
  CHECK(f[0].compared_with == l.py_numba.id);
  CHECK(f[0].title.find("than py-numba (") != std::string::npos); // 1.2 / 0.65 = 1.85x: 92.3% efficiency
  CHECK(evidence(f[0], "py-numba median") == "1.20 ms");
  CHECK_FALSE(mentions_serial_unlabelled(f[0]));
  // Against C++ serial it would be 1.54x, 77%: another verdict.
  INFO(f[0].title);
  CHECK(f[0].title.find("92.3% efficiency") != std::string::npos);

  // The C++ threads variant still against C++ serial, in the words it always had.
  const auto cpp = findings_of(r, "parallel-efficiency", l.threads.id);
  REQUIRE(cpp.size() == 1);
  CHECK(cpp[0].compared_with == l.serial.id);
  CHECK(cpp[0].title.find("than serial") != std::string::npos);
  CHECK_FALSE(evidence(cpp[0], "serial median").empty());
}

TEST_CASE("a Python threads variant slower than C++ serial gets no threads finding from it", "[rules][scope]") {
  // The default suite's case: py-numba-parallel 9x slower than C++ serial, with no Python
  // serial variant at this size (the Python loop stops at small sizes).
  const auto serial = make_point("convolution", "serial", "serial", at_n, spread(1e6, 0.01));
  auto parallel = python_point("convolution", "py-numba-parallel", "threads", at_n, spread(9e6, 0.01), 2);
  parallel.cpu_utilization = 1.9;
  const auto r = run({serial, parallel}, h100());
  for (const auto& f : r.findings) {
    CHECK(f.compared_with.empty());
    CHECK(f.rule != "poor-scaling");
    CHECK(f.rule != "parallel-efficiency");
  }
}

TEST_CASE("a Python threads variant without its serial build falls back to py-numpy", "[rules][scope]") {
  const auto serial = make_point("mc", "serial", "serial", at_n, spread(1e6, 0.01));
  const auto numpy = python_point("mc", "py-numpy", "serial", at_n, spread(2e6, 0.01));
  const auto loop = python_point("mc", "py-loop", "serial", at_n, spread(90e6, 0.01));
  const auto pool = python_point("mc", "py-multiprocessing", "threads", at_n, spread(40e6, 0.01), 2);
  const auto r = run({serial, numpy, loop, pool}, h100());
  const auto f = findings_of(r, "poor-scaling", pool.id);
  REQUIRE(f.size() == 1);
  CHECK(f[0].compared_with == numpy.id);
  CHECK(f[0].title == "2 threads are 20.0x slower than py-numpy");
  CHECK(f[0].explanation.find("the plain loop") == std::string::npos);
  CHECK_FALSE(mentions_serial_unlabelled(f[0]));
}

TEST_CASE("a C++ variant is never judged against a Python one", "[rules][scope]") {
  // Only Python serial variants at these parameters: the C++ threads and CUDA variants have no
  // serial baseline, so no rule compares them.
  const auto numpy = python_point("vector", "py-numpy", "serial", at_n, spread(1e6, 0.01));
  const auto threads = make_point("vector", "threads", "threads", at_n, spread(5e6, 0.01), 2);
  const auto gpu = cuda_point("vector", "cuda", at_n, make_split(1e5, 2e6, 2e6, 1e5));
  const auto r = run({numpy, threads, gpu}, h100());
  for (const auto& f : r.findings) CHECK(f.compared_with.empty());
  for (const auto& s : r.speedups) {
    INFO(s.point_id << " over " << s.baseline_point_id);
    if (s.point_id != numpy.id) CHECK(s.baseline.rfind("py-", 0) == std::string::npos);
  }
}

TEST_CASE("a Python GPU variant is too small against py-numpy, not against C++ serial", "[rules][scope]") {
  const auto serial = make_point("vector", "serial", "serial", at_n, spread(0.05e6, 0.01));
  const auto numpy = python_point("vector", "py-numpy", "serial", at_n, spread(0.5e6, 0.01));
  auto cupy = cuda_point("vector", "py-cupy", at_n, make_split(0.05e6, 0.1e6, 0.1e6, 0.05e6));
  cupy.language = "python";
  auto r = run({serial, numpy, cupy}, h100());
  CHECK(findings_of(r, "problem-too-small", cupy.id).empty()); // 0.3 ms beats NumPy's 0.5 ms

  const auto slow_numpy = python_point("vector", "py-numpy", "serial", at_n, spread(0.1e6, 0.01));
  r = run({serial, slow_numpy, cupy}, h100());
  const auto f = findings_of(r, "problem-too-small", cupy.id);
  REQUIRE(f.size() == 1);
  CHECK(f[0].compared_with == slow_numpy.id);
  CHECK(f[0].title == "the GPU variant is 3.00x slower than py-numpy at this size");
  CHECK_FALSE(mentions_serial_unlabelled(f[0]));
}

TEST_CASE("speedups: a Python variant over C++ serial first (named), then over its Python baseline", "[rules][scope]") {
  lesson l;
  const auto r = run({l.serial, l.threads, l.py_numpy, l.py_numba, l.py_parallel}, h100());
  std::vector<std::string> of_parallel, of_threads;
  for (const auto& s : r.speedups) {
    if (s.point_id == l.py_parallel.id) of_parallel.push_back(s.baseline);
    if (s.point_id == l.threads.id) of_threads.push_back(s.baseline);
  }
  CHECK(of_parallel == std::vector<std::string>{"serial", "py-numba"});
  CHECK(of_threads == std::vector<std::string>{"serial"});
}

TEST_CASE("crossovers: a Python series against C++ serial and its Python baseline, C++ never against Python",
          "[rules][scope]") {
  std::vector<point_result> points;
  for (const double n : {1e3, 1e4, 1e5, 1e6}) {
    const std::map<std::string, std::string> at{{"n", fmt::format("{:.0f}", n)}};
    points.push_back(make_point("v", "serial", "serial", at, spread(10 * n, 0.01)));
    points.push_back(make_point("v", "threads", "threads", at, spread(20e3 + 5 * n, 0.01), 2));
    points.push_back(python_point("v", "py-numba", "serial", at, spread(12 * n, 0.01)));
    points.push_back(python_point("v", "py-numba-parallel", "threads", at, spread(50e3 + 6 * n, 0.01), 2));
  }
  const auto r = run(points, h100());
  std::map<std::string, std::vector<std::string>> baselines;
  for (const auto& c : r.crossovers)
    if (c.with_transfers) baselines[c.variant].push_back(c.baseline);
  CHECK(baselines["threads"] == std::vector<std::string>{"serial"});
  CHECK(baselines["py-numba"] == std::vector<std::string>{"serial"});
  CHECK(baselines["py-numba-parallel"] == std::vector<std::string>{"serial", "py-numba"});
  // The threads-crossover finding of the Python series names its Python baseline.
  const auto f = findings_of(r, "threads-crossover");
  for (const auto& x : f) {
    if (x.variant != "py-numba-parallel") continue;
    CHECK(x.title.rfind("threads beat py-numba ", 0) == 0);
    CHECK(x.compared_with.rfind("v/py-numba/", 0) == 0);
  }
}

TEST_CASE("baseline words label every comparison across languages", "[rules][scope]") {
  using analysis::detail::baseline_words;
  const auto serial = make_point("w", "serial", "serial", at_n, spread(1e6, 0.01));
  const auto naive = make_point("w", "serial-naive", "serial", at_n, spread(1e6, 0.01));
  const auto threads = make_point("w", "threads", "threads", at_n, spread(1e6, 0.01), 2);
  const auto numpy = python_point("w", "py-numpy", "serial", at_n, spread(1e6, 0.01));
  const auto numba = python_point("w", "py-numba-parallel", "threads", at_n, spread(1e6, 0.01), 2);
  CHECK(baseline_words(threads, serial) == "serial");
  CHECK(baseline_words(threads, naive) == "serial");
  CHECK(baseline_words(numba, numpy) == "py-numpy");
  CHECK(baseline_words(numba, serial) == "C++ serial");
  CHECK(baseline_words(numba, naive) == "C++ serial-naive");
  CHECK(baseline_words(threads, numpy) == "Python py-numpy");

  CHECK(analysis::serial_baseline_rank("py-numba-parallel", true, "py-numba") <
        analysis::serial_baseline_rank("py-numba-parallel", true, "py-numpy"));
  CHECK(analysis::serial_baseline_rank("py-cupy", true, "py-numpy") <
        analysis::serial_baseline_rank("py-cupy", true, "py-loop"));
  CHECK(analysis::serial_baseline_rank("threads", false, "serial") <
        analysis::serial_baseline_rank("threads", false, "serial-naive"));
  CHECK(analysis::is_python(numpy));
  CHECK_FALSE(analysis::is_python(serial));
  const auto unlabelled = make_point("w", "py-user", "serial", at_n, spread(1e6, 0.01)); // no language field
  CHECK(analysis::is_python(unlabelled));
}

TEST_CASE("every rule states its scope; the comparing rules name their baselines' language", "[rules][scope]") {
  for (const auto& [name, rule] : analysis::rule_registry()) {
    INFO(name);
    CHECK_FALSE(rule->judges().empty());
  }
  for (const char* name : {"poor-scaling", "parallel-efficiency", "threads-crossover", "problem-too-small"}) {
    INFO(name);
    const auto* r = analysis::find_rule(name);
    REQUIRE(r);
    CHECK(r->judges().find("own language") != std::string::npos);
  }
}
