#include "analysis/program_analysis.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/program_rules.hpp"
#include "speedlab_catch.hpp"
#include "unit/program_fixture.hpp"

using namespace speedlab;
using namespace speedlab::test_program;

namespace {

bool fired(const analysis::program_analysis& a, const std::string& rule, const std::string& point = {}) {
  return std::any_of(a.result.findings.begin(), a.result.findings.end(), [&](const analysis::finding& f) {
    return f.rule == rule && (point.empty() || f.point_id == point);
  });
}

const analysis::finding& finding_of(const analysis::program_analysis& a, const std::string& rule) {
  for (const auto& f : a.result.findings)
    if (f.rule == rule) return f;
  FAIL("no finding of " << rule);
  throw;
}

std::string evidence(const analysis::finding& f, const std::string& name) {
  for (const auto& e : f.evidence)
    if (e.name == name) return e.value;
  return "";
}

analysis::program_analysis analyze(std::vector<profile::process_profile> ps) {
  return analysis::analyze_program(ps, analysis::program_facts{{"sh", "run.sh"}, "", "", "", 0.13, 0, {}}, {});
}

} // namespace

TEST_CASE("program: the split covers each process's wall time and adds up", "[program]") {
  const auto a = analyze({bad_loop()});
  REQUIRE(a.processes.size() == 1);
  REQUIRE(a.processes[0].split);
  const time_split& s = *a.processes[0].split;
  CHECK(s.wall_ns == Approx(121.0 * ms));
  CHECK(s.kernel == Approx(120 * 10.0 * us));
  // The copy itself (100 us) and the GPU-idle rest of its synchronous call (180 us) are D2H time.
  CHECK(s.d2h == Approx(120 * 280.0 * us));
  CHECK(s.kernel + s.h2d + s.d2h + s.copy_other + s.memset + s.sync + s.api + s.host == Approx(s.wall_ns));
  CHECK(s.api == Approx(120 * (50.0 + 30 + 50) * us)); // malloc, launch, free: the GPU idles meanwhile
  CHECK(a.split.wall_ns == Approx(s.wall_ns));
  CHECK(a.d2h.pageable_count == 120);
  CHECK(a.d2h.bytes == Approx(120.0 * (4 << 20)));
}

TEST_CASE("program: the split is summed over the processes that used CUDA", "[program]") {
  const auto a = analyze({bad_loop(), clean_loop(), shell()});
  REQUIRE(a.processes.size() == 3);
  CHECK(a.points.size() == 2);
  CHECK(a.split.wall_ns == Approx(121.0 * ms + 55.0 * ms));
  CHECK(a.split.kernel == Approx(120 * 10.0 * us + 50.0 * ms));
  const auto shell_it = std::find_if(a.processes.begin(), a.processes.end(), [](const auto& p) { return p.info.pid == 50; });
  REQUIRE(shell_it != a.processes.end());
  CHECK_FALSE(shell_it->split);
  CHECK(shell_it->label == "pid 50 (sh)");
}

TEST_CASE("program: kernels by name with launches, mean, grid, block and share", "[program]") {
  const auto a = analyze({bad_loop(), clean_loop(), bad_loop(101, 10)});
  REQUIRE(a.kernels.size() == 2);
  CHECK(a.kernels[0].name == "big_kernel");
  CHECK(a.kernels[0].launches == 50);
  CHECK(a.kernels[0].mean_ns == Approx(1.0 * ms));
  CHECK(a.kernels[1].name == "tiny_kernel");
  CHECK(a.kernels[1].launches == 130);
  CHECK(a.kernels[1].processes == 2);
  CHECK(a.kernels[1].total_ns == Approx(130 * 10.0 * us));
  CHECK(a.kernels[1].grid[0] == 256);
  CHECK(a.kernels[1].block[0] == 128);
  CHECK(a.kernels[0].share + a.kernels[1].share == Approx(1.0));
  CHECK(a.kernels[0].share == Approx(50.0 / 51.3));
}

