#include "analysis/program_analysis.hpp"

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/rules.hpp"
#include "analysis/analyze.hpp"
#include "analysis/program_stream.hpp"
#include "analysis/time_split.hpp"
#include "analysis/trace_summary.hpp"
#include "model/profile_stream.hpp"
#include "model/statistics.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"
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
  // This loop waits for its GPU in every step: what a step launched also ran inside it.
  CHECK(a.ranges[1].launched_gpu_ns == Approx(a.ranges[1].gpu_ns));
  CHECK(a.ranges[1].launched_kernels == 20);
  CHECK(a.ranges[0].launched_gpu_ns == Approx(20 * 110.0 * us));
}

TEST_CASE("program: an NVTX range is charged with what it launched, though the GPU runs it later", "[program]") {
  // A host that never waits: 20 steps of 100 us on the host (1 to 3 ms), each launching a
  // 1 ms kernel; the GPU runs them back to back from 4 ms on, after every step has ended.
  profile::process_profile p = bad_loop(100, 0);
  p.process.end_ns = 30 * ms;
  std::uint32_t corr = 1;
  for (std::uint64_t k = 0; k < 20; ++k) {
    const std::uint64_t t = ms + k * 100 * us;
    p.trace.ranges.push_back({t, t + 100 * us, 100, 100, "", "step"});
    p.trace.api_calls.push_back(api(t + 10 * us, t + 20 * us, 100, corr, "cudaLaunchKernel_v7000"));
    p.trace.kernels.push_back(kernel(4 * ms + k * ms, 5 * ms + k * ms, 7, corr, "slow_kernel"));
    ++corr;
  }
  p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
  const auto a = analyze({p});
  REQUIRE(a.ranges.size() == 1);
  CHECK(a.ranges[0].count == 20);
  CHECK(a.ranges[0].gpu_ns == 0);
  CHECK(a.ranges[0].kernels == 0);
  CHECK(a.ranges[0].launched_kernels == 20);
  CHECK(a.ranges[0].launched_gpu_ns == Approx(20.0 * ms));
  // In the JSON too.
  const nlohmann::json j = a;
  CHECK(j["nvtx_ranges"][0]["launched_kernels"] == 20);
  CHECK(j["nvtx_ranges"][0]["launched_gpu_ns"].get<double>() == Approx(20.0 * ms));
}

TEST_CASE("program: what a range launched is the same with dense and with sparse correlation ids", "[program]") {
  // The accumulator looks records up by a table over dense ids (what CUPTI hands out) and
  // sorts them for sparse ones: both must charge each range alike, with two kernels on one
  // call (a graph launch: any other launch call has one kernel), a kernel whose call is not in
  // the trace, and calls out of correlation order.
  auto build = [](std::uint32_t stride) {
    profile::process_profile p = bad_loop(100, 0);
    p.process.end_ns = 40 * ms;
    for (std::uint32_t k = 0; k < 12; ++k) {
      const std::uint64_t t = ms + k * 100 * us;
      const std::uint32_t corr = 1000 + (k % 2 ? 12 - k : k) * stride; // not in correlation order
      p.trace.ranges.push_back({t, t + 100 * us, 100, 100, "", "step"});
      p.trace.api_calls.push_back(
          api(t + 10 * us, t + 20 * us, 100, corr, k % 3 == 0 ? "cudaGraphLaunch_v10000" : "cudaLaunchKernel_v7000"));
      p.trace.kernels.push_back(kernel(4 * ms + k * ms, 4 * ms + k * ms + (k + 1) * us, 7, corr, "a"));
      if (k % 3 == 0) p.trace.kernels.push_back(kernel(30 * ms + k * us, 30 * ms + k * us + 500, 7, corr, "b"));
    }
    p.trace.kernels.push_back(kernel(35 * ms, 36 * ms, 7, 1000 + 13 * stride, "no_call")); // its call is not in the trace
    p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
    return p;
  };
  const auto dense = analyze({build(1)}), sparse = analyze({build(1000003)});
  REQUIRE(dense.ranges.size() == 1);
  REQUIRE(sparse.ranges.size() == 1);
  CHECK(dense.ranges[0].launched_kernels == 16);
  double expected = 4 * 500;
  for (std::uint32_t k = 0; k < 12; ++k) expected += static_cast<double>((k + 1) * us);
  CHECK(dense.ranges[0].launched_gpu_ns == Approx(expected));
  CHECK(sparse.ranges[0].launched_kernels == dense.ranges[0].launched_kernels);
  CHECK(sparse.ranges[0].launched_gpu_ns == dense.ranges[0].launched_gpu_ns);
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
  CHECK(finding_of(a, "gpu-idle-gaps").severity == speedlab::severity::critical);
  CHECK_FALSE(fired(a, "launch-bound")); // tiny-kernels judges it with the activity's measured launch cost
}

