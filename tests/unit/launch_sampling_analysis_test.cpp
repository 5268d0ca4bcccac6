// The analysis of a profile whose launch calls were recorded in sampled windows (issue 29,
// SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled), tested without a GPU: streams recorded on the GPU
// machine with every launch call (tests/fixtures/profile, tests/fixtures/ranks) are sampled
// after the fact (unit/launch_sampling.hpp: the launch calls outside 20 ms windows every
// 200 ms removed, at several phases), and their analysis is held against the full one's;
// and a job recorded with launch calls in windows (tests/fixtures/ranks/sampled).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "analysis/program_stream.hpp"
#include "analysis/rank_analysis.hpp"
#include "analysis/rank_summary_file.hpp"
#include "model/profile_stream.hpp"
#include "reports/common/program_content.hpp"
#include "reports/common/program_tables.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"
#include "unit/analysis_test_support.hpp"
#include "unit/launch_sampling.hpp"

using namespace speedlab;

namespace {

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint64_t period = 200 * ms, window = 20 * ms; // the library's planned default: 10% of the time
const std::vector<std::uint64_t> phases{0, 50 * ms, 100 * ms, 150 * ms};

profile::process_profile program_fixture(const std::string& name) {
  auto read = profile::read_stream(testing::fixture_dir() / "profile" / name);
  REQUIRE(read.valid);
  return std::move(read.profile);
}

const std::vector<std::string> program_fixtures{"torch_mlp.slstream", "api_source/torch_loop-activity.slstream",
                                                "cupy_vector.slstream", "numba_pi.slstream"};

analysis::program_analysis analyze_one(const profile::process_profile& p) {
  return analysis::analyze_program(std::vector<profile::process_profile>{p}, {}, analysis_test::h100());
}

// The findings as (rule, severity, variant), sorted: what a verdict is.
std::vector<std::tuple<std::string, std::string, std::string>> verdicts(const analysis::program_analysis& a) {
  std::vector<std::tuple<std::string, std::string, std::string>> out;
  for (const auto& f : a.result.findings) out.emplace_back(f.rule, to_string(f.severity), f.variant);
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t launch_calls_of(const profile::process_profile& p) {
  std::size_t n = 0;
  for (const auto& a : p.trace.api_calls) n += trace::classify_api(a.name) == trace::api_kind::launch ? 1 : 0;
  return n;
}

// The rank processes of fixture folders (tests/fixtures/ranks/...).
std::vector<profile::process_profile> rank_fixture(const std::vector<std::string>& folders) {
  std::vector<profile::process_profile> out;
  for (const auto& f : folders)
    for (auto& p : profile::read_stream_folder(testing::fixture_dir() / "ranks" / f).processes)
      if (analysis::identify_rank(p.process).rank) out.push_back(std::move(p));
  return out;
}

const std::map<std::string, std::vector<std::string>> rank_shapes{
    {"outside", {"outside"}}, {"inside", {"inside/rank-0", "inside/rank-1"}}, {"nccl", {"nccl/rank-0", "nccl/rank-1"}}};

// `keep_other`: false also drops the calls of kind `other` outside the windows (attribute
// queries, stream and event calls), leaving between two launches only the waits, polls,
// copies, memsets, allocations and frees to place a launch by.
analysis::rank_analysis sampled_ranks(const std::vector<profile::process_profile>& ranks, std::uint64_t phase,
                                      bool keep_other = true) {
  std::vector<analysis::rank_summary> out;
  for (const auto& p : ranks) {
    profile::process_profile s = test_sampling::sample_launch_calls(p, period, window, phase);
    if (!keep_other) {
      auto& c = s.trace.api_calls;
      c.erase(std::remove_if(c.begin(), c.end(),
                             [&s](const trace::api_record& a) {
                               return trace::classify_api(a.name) == trace::api_kind::other &&
                                      !test_sampling::inside_windows(s.launch_windows, a.start);
                             }),
              c.end());
    }
    out.push_back(analysis::summarize_rank(s));
  }
  return analysis::analyze_ranks(std::move(out));
}

analysis::rank_analysis full_ranks(const std::vector<profile::process_profile>& ranks) {
  std::vector<analysis::rank_summary> out;
  for (const auto& p : ranks) out.push_back(analysis::summarize_rank(p));
  return analysis::analyze_ranks(std::move(out));
}

// The straggler, its excess and each rank's wait per step of `sampled` against `full`: within
// 2% (issue 29's figure); a wait below 2% of the excess (a rank that waits for nobody) within
// 2% of the excess.
void check_ranks_agree(const analysis::rank_analysis& full, const analysis::rank_analysis& sampled) {
  REQUIRE(full.straggler);
  REQUIRE(sampled.straggler);
  CHECK(*sampled.straggler == *full.straggler);
  CHECK(sampled.steps == full.steps);
  CHECK(sampled.wait_method == full.wait_method);
  CHECK(sampled.straggler_excess_ns == Approx(full.straggler_excess_ns).epsilon(0.02));
  REQUIRE(sampled.wait_per_step_ns.size() == full.wait_per_step_ns.size());
  for (std::size_t i = 0; i < full.wait_per_step_ns.size(); ++i) {
    INFO("rank index " << i << ": waits " << sampled.wait_per_step_ns[i] << " ns per step, fully recorded "
                       << full.wait_per_step_ns[i]);
    CHECK(sampled.wait_per_step_ns[i] ==
          Approx(full.wait_per_step_ns[i]).epsilon(0.02).margin(0.02 * full.straggler_excess_ns));
  }
}

} // namespace

TEST_CASE("launch sampling simulation: only launch calls outside the windows go", "[launch_sampling]") {
  const auto p = program_fixture("torch_mlp.slstream");
  const auto s = test_sampling::sample_launch_calls(p, period, window, 50 * ms);
  CHECK(profile::launch_calls_sampled(s));
  CHECK_FALSE(profile::launch_calls_sampled(p));
  REQUIRE(s.launch_windows.size() > 10);
  for (const auto& [a, b] : s.launch_windows) {
    CHECK(a >= p.process.start_ns);
    CHECK(b - a <= window);
  }
  CHECK(s.launch_windows.front().first == p.process.start_ns + 50 * ms);
  CHECK(s.launch_windows[1].first - s.launch_windows[0].first == period);
  // Every GPU record stays, every call but the launches outside the windows stays.
  CHECK(s.trace.kernels.size() == p.trace.kernels.size());
  CHECK(s.trace.memcpys.size() == p.trace.memcpys.size());
  CHECK(s.trace.api_calls.size() - launch_calls_of(s) == p.trace.api_calls.size() - launch_calls_of(p));
  CHECK(launch_calls_of(s) > 0);
  CHECK(launch_calls_of(s) < launch_calls_of(p) / 2);
  for (const auto& a : s.trace.api_calls)
    if (trace::classify_api(a.name) == trace::api_kind::launch)
      CHECK(test_sampling::inside_windows(s.launch_windows, a.start));
  // A phase past the period is the same phase.
  CHECK(test_sampling::windows_over(0, 1000, 100, 10, 130) == test_sampling::windows_over(0, 1000, 100, 10, 30));
  // A window open at the start (phase + window past the period) counts from the start.
  CHECK(test_sampling::windows_over(1000, 1250, 100, 30, 80).front() ==
        std::pair<std::uint64_t, std::uint64_t>{1000, 1010});
}

// The analysis checks the windows' claim on every report: a launch call recorded far from
// every window (a switch that took effect late, a launch path the windows do not switch) is
// counted and said, since the scaled launch figures assume the calls are the windows' own.
TEST_CASE("launch sampling: recorded launch calls outside the windows are counted and said", "[launch_sampling]") {
  const auto p = program_fixture("torch_mlp.slstream");
  const auto sampled = test_sampling::sample_launch_calls(p, period, window, 50 * ms);
  const auto kept = analyze_one(sampled);
  REQUIRE(kept.processes.size() == 1);
  REQUIRE(kept.processes[0].sampling);
  CHECK(kept.processes[0].sampling->launch_calls_outside == 0);
  const auto said = [](const analysis::program_analysis& a, const std::string& text) {
    return std::any_of(a.result.notes.begin(), a.result.notes.end(),
                       [&text](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  CHECK_FALSE(said(kept, "from every window"));

  // The same windows claimed, every launch call kept: the calls outside them are a leak.
  auto leaked = sampled;
  leaked.trace.api_calls = p.trace.api_calls;
  std::size_t far = 0;
  for (const auto& a : p.trace.api_calls) {
    if (trace::classify_api(a.name) != trace::api_kind::launch) continue;
    bool near = false;
    for (const auto& [lo, hi] : sampled.launch_windows)
      near = near || (a.start + analysis::launch_sampling::outside_margin_ns >= lo &&
                      a.start <= hi + analysis::launch_sampling::outside_margin_ns);
    far += near ? 0 : 1;
  }
  REQUIRE(far > 0);
  const auto a = analyze_one(leaked);
  REQUIRE(a.processes[0].sampling);
  CHECK(a.processes[0].sampling->launch_calls_outside == far);
  CHECK(said(a, fmt::format("{} of the {} recorded launch calls started more than 1 ms from every window", far,
                            launch_calls_of(p))));
}

// While a program has switched the capture off (speedlab_inject_capture), the kernels it
// launches appear to carry an earlier call's correlation id (inferred on the H200:
// docs/results/light-capture.md). A one-kernel launch call is matched by one kernel at most, so
// those kernels do not inflate the kernels with a recorded call (the factor the launch figures
// are scaled by), nor the ranges' launched figures or the critical path's launch edges.
TEST_CASE("launch sampling: kernels with a stale correlation id are not taken as with a call", "[launch_sampling]") {
  const auto sampled =
      test_sampling::sample_launch_calls(program_fixture("torch_mlp.slstream"), period, window, 50 * ms);
  const auto clean = analyze_one(sampled);
  REQUIRE(clean.processes[0].sampling);
  const analysis::launch_sampling& want = *clean.processes[0].sampling;
  CHECK(want.kernels_sharing_a_call == 0);

  // Each kernel without a recorded call takes the id of the last recorded launch call before it.
  std::map<std::uint64_t, std::uint32_t> recorded; // start -> correlation
  std::set<std::uint32_t> recorded_ids;
  for (const auto& a : sampled.trace.api_calls)
    if (trace::classify_api(a.name) == trace::api_kind::launch && !trace::is_graph_launch(a.name))
      recorded.emplace(a.start, a.correlation), recorded_ids.insert(a.correlation);
  auto stale = sampled;
  std::size_t restamped = 0;
  for (auto& k : stale.trace.kernels) {
    if (recorded_ids.count(k.correlation)) continue;
    const auto it = recorded.upper_bound(k.start);
    if (it == recorded.begin()) continue;
    k.correlation = std::prev(it)->second;
    ++restamped;
  }
  REQUIRE(restamped > want.kernels_with_call); // enough to move the scale several times over

  const auto a = analyze_one(stale);
  REQUIRE(a.processes[0].sampling);
  const analysis::launch_sampling& got = *a.processes[0].sampling;
  CHECK(got.kernels == want.kernels);
  CHECK(got.kernels_with_call == want.kernels_with_call);
  CHECK(got.kernels_sharing_a_call == restamped);
  CHECK(got.scale() == want.scale());
  CHECK(a.processes[0].trace.launch_calls == clean.processes[0].trace.launch_calls);
  // Dropped before any kernel is matched to a call: the ranges' launched figures and the
  // critical path's kernels are those of the clean stream too.
  REQUIRE(a.processes[0].ranges.size() == clean.processes[0].ranges.size());
  for (std::size_t i = 0; i < a.processes[0].ranges.size(); ++i) {
    CHECK(a.processes[0].ranges[i].launched_kernels == clean.processes[0].ranges[i].launched_kernels);
    CHECK(a.processes[0].ranges[i].launched_gpu_ns == clean.processes[0].ranges[i].launched_gpu_ns);
  }
  const auto path_kernels_with_call = [&](const analysis::process_summary& p) {
    REQUIRE(p.path);
    std::size_t n = 0;
    for (const auto& o : p.path->ops)
      n += o.kind == analysis::path_records::kernel_op && recorded_ids.count(o.correlation) ? 1 : 0;
    return n;
  };
  CHECK(path_kernels_with_call(a.processes[0]) == path_kernels_with_call(clean.processes[0]));
  CHECK(std::any_of(a.result.notes.begin(), a.result.notes.end(), [&](const std::string& n) {
    return n.find(fmt::format("{} kernels carried the correlation id of a one-kernel launch call", restamped)) !=
           std::string::npos;
  }));
}

TEST_CASE("launch sampling, program fixtures: the same findings as fully recorded", "[launch_sampling]") {
  for (const auto& name : program_fixtures) {
    const auto p = program_fixture(name);
    const auto full = analyze_one(p);
    REQUIRE_FALSE(full.result.findings.empty());
    for (const auto phase : phases) {
      INFO(name << ", windows of 20 ms every 200 ms from " << phase / ms << " ms");
      const auto sampled = analyze_one(test_sampling::sample_launch_calls(p, period, window, phase));
      CHECK(verdicts(sampled) == verdicts(full));
    }
  }
}

TEST_CASE("launch sampling, program fixtures: the time split estimates the unrecorded launch calls' time",
          "[launch_sampling]") {
  for (const auto& name : program_fixtures) {
    const auto p = program_fixture(name);
    const auto full = analyze_one(p).split;
    for (const auto phase : phases) {
      INFO(name << ", phase " << phase / ms << " ms");
      const auto a = analyze_one(test_sampling::sample_launch_calls(p, period, window, phase));
      const auto& s = a.split;
      // GPU time and the waits are recorded whole: exactly the same.
      for (auto field : {&time_split::kernel, &time_split::h2d, &time_split::d2h, &time_split::copy_other,
                         &time_split::memset, &time_split::sync, &time_split::wall_ns})
        CHECK(s.*field == Approx(full.*field).margin(1));
      // A launch call outside the windows is not in the trace: the windows' share of API time
      // moves that much of the time outside them from host code to API (sampled_split.hpp).
      CHECK(s.api + s.host == Approx(full.api + full.host).margin(1));
      REQUIRE(a.processes.size() == 1);
      REQUIRE(a.processes.front().sampling);
      const analysis::split_estimate& e = a.processes.front().sampling->api_lifetime;
      CHECK(e.low_ns <= e.moved_ns);
      CHECK(e.moved_ns <= e.high_ns);
      // Issue 41: within 5 percentage points of the wall time of the fully recorded split,
      // category by category.
      CHECK(std::abs(s.api - full.api) <= 0.05 * full.wall_ns);
      CHECK(std::abs(s.host - full.host) <= 0.05 * full.wall_ns);
      const double recorded = s.api - e.moved_ns; // the API time the windowed stream holds
      WARN(fmt::format("api {:.3f} ms: recorded {:.3f} + estimated {:.3f} [{:.3f}, {:.3f}]; full {:.3f} ms "
                       "(wall {:.3f} ms)",
                       s.api / 1e6, recorded / 1e6, e.moved_ns / 1e6, e.low_ns / 1e6, e.high_ns / 1e6, full.api / 1e6,
                       full.wall_ns / 1e6));
    }
  }
}

TEST_CASE("launch sampling, program fixtures: range launched figures from the ranges inside a window",
          "[launch_sampling]") {
  // train_step of torch_mlp (51 steps over seconds) and of the torch loop (51 steps in about
  // a quarter of a second, so some phases hold none of them).
  for (const char* name : {"torch_mlp.slstream", "api_source/torch_loop-activity.slstream"}) {
    const auto p = program_fixture(name);
    const auto full = analyze_one(p);
    REQUIRE(full.ranges.size() == 1);
    const auto& f = full.ranges.front();
    CHECK_FALSE(f.launched_measured);
    REQUIRE(f.launched_kernels > 1000);
    std::size_t phases_measured = 0;
    for (const auto phase : phases) {
      INFO(name << ", phase " << phase / ms << " ms");
      const auto sampled = analyze_one(test_sampling::sample_launch_calls(p, period, window, phase));
      REQUIRE(sampled.ranges.size() == 1);
      const auto& r = sampled.ranges.front();
      REQUIRE(r.launched_measured);
      CHECK(*r.launched_measured <= r.count);
      CHECK(r.count == f.count);
      CHECK(r.gpu_ns == f.gpu_ns); // not from launch calls: unchanged
      CHECK(r.kernels == f.kernels);
      const auto& x = *sampled.processes.front().sampling;
      CHECK(x.range_instances == f.count);
      CHECK(x.range_instances_measured == *r.launched_measured);
      if (*r.launched_measured == 0) { // unknown: not shown as zero launched
        CHECK(r.launched_kernels == 0);
        const nlohmann::json j = sampled;
        CHECK(j["nvtx_ranges"][0]["launched_gpu_ns"].is_null());
        CHECK(j["nvtx_ranges"][0]["launched_measured"] == 0);
        continue;
      }
      ++phases_measured;
      // Each step launches the same work: a few measured steps, scaled, give the whole.
      INFO("launched " << r.launched_gpu_ns << " ns, " << r.launched_kernels << " kernels from " << *r.launched_measured
                       << " of " << r.count << "; fully recorded " << f.launched_gpu_ns << " ns, "
                       << f.launched_kernels);
      CHECK(r.launched_gpu_ns == Approx(f.launched_gpu_ns).epsilon(0.02));
      CHECK(double(r.launched_kernels) == Approx(double(f.launched_kernels)).epsilon(0.02));
    }
    CHECK(phases_measured >= 1);
  }
}

TEST_CASE("launch sampling, program fixtures: launch-call counts read as all launches", "[launch_sampling]") {
  for (const auto& name : program_fixtures) {
    const auto p = program_fixture(name);
    const auto full = analyze_one(p).processes.front();
    for (const auto phase : phases) {
      INFO(name << ", phase " << phase / ms << " ms");
      const auto sampled = analyze_one(test_sampling::sample_launch_calls(p, period, window, phase));
      const auto& s = sampled.processes.front();
      REQUIRE(s.sampling);
      const auto& x = *s.sampling;
      CHECK(x.kernels == full.trace.kernel_launches);
      CHECK(x.launch_calls == launch_calls_of(test_sampling::sample_launch_calls(p, period, window, phase)));
      if (x.kernels_with_call > 0) {
        // Scaled by all kernels over those with a recorded call: every kernel here has its own call.
        CHECK(double(s.trace.launch_calls) == Approx(double(full.trace.launch_calls)).epsilon(0.02));
      }
      // A launch cost only from enough recorded calls; else unknown (the rules take the device's).
      if (x.launch_calls < 20)
        CHECK(s.launch_call_median_ns == 0);
      else
        CHECK(s.launch_call_median_ns > 0);
      bool noted = false;
      for (const auto& n : sampled.result.notes)
        noted |= n.find("launch calls recorded in sampled windows") != std::string::npos;
      CHECK(noted);
    }
  }
}

TEST_CASE("launch sampling, rank fixtures: straggler, excess and waits within 2% of the full record",
          "[launch_sampling][ranks]") {
  for (const auto& [shape, folders] : rank_shapes) {
    const auto ranks = rank_fixture(folders);
    REQUIRE(ranks.size() == 2);
    const auto full = full_ranks(ranks);
    for (const auto phase : phases) {
      INFO(shape << ", windows of 20 ms every 200 ms from " << phase / ms << " ms");
      const auto sampled = sampled_ranks(ranks, phase);
      check_ranks_agree(full, sampled);
      std::size_t placed = 0;
      for (const auto& r : sampled.ranks) {
        CHECK(r.launch_calls_sampled);
        placed += r.placed_by_neighbours;
      }
      CHECK(placed > 0);
      std::size_t notes = 0;
      for (const auto& n : sampled.notes)
        notes += n.find("launch calls recorded in sampled windows") != std::string::npos;
      CHECK(notes == 2);
      CHECK(std::none_of(full.notes.begin(), full.notes.end(),
                         [](const std::string& n) { return n.find("sampled") != std::string::npos; }));
    }
  }
}

TEST_CASE("launch sampling, rank fixtures: the steps hold with only waits, copies and allocations between launches",
          "[launch_sampling][ranks]") {
  // The calls of kind `other` outside the windows dropped too: a launch is then placed
  // between the synchronizations, polls, copies, memsets, allocations and frees around it.
  for (const auto& [shape, folders] : rank_shapes) {
    const auto ranks = rank_fixture(folders);
    const auto full = full_ranks(ranks);
    for (const auto phase : phases) {
      INFO(shape << ", phase " << phase / ms << " ms, other calls dropped outside the windows");
      check_ranks_agree(full, sampled_ranks(ranks, phase, false));
    }
  }
}

TEST_CASE("launch sampling, NCCL fixture: placed by their own start, the collectives lose the straggler",
          "[launch_sampling][ranks]") {
  // Why project_steps places a record without its call by the calls around it: the same
  // windows with every record whose call is missing put by its own start (as if the calls
  // around told nothing: each record given a correlation id no call has).
  const auto ranks = rank_fixture(rank_shapes.at("nccl"));
  const auto full = full_ranks(ranks);
  std::size_t wrong = 0;
  for (const auto phase : phases) {
    std::vector<analysis::rank_summary> out;
    for (const auto& p : ranks) {
      profile::process_profile s = test_sampling::sample_launch_calls(p, period, window, phase);
      s.process.tags.erase("launch_calls"); // an unsampled trace whose launch calls are missing
      out.push_back(analysis::summarize_rank(s));
    }
    const auto by_start = analysis::analyze_ranks(std::move(out));
    const bool right = by_start.straggler && *by_start.straggler == *full.straggler &&
                       by_start.straggler_excess_ns == Approx(full.straggler_excess_ns).epsilon(0.02);
    wrong += right ? 0 : 1;
  }
  CHECK(wrong >= 2); // read: 3 of the 4 phases wrong
}

TEST_CASE("launch sampling: a sampled stream read chunk by chunk, and its summary file, agree with the whole",
          "[launch_sampling]") {
  testing::temp_dir dir;
  const auto p = test_sampling::sample_launch_calls(program_fixture("torch_mlp.slstream"), period, window, 0);
  const auto file = dir.path() / profile::stream_file_name(p.process.host, p.process.pid);
  {
    std::string error;
    auto w = profile::stream_writer::create(file, error);
    REQUIRE(w);
    REQUIRE(w->write(profile::chunk_type::header, profile::header_json(p.process, 0, 500, "test")));
    REQUIRE(w->write_bytes(profile::chunk_type::records_binary, profile::records_binary(p.process.end_ns, p.trace)));
    REQUIRE(w->write(profile::chunk_type::launch_windows,
                     profile::launch_windows_json(p.process.end_ns, p.launch_windows)));
    REQUIRE(w->write(profile::chunk_type::close, profile::close_json(p.process.end_ns, "exit", 0)));
  }
  const auto whole = analysis::summarize_process(p);
  const auto streamed = analysis::summarize_stream(file);
  REQUIRE(streamed.valid);
  REQUIRE(streamed.summary.sampling);
  REQUIRE(whole.sampling);
  CHECK(streamed.summary.sampling->windows == whole.sampling->windows);
  CHECK(streamed.summary.sampling->kernels_with_call == whole.sampling->kernels_with_call);
  CHECK(streamed.summary.sampling->range_instances_measured == whole.sampling->range_instances_measured);
  REQUIRE(streamed.summary.ranges.size() == 1);
  CHECK(streamed.summary.ranges[0].launched_measured == whole.ranges[0].launched_measured);
  CHECK(streamed.summary.ranges[0].launched_gpu_ns == Approx(whole.ranges[0].launched_gpu_ns));
  CHECK(streamed.summary.trace.launch_calls == whole.trace.launch_calls);

  // summary.json keeps what was sampled.
  analysis::stream_summaries s = analysis::summarize_streams({file});
  REQUIRE(s.processes.size() == 1);
  analysis::rank_summary rank;
  rank.id.rank = 0;
  rank.launch_calls_sampled = true;
  rank.placed_by_neighbours = 17;
  s.ranks.push_back(rank);
  s.rank_process.push_back(0);
  const auto summary = dir.path() / analysis::summary_file_name;
  std::ofstream(summary) << analysis::summary_file_json(s).dump();
  const auto back = analysis::read_summary_file(summary);
  REQUIRE(back.streams.size() == 1);
  const auto& b = back.streams[0].process;
  REQUIRE(b.sampling);
  CHECK(b.sampling->windows == whole.sampling->windows);
  CHECK(b.sampling->launch_calls == whole.sampling->launch_calls);
  CHECK(b.ranges[0].launched_measured == whole.ranges[0].launched_measured);
  REQUIRE(back.streams[0].rank);
  CHECK(back.streams[0].rank->launch_calls_sampled);
  CHECK(back.streams[0].rank->placed_by_neighbours == 17);
  // An unsampled summary has none of it.
  const auto plain = dir.path() / "plain.json";
  s.processes[0].sampling.reset();
  s.processes[0].ranges[0].launched_measured.reset();
  s.ranks[0].launch_calls_sampled = false;
  const auto plain_json = analysis::summary_file_json(s);
  CHECK(plain_json.dump().find("launched_measured") == std::string::npos);
  CHECK(plain_json.dump().find("launch_sampling") == std::string::npos);
  CHECK(plain_json.dump().find("placed_by_neighbours") == std::string::npos);
}

TEST_CASE("launch sampling: the reports say which figures are estimates", "[launch_sampling][report]") {
  const auto p = program_fixture("api_source/torch_loop-activity.slstream");
  // 50 ms: some steps inside a window (scaled figures); 0 ms: none (unknown).
  for (const auto phase : {50 * ms, 0 * ms}) {
    INFO("phase " << phase / ms << " ms");
    auto s = test_sampling::sample_launch_calls(p, period, window, phase);
    s.process.command_line = {"python3", "<b>loop|*x*</b>.py"}; // untrusted text in the note's label
    const auto a = analyze_one(s);
    const auto& r = a.ranges.front();
    REQUIRE(r.launched_measured);
    const bool known = *r.launched_measured > 0;
    CHECK(known == (phase == 50 * ms));
    // Markdown and HTML: the range table's cells and its extra column.
    const auto tables = reports::program_tables(a);
    const auto range_table =
        std::find_if(tables.begin(), tables.end(), [](const auto& t) { return t.id == "program-ranges"; });
    REQUIRE(range_table != tables.end());
    CHECK(range_table->header.back() == "launched from");
    CHECK(range_table->intro.find("sampled windows") != std::string::npos);
    const auto& row = range_table->rows.front();
    CHECK(row.back().text == fmt::format("{} of {}", *r.launched_measured, r.count));
    CHECK((row[7].text == "-") == !known);
    CHECK((row[8].text == "-") == !known);
    // CSV: an empty cell where unknown, and the count measured.
    const auto data = reports::program_data_tables(a);
    const auto csv = std::find_if(data.begin(), data.end(), [](const auto& t) { return t.name == "program_ranges"; });
    REQUIRE(csv != data.end());
    CHECK(csv->header.back() == "launched_measured");
    CHECK(csv->rows.front().back() == std::to_string(*r.launched_measured));
    CHECK(csv->rows.front()[6].empty() == !known);
    // JSON: the process's sampling and the range's.
    const nlohmann::json j = reports::program_json(a);
    const auto& proc = j["processes"][0];
    REQUIRE(proc.contains("launch_sampling"));
    CHECK(proc["launch_sampling"]["windows"] == a.processes.front().sampling->windows);
    CHECK(j["nvtx_ranges"][0]["launched_measured"] == *r.launched_measured);
    CHECK(j["nvtx_ranges"][0]["launched_kernels"].is_null() == !known);
    // The note, with the windows and the instances; the label is escaped where it is rendered.
    std::string note;
    for (const auto& n : a.result.notes)
      if (n.find("sampled windows") != std::string::npos) note = n;
    CHECK(note.find("24 windows") != std::string::npos);
    CHECK(note.find(fmt::format("from {} of 51 instances", *r.launched_measured)) != std::string::npos);
  }
}

TEST_CASE("launch sampling: a fully recorded profile's output has no trace of it", "[launch_sampling][report]") {
  const auto a = analyze_one(program_fixture("api_source/torch_loop-activity.slstream"));
  CHECK_FALSE(a.processes.front().sampling);
  const nlohmann::json j = reports::program_json(a);
  CHECK(j.dump().find("launch_sampling") == std::string::npos);
  CHECK(j.dump().find("launched_measured") == std::string::npos);
  const auto data = reports::program_data_tables(a);
  for (const auto& t : data) CHECK(std::find(t.header.begin(), t.header.end(), "launched_measured") == t.header.end());
  for (const auto& n : a.result.notes) CHECK(n.find("sampled") == std::string::npos);
}

// The figures behind the checks above, printed (hidden: run it by its tag,
// `build/speedlab_tests "[launch_sampling_figures]"`).
TEST_CASE("launch sampling: figures, fully recorded against sampled", "[.][launch_sampling_figures]") {
  for (const auto& [shape, folders] : rank_shapes) {
    const auto ranks = rank_fixture(folders);
    const auto full = full_ranks(ranks);
    auto line = [](const std::string& what, const analysis::rank_analysis& r) {
      std::string waits;
      for (const double w : r.wait_per_step_ns) waits += fmt::format(" {:.3f}", w / 1e6);
      fmt::print("{:<10} {:<22} straggler {:>2}  excess {:.3f} ms  wait per step (ms):{}\n", "", what,
                 r.straggler ? std::to_string(*r.straggler) : "-", r.straggler_excess_ns / 1e6, waits);
    };
    fmt::print("ranks/{}\n", shape);
    line("fully recorded", full);
    for (const auto phase : phases) line(fmt::format("sampled, phase {} ms", phase / ms), sampled_ranks(ranks, phase));
    for (const auto phase : phases)
      line(fmt::format("no other, phase {} ms", phase / ms), sampled_ranks(ranks, phase, false));
  }
  for (const char* name : {"torch_mlp.slstream", "api_source/torch_loop-activity.slstream"}) {
    const auto p = program_fixture(name);
    auto line = [](const std::string& what, const analysis::program_analysis& a) {
      const auto& r = a.ranges.front();
      const auto& pr = a.processes.front();
      fmt::print("{:<10} {:<22} {}: launched {:.3f} ms, {} kernels, from {} of {}; launch calls {}, median {:.1f} us; "
                 "split api {:.3f} ms, host {:.3f} ms\n",
                 "", what, r.name, r.launched_gpu_ns / 1e6, r.launched_kernels,
                 r.launched_measured ? std::to_string(*r.launched_measured) : "all", r.count, pr.trace.launch_calls,
                 pr.launch_call_median_ns / 1e3, a.split.api / 1e6, a.split.host / 1e6);
    };
    fmt::print("{}\n", name);
    line("fully recorded", analyze_one(p));
    for (const auto phase : phases)
      line(fmt::format("sampled, phase {} ms", phase / ms),
           analyze_one(test_sampling::sample_launch_calls(p, period, window, phase)));
  }
}

// The two-rank job recorded with launch calls in windows on the callback path
// (SPEEDLAB_PROFILE_API_SOURCE=callback SPEEDLAB_PROFILE_LAUNCH_CALLS=sampled, 2026-11-26,
// 60 steps, tests/fixtures/ranks/README.md): most kernels have no recorded launch call and
// are put in steps by the calls recorded around them. The straggler and the wait come out
// as the program measured them.
TEST_CASE("launch sampling, recorded in windows: rank 1 is the straggler and rank 0 waits what was injected",
          "[launch_sampling][ranks][fixtures]") {
  std::ifstream in(testing::fixture_dir() / "ranks" / "expected.json");
  const nlohmann::json e = nlohmann::json::parse(in)["sampled"];
  double injected = 0;
  for (const auto& line : e["printed"])
    if (line["rank"] == 1) injected = line["extra_ms_per_step"].get<double>() * 1e6;
  REQUIRE(injected > 1e6);
  std::vector<profile::process_profile> ranks;
  for (auto& p : profile::read_stream_folder(testing::fixture_dir() / "ranks" / "sampled").processes) {
    if (!p.process.tags.count("RANK")) continue; // torchrun's agent
    CHECK(profile::launch_calls_sampled(p));
    CHECK(p.launch_windows.size() > 3);
    std::size_t launches = 0;
    for (const auto& a : p.trace.api_calls) launches += trace::classify_api(a.name) == trace::api_kind::launch;
    INFO(launches << " launch calls, " << p.trace.kernels.size() << " kernels");
    CHECK(launches < p.trace.kernels.size() / 2); // most launches have no call
    ranks.push_back(std::move(p));
  }
  REQUIRE(ranks.size() == 2);
  const analysis::rank_analysis r = full_ranks(ranks);
  CHECK(r.steps == e["steps_in_program"].get<std::size_t>());
  REQUIRE(r.straggler);
  CHECK(*r.ranks[*r.straggler].id.rank == 1);
  INFO("rank waits " << r.wait_per_step_ns[0] << " / " << r.wait_per_step_ns[1] << " ns per step; excess "
                     << r.straggler_excess_ns << "; injected " << injected);
  const std::size_t other = *r.straggler == 0 ? 1 : 0;
  CHECK(r.wait_per_step_ns[other] == Approx(injected).epsilon(0.03));
  CHECK(r.straggler_excess_ns == Approx(injected).epsilon(0.03));
  CHECK(r.wait_per_step_ns[*r.straggler] < 0.1 * injected);
}

// The torch loop (scripts/bench/torch_loop.py, 300 steps) recorded on the H200 twice: launch
// calls in 20 ms windows every 200 ms on the callback path (issue 41's light capture), and
// fully (tests/fixtures/profile/light, scripts/gpu-light-capture.sh streams).
TEST_CASE("launch sampling, the torch loop recorded in windows: its split as the full recording's",
          "[launch_sampling]") {
  // light: windows set by their variables, Python lines off (before the default was light);
  // light-lines: the light default against --full, Python lines on.
  const std::string folder = GENERATE("light", "light-lines");
  INFO(folder);
  const auto read = [&folder](const char* mode) {
    auto f = profile::read_stream_folder(testing::fixture_dir() / "profile" / folder / mode);
    REQUIRE(f.processes.size() == 1);
    return std::move(f.processes.front());
  };
  const auto windowed = read("windowed"), full = read("full");
  REQUIRE(profile::launch_calls_sampled(windowed));
  REQUIRE_FALSE(profile::launch_calls_sampled(full));
  CHECK(windowed.trace.kernels.size() == full.trace.kernels.size()); // every kernel recorded either way
  const auto a = analyze_one(windowed), b = analyze_one(full);
  REQUIRE(a.processes.size() == 1);
  const auto& w = a.processes.front();
  const auto& f = b.processes.front();
  REQUIRE(w.sampling);
  CHECK(w.sampling->api_steady.unrecorded_calls > 0);
  // Two processes of one program: each category's share of its wall time, within 5 points.
  const auto shares = [](const time_split& s) {
    return std::vector<double>{s.kernel / s.wall_ns, (s.h2d + s.d2h + s.copy_other) / s.wall_ns, s.sync / s.wall_ns,
                               s.api / s.wall_ns, s.host / s.wall_ns};
  };
  REQUIRE(w.split);
  REQUIRE(w.steady_split);
  REQUIRE(f.split);
  REQUIRE(f.steady_split);
  for (const bool steady : {false, true}) {
    const auto x = shares(steady ? *w.steady_split : *w.split), y = shares(steady ? *f.steady_split : *f.split);
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("category " << i << (steady ? ", steady state" : ", lifetime"));
      CHECK(std::abs(x[i] - y[i]) <= 0.05);
    }
  }
  WARN(fmt::format("steady state: api {:.2f}% windowed (estimated {:.3f} ms [{:.3f}, {:.3f}] for {} calls) vs {:.2f}% "
                   "full; host {:.2f}% vs {:.2f}%",
                   100 * w.steady_split->api / w.steady_split->wall_ns, w.sampling->api_steady.moved_ns / 1e6,
                   w.sampling->api_steady.low_ns / 1e6, w.sampling->api_steady.high_ns / 1e6,
                   w.sampling->api_steady.unrecorded_calls, 100 * f.steady_split->api / f.steady_split->wall_ns,
                   100 * w.steady_split->host / w.steady_split->wall_ns,
                   100 * f.steady_split->host / f.steady_split->wall_ns));
}

// The two-rank job's findings (its rank rules among them) from windows on every process, as
// from the full record: the job of tests/fixtures/ranks (outside: torchrun's agent and both
// ranks; inside; NCCL), each process's launch calls kept only in 20 ms of every 200 ms.
TEST_CASE("launch sampling, rank fixtures: the job's findings as fully recorded", "[launch_sampling][ranks]") {
  for (const auto& [shape, folders] : rank_shapes) {
    std::vector<profile::process_profile> job;
    for (const auto& f : folders)
      for (auto& p : profile::read_stream_folder(testing::fixture_dir() / "ranks" / f).processes)
        job.push_back(std::move(p));
    const auto full = analysis::analyze_program(job, {}, analysis_test::h100());
    REQUIRE(full.ranks);
    REQUIRE_FALSE(full.result.findings.empty());
    for (const auto phase : phases) {
      INFO(shape << ", windows of 20 ms every 200 ms from " << phase / ms << " ms");
      std::vector<profile::process_profile> windowed;
      for (const auto& p : job) windowed.push_back(test_sampling::sample_launch_calls(p, period, window, phase));
      const auto sampled = analysis::analyze_program(windowed, {}, analysis_test::h100());
      CHECK(verdicts(sampled) == verdicts(full));
      REQUIRE(sampled.ranks);
      CHECK(sampled.ranks->straggler == full.ranks->straggler);
    }
  }
}

// The torch loop recorded on the H200 under the light default with its Python lines (launch
// stacks taken in the windows only) and under --full (tests/fixtures/profile/light-lines,
// scripts/gpu-light-capture.sh lines): each line's kernel figures, scaled from the windows,
// as the full recording's.
TEST_CASE("launch sampling, Python lines recorded in windows: each line's kernel time as the full recording's",
          "[launch_sampling][python]") {
  const auto read = [](const char* mode) {
    auto f = profile::read_stream_folder(testing::fixture_dir() / "profile" / "light-lines" / mode);
    REQUIRE(f.processes.size() == 1);
    return analyze_one(f.processes.front());
  };
  const auto windowed = read("windowed"), full = read("full");
  const auto& w = windowed.python;
  const auto& f = full.python;
  REQUIRE(w.coverage.windowed_processes == 1);
  CHECK(f.coverage.windowed_processes == 0);
  CHECK(f.coverage.kernel_ns_captured == Approx(f.coverage.kernel_ns));
  // The windows' sample: a small part of the kernel time, standing for all of it.
  CHECK(w.coverage.kernel_ns_captured < 0.3 * w.coverage.kernel_ns);
  CHECK(w.coverage.kernel_ns == Approx(f.coverage.kernel_ns).epsilon(0.05));
  CHECK(w.coverage.kernel_ns_own + w.coverage.kernel_ns_inferred == Approx(w.coverage.kernel_ns).epsilon(0.01));
  // The three costliest lines of the full record, each within 10% of its kernel time and
  // kernels, and in the same order.
  REQUIRE(f.lines.size() >= 3);
  std::vector<std::uint32_t> order_full, order_windowed;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& fl = f.lines[i];
    order_full.push_back(fl.line);
    order_windowed.push_back(w.lines.at(i).line);
    const auto it = std::find_if(w.lines.begin(), w.lines.end(),
                                 [&](const auto& l) { return l.file == fl.file && l.line == fl.line; });
    REQUIRE(it != w.lines.end());
    INFO(fl.file << ":" << fl.line << ": " << it->kernel_ns / 1e6 << " ms in " << it->kernels
                 << " kernels from the windows, fully " << fl.kernel_ns / 1e6 << " ms in " << fl.kernels);
    CHECK(it->kernel_ns == Approx(fl.kernel_ns).epsilon(0.10));
    CHECK(static_cast<double>(it->kernels) == Approx(static_cast<double>(fl.kernels)).epsilon(0.10));
  }
  CHECK(order_windowed == order_full);
  // The report says the figures are estimates from the windows.
  const auto intro = [](const analysis::program_analysis& a) {
    for (const auto& t : reports::program_tables(a))
      if (t.id == "program-python-lines") return t.intro;
    return std::string();
  };
  CHECK(intro(windowed).find("captured in windows") != std::string::npos);
  CHECK(intro(full).find("captured in windows") == std::string::npos);
  CHECK_FALSE(intro(full).empty());
}

// What the windows claim: every launch call recorded started inside one (a switch that took
// effect late would leave calls outside them). Counted on the streams recorded on the GPU
// machine with launch calls in windows.
TEST_CASE("launch sampling, recorded in windows: the recorded launch calls started inside the windows",
          "[launch_sampling][fixtures]") {
  for (const char* folder : {"profile/light/windowed", "profile/light-lines/windowed", "ranks/sampled"}) {
    for (const auto& p : profile::read_stream_folder(testing::fixture_dir() / folder).processes) {
      if (!profile::launch_calls_sampled(p)) continue;
      std::size_t inside = 0, outside = 0;
      std::uint64_t worst_ns = 0;
      for (const auto& a : p.trace.api_calls) {
        if (trace::classify_api(a.name) != trace::api_kind::launch) continue;
        if (test_sampling::inside_windows(p.launch_windows, a.start)) {
          ++inside;
          continue;
        }
        ++outside;
        std::uint64_t gap = UINT64_MAX;
        for (const auto& [lo, hi] : p.launch_windows)
          gap = std::min(gap, a.start >= hi ? a.start - hi : lo > a.start ? lo - a.start : 0);
        worst_ns = std::max(worst_ns, gap);
      }
      WARN(folder << " pid " << p.process.pid << ": " << inside << " launch calls inside " << p.launch_windows.size()
                  << " windows, " << outside << " outside (farthest " << worst_ns / 1000 << " us from one)");
      CHECK(outside <= inside / 100 + 2);
      // ... and the analysis, which says so on every report, finds none farther than its margin.
      const auto a = analyze_one(p);
      REQUIRE(a.processes.at(0).sampling);
      CHECK(a.processes[0].sampling->launch_calls_outside == 0);
    }
  }
}