TEST_CASE("program: NVTX ranges by name with the GPU time inside them", "[program]") {
  auto p = bad_loop(100, 20);
  p.trace.ranges.push_back({ms, 21 * ms, 100, 100, "app", "epoch"});
  const auto a = analyze({p});
  REQUIRE(a.ranges.size() == 2);
  CHECK(a.ranges[0].name == "epoch");
  CHECK(a.ranges[0].domain == "app");
  CHECK(a.ranges[0].count == 1);
  CHECK(a.ranges[0].gpu_ns == Approx(20 * 110.0 * us));
  CHECK(a.ranges[1].name == "step");
  CHECK(a.ranges[1].count == 20);
  CHECK(a.ranges[1].total_ns == Approx(20 * 900.0 * us));
  CHECK(a.ranges[1].gpu_ns == Approx(20 * 110.0 * us)); // the 10 us kernel and the 100 us copy
  CHECK(a.ranges[1].kernels == 20);
}

TEST_CASE("program: per-stream table", "[program]") {
  const auto a = analyze({bad_loop(100, 10), clean_loop()});
  REQUIRE(a.streams.size() == 2);
  const auto& s = a.streams[0].pid == 100 ? a.streams[0] : a.streams[1];
  CHECK(s.stream == 7);
  CHECK(s.kernels == 10);
  CHECK(s.copies == 10);
  CHECK(s.kernel_ns == Approx(10 * 10.0 * us));
  CHECK(s.copy_ns == Approx(10 * 100.0 * us));
}

TEST_CASE("program: GPU idle gaps and what the host was inside", "[program]") {
  const auto a = analyze({bad_loop()});
  const auto& g = a.processes[0].gaps;
  CHECK(g.count == 120 + 119);
  CHECK(g.largest_ns == Approx(700.0 * us));
  CHECK(g.largest_inside == "range step");
  CHECK(g.before_first_ns == Approx(1.1 * ms));
  REQUIRE(g.causes.size() == 2);
  CHECK(g.causes[0].what == "range step");
  CHECK(g.causes[0].gaps == 119);
  CHECK(g.causes[1].what == "cudaMemcpy");
  CHECK(g.causes[1].gaps == 120);
  CHECK(g.causes[1].largest_ns == Approx(190.0 * us));

  analysis::program_options o;
  o.gap_min_ns = 500 * us; // only the gaps between steps
  const auto b = analysis::analyze_program(std::vector<profile::process_profile>{bad_loop()}, {}, {}, o);
  CHECK(b.processes[0].gaps.count == 119);
}

TEST_CASE("program rules fire on the bad loop, with evidence", "[program][rules]") {
  const auto a = analyze({bad_loop()});
  for (const char* r : {"gpu-idle-gaps", "alloc-in-loop", "sync-pageable-copies", "tiny-kernels"}) {
    INFO(r);
    CHECK(fired(a, r, "pid 100"));
  }
  const auto& alloc = finding_of(a, "alloc-in-loop");
  CHECK(evidence(alloc, "after the first kernel launch") == "239"); // all frees and every malloc but the first
  CHECK(evidence(alloc, "per kernel launch") == "1.992");
  const auto& tiny = finding_of(a, "tiny-kernels");
  CHECK(evidence(tiny, "median kernel") == "10.0 µs");
  CHECK(evidence(tiny, "launch cost") == "30.0 µs (median launch call of this program)");
  const auto& pageable = finding_of(a, "sync-pageable-copies");
  CHECK(evidence(pageable, "host blocked in the copy calls") == "33.6 ms");
  CHECK(finding_of(a, "gpu-idle-gaps").severity == "critical");
  CHECK_FALSE(fired(a, "launch-bound")); // replaced by tiny-kernels for programs
}

TEST_CASE("program rules stay quiet on a clean program and on a process without CUDA", "[program][rules]") {
  const auto a = analyze({clean_loop(), shell()});
  for (const auto& [name, rule] : analysis::program_rule_registry()) {
    INFO(name);
    CHECK_FALSE(fired(a, name));
  }
  CHECK(a.processes[0].allocs.allocs == 3);
  CHECK(a.processes[0].allocs.repeated == 0);
}

