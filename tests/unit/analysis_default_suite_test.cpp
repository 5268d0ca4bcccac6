// The default suite as a user first runs it, recorded on the 2-core CPU-only development
// machine with the Python variants (NumPy, Numba) installed: tests/fixtures/cpu/default-suite
// (README.md there says how). Every finding compares like with like, and the Python points
// carry the CPU time their worker spent.
#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

#include "analysis/analyze.hpp"
#include "analysis/comparisons.hpp"
#include "app/run/output_folder.hpp"
#include "speedlab_catch.hpp"
#include "test_root.hpp"

using namespace speedlab;

namespace {

struct recorded {
  app::saved_run run;
  analysis::analysis_result result;
  std::map<std::string, const point_result*> by_id;
};

const recorded& default_suite() {
  static const recorded r = [] {
    recorded out;
    out.run = app::load_run(testing::fixture_dir() / "cpu" / "default-suite");
    REQUIRE(out.run.device);
    out.result = analysis::analyze(out.run.points, *out.run.device, nullptr);
    // A moved vector keeps its elements where they are: these pointers outlive the move.
    for (const auto& p : out.run.points) out.by_id[p.id] = &p;
    return out;
  }();
  return r;
}

// Whether `text` says "serial" other than as "C++ serial".
bool unlabelled_serial(const std::string& text) {
  for (auto at = text.find("serial"); at != std::string::npos; at = text.find("serial", at + 1))
    if (at < 4 || text.compare(at - 4, 4, "C++ ") != 0) return true;
  return false;
}

} // namespace

TEST_CASE("default suite: the recording holds C++ and Python points of every lesson", "[default-suite]") {
  const auto& r = default_suite();
  std::size_t python = 0, cpp = 0;
  for (const auto& p : r.run.points)
    if (p.valid()) (analysis::is_python(p) ? python : cpp) += 1;
  CHECK(cpp >= 40);
  CHECK(python >= 40);
  CHECK(r.result.findings.size() >= 20);
}

TEST_CASE("default suite: no finding compares a Python variant with C++ unlabelled", "[default-suite]") {
  const auto& r = default_suite();
  std::size_t on_python = 0, compared = 0;
  for (const auto& f : r.result.findings) {
    const auto it = r.by_id.find(f.point_id);
    REQUIRE(it != r.by_id.end());
    const point_result& p = *it->second;
    if (!f.compared_with.empty()) {
      const auto base = r.by_id.find(f.compared_with);
      REQUIRE(base != r.by_id.end());
      ++compared;
      INFO(f.rule << " on " << f.point_id << " against " << f.compared_with << ": " << f.title);
      if (analysis::is_python(p) != analysis::is_python(*base->second)) CHECK(f.title.find("C++") != std::string::npos);
      CHECK(analysis::is_python(p) == analysis::is_python(*base->second)); // the rules never cross
    }
    if (!analysis::is_python(p)) continue;
    ++on_python;
    INFO(f.rule << " on " << f.point_id << ": " << f.title);
    CHECK_FALSE(unlabelled_serial(f.title));
    for (const auto& e : f.evidence) CHECK_FALSE(unlabelled_serial(e.name));
  }
  CHECK(on_python > 0);
  CHECK(compared > 0);
}

TEST_CASE("default suite: Python points carry their worker's CPU time", "[default-suite]") {
  // Recorded while other builds loaded the 2 cores (load about 14): points measured once
  // waited for a core as often as they ran, so only points with an interval (3 or more
  // repetitions) are held to a floor. Before the worker was measured every Python point read
  // 0.002-0.03: speedlab's own process, waiting for the worker's reply.
  const auto& r = default_suite();
  std::vector<double> measured;
  std::size_t busy_serial = 0;
  double most_parallel = 0;
  for (const auto& p : r.run.points) {
    if (!analysis::is_python(p) || !p.valid() || p.kind == speedlab::variant_kind::cuda) continue;
    INFO(p.id << ": cpu_utilization " << p.cpu_utilization << ", " << p.wall.count << " repetitions");
    if (p.wall.count >= 3) {
      CHECK(p.cpu_utilization > 0.1);
      measured.push_back(p.cpu_utilization);
    }
    // Compute-bound serial Python code keeps its core busy (CPU time > 90% of wall).
    if (p.kind == speedlab::variant_kind::serial && p.cpu_utilization > 0.9 && p.cpu_utilization < 1.2) ++busy_serial;
    if (p.variant == "py-numba-parallel" && p.threads >= 2) most_parallel = std::max(most_parallel, p.cpu_utilization);
  }
  REQUIRE(measured.size() >= 30);
  std::sort(measured.begin(), measured.end());
  CHECK(measured[measured.size() / 2] > 0.9);
  CHECK(busy_serial >= 10);
  // Numba's parallel build kept more than one core busy on its 2 threads somewhere.
  CHECK(most_parallel > 1.0);
}

TEST_CASE("default suite: every critical finding is about a like-with-like comparison or one point",
          "[default-suite]") {
  const auto& r = default_suite();
  for (const auto& f : r.result.findings) {
    if (f.severity != speedlab::severity::critical) continue;
    INFO(f.rule << " on " << f.point_id << ": " << f.title);
    const point_result& p = *r.by_id.at(f.point_id);
    if (!f.compared_with.empty()) CHECK(analysis::is_python(p) == analysis::is_python(*r.by_id.at(f.compared_with)));
    // A threads finding on a point whose cores were busy does not blame idle threads.
    if (p.kind == speedlab::variant_kind::threads && p.cpu_utilization > 0.75 * p.threads)
      CHECK(f.explanation.find("Only ") == std::string::npos);
  }
}

TEST_CASE("default suite on a busy machine: threads that waited for cores are not blamed on the code",
          "[default-suite]") {
  // Recorded with the load measured: other programs kept 1.8 of the 2 cores busy.
  const app::saved_run run = app::load_run(testing::fixture_dir() / "cpu" / "default-suite-busy");
  REQUIRE(run.device);
  const auto result = analysis::analyze(run.points, *run.device, nullptr);
  std::size_t measured = 0;
  for (const auto& p : run.points) measured += p.valid() && p.other_busy_cores >= 0;
  CHECK(measured >= 100);
  CHECK(std::any_of(result.notes.begin(), result.notes.end(), [](const std::string& n) {
    return n.find("other programs kept 1.8 of 2 cores busy") != std::string::npos;
  }));
  std::size_t threads_findings = 0;
  for (const auto& f : result.findings) {
    if (f.rule != "poor-scaling" && f.rule != "parallel-efficiency") continue;
    if (f.severity == speedlab::severity::info) continue; // near-linear and other answers
    INFO(f.rule << " on " << f.point_id << ": " << f.title);
    ++threads_findings;
    CHECK(f.severity == speedlab::severity::warning);
    CHECK(f.title.find("while other programs held") != std::string::npos);
    CHECK(f.estimated_gain == 1.0);
  }
  CHECK(threads_findings >= 10);
  CHECK(std::none_of(result.findings.begin(), result.findings.end(),
                     [](const analysis::finding& f) { return f.severity == speedlab::severity::critical; }));
}