TEST_CASE("program rules stay quiet on a clean program and on a process without CUDA", "[program][rules]") {
  const auto a = analyze({clean_loop(), shell()});
  for (const char* name : {"start-up", "gpu-idle-gaps", "alloc-in-loop", "sync-pageable-copies", "tiny-kernels"}) {
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
  CHECK(pt.kind == speedlab::variant_kind::cuda);
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

// ---- streamed: analyze_stream_folder reads each stream one records chunk at a time ----------

namespace {

// The process as the injection library would have written it: a header, its records in
// `chunks` binary chunks (each table cut in pieces, so a chunk holds records of several
// kinds and ranges end up in other chunks than their kernels), a close chunk.
void write_stream(const std::filesystem::path& dir, const profile::process_profile& p, int chunks) {
  std::string error;
  auto w = profile::stream_writer::create(dir / profile::stream_file_name(p.process.host, p.process.pid), error);
  REQUIRE(w);
  REQUIRE(w->write(profile::chunk_type::header, profile::header_json(p.process, 0, 500, "test")));
  for (int c = 0; c < chunks; ++c) {
    trace::device_trace part;
    auto piece = [&](const auto& from, auto& to) {
      const std::size_t lo = from.size() * static_cast<std::size_t>(c) / static_cast<std::size_t>(chunks);
      const std::size_t hi = from.size() * static_cast<std::size_t>(c + 1) / static_cast<std::size_t>(chunks);
      to.assign(from.begin() + static_cast<long>(lo), from.begin() + static_cast<long>(hi));
    };
    piece(p.trace.kernels, part.kernels), piece(p.trace.memcpys, part.memcpys), piece(p.trace.memsets, part.memsets);
    piece(p.trace.api_calls, part.api_calls), piece(p.trace.syncs, part.syncs), piece(p.trace.ranges, part.ranges);
    piece(p.trace.overheads, part.overheads);
    REQUIRE(w->write_bytes(profile::chunk_type::records_binary, profile::records_binary(1000 + c, part)));
  }
  if (!p.process.truncated) REQUIRE(w->write(profile::chunk_type::close, profile::close_json(p.process.end_ns, "exit", 0)));
}

void check_same(const analysis::program_analysis& streamed, const analysis::program_analysis& whole) {
  CHECK(nlohmann::json(streamed).dump(1) == nlohmann::json(whole).dump(1));
  REQUIRE(streamed.result.findings.size() == whole.result.findings.size());
  for (std::size_t i = 0; i < whole.result.findings.size(); ++i) {
    CHECK(streamed.result.findings[i].rule == whole.result.findings[i].rule);
    CHECK(streamed.result.findings[i].point_id == whole.result.findings[i].point_id);
    CHECK(streamed.result.findings[i].estimated_gain == Approx(whole.result.findings[i].estimated_gain));
  }
  CHECK(streamed.result.notes == whole.result.notes);
}

} // namespace

TEST_CASE("program: a folder analysed stream by stream equals the analysis of the whole traces", "[program]") {
  testing::temp_dir dir;
  auto truncated = clean_loop(300);
  truncated.process.truncated = true;
  write_stream(dir.path(), bad_loop(), 7);
  write_stream(dir.path(), clean_loop(), 1);
  write_stream(dir.path(), bad_loop(101, 10, "other_kernel"), 3);
  write_stream(dir.path(), truncated, 2);
  std::vector<std::string> messages;
  const auto streamed = analysis::analyze_stream_folder(dir.path(), {}, {}, {}, &messages);
  const auto read = profile::read_stream_folder(dir.path());
  const auto whole = analysis::analyze_program(read.processes, {}, {});
  CHECK(messages == read.messages);
  REQUIRE(streamed.processes.size() == 4);
  CHECK(streamed.records == whole.records);
  check_same(streamed, whole);
  CHECK(fired(streamed, "alloc-in-loop"));
  CHECK(streamed.processes[0].gaps.count == whole.processes[0].gaps.count);
  CHECK(streamed.processes[0].gaps.count > 0);
}

TEST_CASE("program: the streamed summary of recorded streams matches the trace functions", "[program]") {
  // Streams recorded on the GPU machine (tests/fixtures/profile): the accumulator's split
  // against compute_time_splits, its trace statistics against summarize_trace.
  const auto root = speedlab::testing::fixture_dir() / "profile";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    if (e.path().extension() == ".slstream") files.push_back(e.path());
  REQUIRE(files.size() >= 4);
  for (const auto& f : files) {
    INFO(f.filename().string());
    const auto r = profile::read_stream(f);
    REQUIRE(r.valid);
    const auto& p = r.profile;
    // Launch calls in windows: the split holds an estimate and the launch counts are scaled,
    // which the trace functions do not do (launch_sampling_analysis_test.cpp holds those).
    if (profile::launch_calls_sampled(p)) continue;
    const auto streamed = analysis::summarize_stream(f);
    REQUIRE(streamed.valid);
    const auto s = analysis::summarize_process(p);
    REQUIRE(s.split);
    REQUIRE(streamed.summary.split);
    const auto split = analysis::compute_time_splits(p.trace, {{s.window_start, s.window_end, 0, 0}}).front();
    for (auto field : {&time_split::kernel, &time_split::h2d, &time_split::d2h, &time_split::copy_other,
                       &time_split::memset, &time_split::sync, &time_split::api, &time_split::host, &time_split::wall_ns}) {
      CHECK((*s.split).*field == split.*field);
      CHECK((*streamed.summary.split).*field == split.*field);
    }
    const auto t = analysis::summarize_trace(p.trace);
    for (const auto* x : {&s.trace, &streamed.summary.trace}) {
      CHECK(x->kernel_launches == t.kernel_launches);
      CHECK(x->kernel_ns == t.kernel_ns);
      REQUIRE(x->kernels.size() == t.kernels.size());
      for (std::size_t i = 0; i < t.kernels.size(); ++i) {
        CHECK(x->kernels[i].name == t.kernels[i].name);
        CHECK(x->kernels[i].launches == t.kernels[i].launches);
        CHECK(x->kernels[i].median_ns == t.kernels[i].median_ns);
        CHECK(x->kernels[i].grid == t.kernels[i].grid);
        CHECK(x->kernels[i].block == t.kernels[i].block);
      }
      CHECK(x->h2d.count == t.h2d.count);
      CHECK(x->h2d.pageable_bytes == t.h2d.pageable_bytes);
      CHECK(x->d2h.ns == t.d2h.ns);
      CHECK(x->copy_kernel_overlap_ns == t.copy_kernel_overlap_ns);
      CHECK(x->sync_count == t.sync_count);
      CHECK(x->sync_ns == t.sync_ns);
      CHECK(x->launch_calls == t.launch_calls);
      CHECK(x->kernel_durations.size() == t.kernel_durations.size());
    }
    CHECK(nlohmann::json(*streamed.summary.split) == nlohmann::json(*s.split));
    CHECK(streamed.summary.gaps.count == s.gaps.count);
    CHECK(streamed.summary.launch_call_median_ns == s.launch_call_median_ns);
  }
  // A folder of several processes (Python multiprocessing, spawn).
  const auto whole = analysis::analyze_program(profile::read_stream_folder(root / "mp_spawn").processes, {}, {});
  check_same(analysis::analyze_stream_folder(root / "mp_spawn", {}, {}), whole);
}

namespace {

// 700 ms of start-up (640 ms of it in cudaFuncGetAttributes), then 298 steps of 1 ms, each an
// NVTX range "train_step" whose kernel runs 2 ms later, back to back: over its lifetime the
// GPU idles 70%, over its steps hardly at all.
profile::process_profile slow_start() {
  profile::process_profile p;
  p.process.pid = 300;
  p.process.parent_pid = 1;
  p.process.command_line = {"/usr/bin/python3", "train.py"};
  p.process.used_cuda = true;
  p.process.start_ns = 0;
  p.process.end_ns = 1002 * ms;
  p.trace.backend = "cupti";
  p.trace.process = 300;
  std::uint32_t corr = 1;
  p.trace.api_calls.push_back(api(10 * ms, 12 * ms, 300, corr++, "cudaGetDevice"));
  p.trace.api_calls.push_back(api(50 * ms, 690 * ms, 300, corr++, "cudaFuncGetAttributes_v2020"));
  for (std::uint64_t i = 0; i < 298; ++i) {
    const std::uint64_t t = 700 * ms + i * ms;
    p.trace.ranges.push_back({t, t + ms, 300, 300, "", "train_step"});
    const std::uint32_t launch = corr++;
    p.trace.api_calls.push_back(api(t, t + 5 * us, 300, launch, "cudaLaunchKernel_v7000"));
    p.trace.kernels.push_back(kernel(t + 2 * ms, t + 3 * ms, 7, launch, "step_kernel"));
  }
  p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
  return p;
}

} // namespace

TEST_CASE("program: start-up is one finding, the idle rules judge the steady state", "[program][rules]") {
  const auto a = analyze({slow_start()});
  const auto& p = a.processes.at(0);
  REQUIRE(p.startup.known);
  CHECK(p.startup.to_first_kernel_ns == Approx(702.0 * ms));
  CHECK(p.startup.steady_start_ns == Approx(700.0 * ms)); // the first train_step
  CHECK(p.startup.steady_method == "nvtx:train_step");
  CHECK(p.startup.idle_ns == Approx(700.0 * ms));
  REQUIRE_FALSE(p.startup.calls.empty());
  CHECK(p.startup.calls[0].name == "cudaFuncGetAttributes");
  CHECK(p.startup.calls[0].total_ns == Approx(640.0 * ms));
  REQUIRE(p.steady_split);
  CHECK(p.steady_split->wall_ns == Approx(302.0 * ms));
  CHECK(p.steady_split->kernel == Approx(298.0 * ms));
  CHECK(p.split->kernel == Approx(298.0 * ms)); // the lifetime's split is kept for the reports
  CHECK(p.split->wall_ns == Approx(1002.0 * ms));
  CHECK(a.points.at(0).split_median->wall_ns == Approx(1002.0 * ms));

  const auto& f = finding_of(a, "start-up");
  CHECK(f.title == "start-up: 702 ms before the first kernel, 640 ms of it in cudaFuncGetAttributes");
  CHECK(evidence(f, "before the first kernel: cudaFuncGetAttributes") == "640 ms in 1 call(s)");
  // Over the lifetime the GPU idles 70% while the host works (host-bound's 50%); over the
  // steps 1.3%: start-up must not read as a steady-state problem.
  CHECK_FALSE(fired(a, "host-bound"));
  CHECK_FALSE(fired(a, "gpu-idle-gaps"));
  CHECK(p.gaps.count == 0);
}

TEST_CASE("program: a short start-up is no finding; without steps the steady state starts at the first kernel",
          "[program][rules]") {
  auto p = slow_start();
  p.trace.ranges.clear();
  const auto a = analyze({p});
  CHECK(a.processes.at(0).startup.steady_method == "first kernel");
  CHECK(a.processes.at(0).startup.steady_start_ns == Approx(702.0 * ms));
  CHECK(fired(a, "start-up"));
  const auto b = analyze({bad_loop()}); // 1 ms before its first step of 121 ms
  CHECK(b.processes.at(0).startup.known);
  CHECK_FALSE(fired(b, "start-up"));
}

namespace {

// What a finding says, without whose it is (a suite point and a process have other ids).
std::vector<std::string> said(const std::vector<analysis::finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    std::string s = f.rule + " | " + to_string(f.severity) + " | " + f.title + " | " + f.threshold;
    for (const auto& e : f.evidence) s += " | " + e.name + ": " + e.value;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The suite path: the trace as a run's point measured it (its split from compute_time_splits,
// one repetition), analysed by analyze() with the trace loaded and its activity summarized.
std::vector<analysis::finding> suite_findings(const profile::process_profile& p) {
  point_result point;
  point.id = "recorded/cuda";
  point.workload = "recorded";
  point.variant = "cuda";
  point.kind = speedlab::variant_kind::cuda;
  point.splits = analysis::compute_time_splits(p.trace);
  REQUIRE(point.splits.size() == 1);
  point.split_median = point.split_q1 = point.split_q3 = point.splits.front();
  point.samples_ns = {point.splits.front().wall_ns};
  point.wall = stats::summarize(point.samples_ns);
  point.duration_s = point.splits.front().wall_ns / 1e9;
  point.dropped_records = std::max(p.process.dropped_records, p.trace.dropped_records);
  point.profiler = p.trace.backend;
  analysis::analysis_options o;
  o.activity_from_traces = true;
  const auto load = [&](const point_result&) { return std::optional<trace::device_trace>(p.trace); };
  return analysis::analyze({point}, device_model{}, load, o).findings;
}

} // namespace

TEST_CASE("one rule set: a trace as a suite point and as a profiled process gets the same findings",
          "[program][rules][paths]") {
  // The synthetic programs fire the activity rules (start-up, gaps, allocations, pageable
  // copies, tiny kernels) and the point rules; the recorded streams are real programs.
  std::vector<std::pair<std::string, profile::process_profile>> cases{
      {"bad loop", bad_loop()}, {"slow start", slow_start()}, {"clean loop", clean_loop()}};
  const auto root = speedlab::testing::fixture_dir() / "profile";
  for (const char* name : {"cupy_vector.slstream", "numba_pi.slstream", "torch_mlp.slstream"}) {
    auto r = profile::read_stream(root / name);
    REQUIRE(r.valid);
    cases.emplace_back(name, std::move(r.profile));
  }
  std::set<std::string> rules_seen;
  for (const auto& [name, p] : cases) {
    INFO(name);
    const auto process = analysis::analyze_program(std::vector<profile::process_profile>{p}, {}, device_model{});
    const auto suite = suite_findings(p);
    CHECK(said(suite) == said(process.result.findings));
    for (const auto& f : process.result.findings) rules_seen.insert(f.rule);
  }
  // Both paths went through rules that need the activity and rules that need only the split.
  for (const char* r : {"start-up", "gpu-idle-gaps", "alloc-in-loop", "sync-pageable-copies", "tiny-kernels"}) {
    INFO(r);
    CHECK(rules_seen.count(r) == 1);
  }
  CHECK(rules_seen.size() > 5);
}

TEST_CASE("one rule set: without an activity the activity rules stay quiet and launch-bound judges",
          "[program][rules][paths]") {
  // A suite's traces (repetitions of a harness) leave activity_from_traces off.
  auto p = bad_loop();
  for (auto& k : p.trace.kernels) k.end = k.start + 2 * us; // shorter than the assumed 5 us launch
  point_result point;
  point.id = "loop/cuda";
  point.workload = "loop";
  point.variant = "cuda";
  point.kind = speedlab::variant_kind::cuda;
  point.splits = analysis::compute_time_splits(p.trace);
  point.split_median = point.split_q1 = point.split_q3 = point.splits.front();
  point.samples_ns = {point.splits.front().wall_ns};
  point.wall = stats::summarize(point.samples_ns);
  const auto load = [&](const point_result&) { return std::optional<trace::device_trace>(p.trace); };
  const auto findings = analysis::analyze({point}, device_model{}, load, analysis::analysis_options{}).findings;
  std::set<std::string> rules;
  for (const auto& f : findings) rules.insert(f.rule);
  for (const char* r : {"start-up", "gpu-idle-gaps", "alloc-in-loop", "sync-pageable-copies", "tiny-kernels"}) {
    INFO(r);
    CHECK(rules.count(r) == 0);
  }
  CHECK(rules.count("launch-bound") == 1); // judged per repetition against the device's launch latency
  // The same trace as a process: tiny-kernels judges it against the measured launch cost instead.
  const auto process = analysis::analyze_program(std::vector<profile::process_profile>{p}, {}, device_model{});
  CHECK_FALSE(fired(process, "launch-bound"));
  CHECK(fired(process, "tiny-kernels"));
}