TEST_CASE("program rules: thresholds", "[program][rules]") {
  SECTION("few steps: no allocation or tiny-kernel finding") {
    const auto a = analyze({bad_loop(100, 10)});
    CHECK_FALSE(fired(a, "alloc-in-loop")); // 19 allocations after the first launch
    CHECK_FALSE(fired(a, "tiny-kernels"));  // 10 launches
    CHECK(fired(a, "sync-pageable-copies"));
  }
  SECTION("pinned copies are no pageable finding") {
    auto p = bad_loop();
    for (auto& m : p.trace.memcpys) m.dst_kind = trace::mem_pinned;
    CHECK_FALSE(fired(analyze({p}), "sync-pageable-copies"));
  }
  SECTION("without launch records the device launch latency is the cost") {
    auto p = bad_loop();
    std::erase_if(p.trace.api_calls, [](const auto& c) { return c.name.starts_with("cudaLaunch"); });
    for (auto& k : p.trace.kernels) k.end = k.start + 2 * us; // shorter than the assumed 5 us
    const auto a = analyze({p});
    CHECK(evidence(finding_of(a, "tiny-kernels"), "launch cost").starts_with("5 us (assumed"));
  }
  SECTION("disabled rules do not run") {
    analysis::program_options o;
    o.disabled_rules = {"gpu-idle-gaps", "host-bound"};
    const auto a = analysis::analyze_program(std::vector<profile::process_profile>{bad_loop()}, {}, {}, o);
    CHECK_FALSE(fired(a, "gpu-idle-gaps"));
    CHECK_FALSE(fired(a, "host-bound"));
    CHECK(fired(a, "alloc-in-loop"));
  }
}

TEST_CASE("program: point rules run on each process", "[program][rules]") {
  // The bad loop idles the GPU in CUDA calls most of the time: the point rule host-bound or
  // synchronization-heavy need not fire, but pageable-memory (copies from pageable memory
  // are 28% of the wall time) does.
  const auto a = analyze({bad_loop()});
  CHECK(fired(a, "pageable-memory", "pid 100"));
  CHECK_FALSE(a.result.what_ifs.empty());
}

TEST_CASE("program: truncated processes and programs without CUDA get notes", "[program]") {
  auto p = bad_loop(100, 10);
  p.process.truncated = true;
  p.process.last_flush_ns = 6 * ms;
  p.trace.repetitions.clear(); // the stream has no closing window: the last flush ends it
  const auto a = analyze({p});
  CHECK(a.processes[0].window_end == 6 * ms);
  CHECK(a.points[0].reason.find("truncated") != std::string::npos);
  REQUIRE_FALSE(a.result.notes.empty());
  CHECK(a.result.notes[0].find("truncated") != std::string::npos);
  CHECK(a.result.notes[0].find("0.006 s") != std::string::npos);

  const auto none = analyze({shell()});
  CHECK(none.points.empty());
  REQUIRE(none.result.notes.size() == 1);
  CHECK(none.result.notes[0].find("no process of the program used CUDA") != std::string::npos);
}

TEST_CASE("program: a process is a point with one window", "[program]") {
  const auto a = analyze({bad_loop()});
  REQUIRE(a.points.size() == 1);
  const auto& pt = a.points[0];
  CHECK(pt.id == "pid 100");
  CHECK(pt.workload == "pid 100 (python3 loop.py)");
  CHECK(pt.kind == "cuda");
  CHECK(pt.samples_ns.size() == 1);
  CHECK(pt.wall.median == Approx(121.0 * ms));
  REQUIRE(pt.split_median);
  CHECK(pt.split_median->kernel == Approx(1.2 * ms));
}

TEST_CASE("program: JSON of facts round-trips and the analysis lists its tables", "[program]") {
  analysis::program_facts f{{"python3", "train.py"}, "2026-11-23T10:00:00Z", "node", "1.0", 12.5, 130, {"a note"}};
  const nlohmann::json j = f;
  const auto back = j.get<analysis::program_facts>();
  CHECK(back.command_line == f.command_line);
  CHECK(back.exit_code == 130);
  CHECK(back.wall_s == 12.5);
  CHECK(back.notes == f.notes);
  const nlohmann::json a = analyze({bad_loop(), shell()});
  CHECK(a["processes"].size() == 2);
  CHECK(a["kernels"][0]["name"] == "tiny_kernel");
  CHECK(a["nvtx_ranges"][0]["count"] == 120);
  CHECK(a["processes"][0]["gaps"]["count"] == 239);
  CHECK(a["processes"][1]["used_cuda"] == false);
}
