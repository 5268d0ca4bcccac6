#include "analysis/rank_analysis.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "model/cuda_api.hpp"
#include "reports/common/program_tables.hpp"

#include "speedlab_catch.hpp"

using namespace speedlab;
using analysis::analyze_ranks;
using analysis::summarize_rank;

namespace {

constexpr std::uint64_t us = 1000;
constexpr std::uint64_t ms = 1000 * us;

trace::kernel_record kernel(std::uint64_t start, std::uint64_t end, std::string name) {
  trace::kernel_record k;
  k.start = start;
  k.end = end;
  k.name = std::move(name);
  return k;
}

// A data-parallel step: compute, then an all-reduce that ends when the slowest rank arrives.
// `extra` is work added on this rank only; `slowest_extra` the largest extra of any rank.
profile::process_profile ddp_rank(int rank, std::uint64_t clock_offset, std::uint64_t extra, std::uint64_t slowest_extra,
                                  int steps = 20, bool nvtx = false) {
  profile::process_profile p;
  p.process.pid = 1000 + static_cast<std::uint32_t>(rank);
  p.process.host = "node";
  p.process.tags = {{"RANK", std::to_string(rank)}, {"LOCAL_RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"}};
  const std::uint64_t origin = 10 * ms + clock_offset;
  p.process.start_ns = origin - 2 * ms;
  const std::uint64_t step = 3 * ms;
  for (int s = 0; s < steps; ++s) {
    const std::uint64_t t0 = origin + static_cast<std::uint64_t>(s) * step;
    p.trace.kernels.push_back(kernel(t0, t0 + 1 * ms + extra, "sm90_gemm_fwd"));
    const std::uint64_t arrive = t0 + 1 * ms + extra;
    const std::uint64_t done = t0 + 1 * ms + slowest_extra + 200 * us;
    p.trace.kernels.push_back(kernel(arrive, done, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    if (nvtx) p.trace.ranges.push_back({t0, t0 + 2 * ms, p.process.pid, p.process.pid, "", "train_step"});
  }
  p.process.end_ns = origin + static_cast<std::uint64_t>(steps) * step;
  p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
  return p;
}

} // namespace

TEST_CASE("ranks: identity from the launchers' variables", "[ranks]") {
  profile::process_info p;
  p.tags = {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "8"}};
  auto id = analysis::identify_rank(p);
  REQUIRE(id.rank);
  CHECK(*id.rank == 3);
  CHECK(*id.local_rank == 1);
  CHECK(*id.world_size == 8);
  CHECK(id.source == "OMPI_COMM_WORLD_RANK");
  p.tags = {{"SLURM_PROCID", "12"}, {"RANK", "x"}};
  id = analysis::identify_rank(p);
  CHECK(*id.rank == 12); // a non-number is not a rank
  p.tags = {};
  CHECK_FALSE(analysis::identify_rank(p).rank);
}

TEST_CASE("ranks: NCCL kernels are communication", "[ranks]") {
  CHECK(analysis::is_communication_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
  CHECK(analysis::is_communication_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  CHECK(analysis::is_communication_kernel("void NCCL_kernel()"));
  CHECK_FALSE(analysis::is_communication_kernel("sm90_xmma_gemm_f32f32"));
  CHECK_FALSE(analysis::is_communication_kernel("nc"));
  // The same predicate keeps the counters collector from replaying a collective (mangled
  // names, as its launch callbacks see them).
  CHECK(trace::is_collective_kernel("_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE"));
  CHECK_FALSE(trace::is_collective_kernel("_ZN8speedlab7plugins6vector12naive_kernelEPKfS3_Pfm"));
  CHECK_FALSE(trace::is_collective_kernel(""));
}

TEST_CASE("ranks: one rank slowed on purpose is named, with the others' wait", "[ranks]") {
  const std::uint64_t injected = 500 * us;
  std::vector<analysis::rank_summary> ranks;
  ranks.push_back(summarize_rank(ddp_rank(1, 0, injected, injected)));
  ranks.push_back(summarize_rank(ddp_rank(0, 0, 0, injected)));
  const auto r = analyze_ranks(std::move(ranks));
  REQUIRE(r.ranks.size() == 2);
  CHECK(*r.ranks[0].id.rank == 0); // sorted by rank
  CHECK(r.steps == 20);
  CHECK(r.step_method.starts_with("kernel:sm90_gemm_fwd"));
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
  CHECK(r.straggler_excess_ns == Approx(double(injected)).epsilon(0.01));
  REQUIRE(r.wait_per_step_ns.size() == 2);
  CHECK(r.wait_per_step_ns[0] == Approx(double(injected)).epsilon(0.01)); // rank 0 waits for rank 1
  CHECK(r.wait_per_step_ns[1] == Approx(0).margin(1));
  CHECK(r.imbalance > 1.1);
  bool named = false;
  for (const auto& f : r.findings)
    if (f.rule == "straggler") {
      named = true;
      CHECK(f.variant == "rank 1");
      CHECK(f.title.find("rank 1 is the straggler") != std::string::npos);
    }
  CHECK(named);
  // Communication and compute split per rank; rank 0's collective holds its wait.
  CHECK(r.ranks[0].comm_kernels == 20);
  CHECK(r.ranks[0].comm_ns == Approx(20.0 * (injected + 200 * us)).epsilon(0.001));
  CHECK(r.ranks[1].compute_ns == Approx(20.0 * (1 * ms + injected)).epsilon(0.001));
  REQUIRE(r.ranks[0].first_kernel_ns);
  CHECK(*r.ranks[0].first_kernel_ns == Approx(2.0 * ms));
}

TEST_CASE("ranks: balanced ranks have no straggler", "[ranks]") {
  std::vector<analysis::rank_summary> ranks;
  ranks.push_back(summarize_rank(ddp_rank(0, 0, 0, 0)));
  ranks.push_back(summarize_rank(ddp_rank(1, 0, 10 * us, 10 * us))); // 1% more: noise
  const auto r = analyze_ranks(std::move(ranks));
  CHECK_FALSE(r.straggler);
  for (const auto& f : r.findings) CHECK(f.rule != "straggler");
}

TEST_CASE("ranks: steps from the program's NVTX ranges", "[ranks]") {
  std::vector<analysis::rank_summary> ranks;
  ranks.push_back(summarize_rank(ddp_rank(0, 0, 0, 300 * us, 12, true)));
  ranks.push_back(summarize_rank(ddp_rank(1, 0, 300 * us, 300 * us, 12, true)));
  const auto r = analyze_ranks(std::move(ranks));
  CHECK(r.step_method == "nvtx:train_step");
  CHECK(r.steps == 12);
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
}

TEST_CASE("ranks: clocks of another host aligned by the ends of collectives", "[ranks]") {
  const std::uint64_t injected = 400 * us;
  auto a = ddp_rank(0, 0, 0, injected);
  auto b = ddp_rank(1, 7000 * ms, injected, injected); // another host, clock 7 s ahead
  b.process.host = "other-node";
  std::vector<analysis::rank_summary> ranks{summarize_rank(a), summarize_rank(b)};
  const auto r = analyze_ranks(std::move(ranks));
  REQUIRE(r.clocks.size() == 2);
  const auto& other = r.clocks[0].host == "other-node" ? r.clocks[0] : r.clocks[1];
  CHECK(other.method == "collective ends");
  CHECK(other.matched == 20);
  CHECK(other.offset_ns == Approx(-7000.0 * ms));
  CHECK(r.ranks[1].window_start == r.ranks[0].window_start); // on one clock now
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
  CHECK(r.wait_per_step_ns[0] == Approx(double(injected)).epsilon(0.01));
}

TEST_CASE("ranks: communication no compute hides is a finding", "[ranks]") {
  // 1 ms compute, then 2 ms of all-reduce alone, per step.
  profile::process_profile p = ddp_rank(0, 0, 0, 1800 * us);
  std::vector<analysis::rank_summary> ranks{summarize_rank(p)};
  const auto r = analyze_ranks(std::move(ranks));
  bool exposed = false;
  for (const auto& f : r.findings) exposed |= f.rule == "exposed-communication";
  CHECK(exposed);
  CHECK(r.ranks[0].overlap_ns == 0);
  CHECK(r.ranks[0].idle_ns > 0);
}

TEST_CASE("ranks: a profiled program with two ranks gets the rank table and the straggler finding", "[ranks]") {
  std::vector<profile::process_profile> processes{ddp_rank(0, 0, 0, 400 * us), ddp_rank(1, 0, 400 * us, 400 * us)};
  for (auto& p : processes) p.process.used_cuda = true;
  const auto a = analysis::analyze_program(processes, analysis::program_facts{}, device_model{});
  REQUIRE(a.ranks);
  REQUIRE(a.ranks->straggler);
  CHECK(*a.ranks->straggler == 1);
  bool straggler = false;
  for (const auto& f : a.result.findings) straggler |= f.rule == "straggler";
  CHECK(straggler);
  const auto tables = reports::program_tables(a);
  const auto it = std::find_if(tables.begin(), tables.end(), [](const auto& t) { return t.id == "program-ranks"; });
  REQUIRE(it != tables.end());
  CHECK(it->rows.size() == 2);
  CHECK(it->intro.find("Straggler: rank 1") != std::string::npos);
  const nlohmann::json j = a;
  CHECK(j["ranks"]["straggler"] == 1);
  CHECK(j["ranks"]["ranks"][1]["host"] == "node");
}

namespace {

// A gloo-style data-parallel step: compute, a staging copy to the host, the all-reduce on
// the host (no kernel: the GPU idles until the slowest rank arrives), the copy back, the
// optimizer. `extra` is this rank's added GPU work, `slowest_extra` the largest of any rank.
profile::process_profile gloo_rank(int rank, std::uint64_t extra, std::uint64_t slowest_extra, int steps = 20) {
  profile::process_profile p;
  p.process.pid = 2000 + static_cast<std::uint32_t>(rank);
  p.process.host = "node";
  p.process.used_cuda = true;
  p.process.tags = {{"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"}};
  const std::uint64_t origin = 10 * ms;
  p.process.start_ns = origin - 2 * ms;
  const std::uint64_t step = 5 * ms;
  for (int s = 0; s < steps; ++s) {
    const std::uint64_t t0 = origin + static_cast<std::uint64_t>(s) * step;
    p.trace.ranges.push_back({t0, t0 + 4 * ms, p.process.pid, p.process.pid, "", "train_step"});
    if (extra) p.trace.kernels.push_back(kernel(t0 + 10 * us, t0 + 10 * us + extra, "spin"));
    const std::uint64_t c = t0 + 10 * us + extra;
    p.trace.kernels.push_back(kernel(c, c + 1 * ms, "sm90_gemm"));
    trace::memcpy_record d2h;
    d2h.start = c + 1 * ms;
    d2h.end = d2h.start + 100 * us;
    d2h.copy_kind = trace::copy_dtoh;
    p.trace.memcpys.push_back(d2h);
    const std::uint64_t back = t0 + 10 * us + slowest_extra + 1 * ms + 100 * us + 300 * us; // host all-reduce done
    trace::memcpy_record h2d = d2h;
    h2d.start = back;
    h2d.end = back + 100 * us;
    h2d.copy_kind = trace::copy_htod;
    p.trace.memcpys.push_back(h2d);
    p.trace.kernels.push_back(kernel(h2d.end, h2d.end + 200 * us, "sgd_update"));
  }
  p.process.end_ns = origin + static_cast<std::uint64_t>(steps) * step;
  p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
  return p;
}

} // namespace

TEST_CASE("ranks: with host-side collectives (gloo) the wait is the GPU's idle time", "[ranks]") {
  const std::uint64_t injected = 2 * ms;
  std::vector<analysis::rank_summary> ranks{summarize_rank(gloo_rank(0, 0, injected)),
                                            summarize_rank(gloo_rank(1, injected, injected))};
  const auto r = analyze_ranks(std::move(ranks));
  CHECK(r.step_method == "nvtx:train_step");
  CHECK(r.wait_method == "gpu idle");
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
  CHECK(r.straggler_excess_ns == Approx(double(injected)).epsilon(0.01));
  CHECK(r.wait_per_step_ns[0] == Approx(double(injected)).epsilon(0.01));
  CHECK(r.wait_per_step_ns[1] == Approx(0).margin(1));
  CHECK(r.wait_total_ns[0] == Approx(20.0 * injected).epsilon(0.01));
  CHECK(r.ranks[0].comm_kernels == 0);
  CHECK(r.ranks[0].gpu == "cuda:0");
  // The per-step kernel sums the torch.profiler comparison uses.
  CHECK(r.ranks[1].steps[3].kernel_ns == Approx(double(injected + 1 * ms + 200 * us)));
  CHECK(r.ranks[1].steps[3].kernels == 3);
  bool named = false;
  for (const auto& f : r.findings)
    if (f.rule == "straggler") {
      named = true;
      CHECK(f.title.find("GPU idle") != std::string::npos);
    }
  CHECK(named);
}

TEST_CASE("ranks: without collective kernels another host is aligned by the wall clocks", "[ranks]") {
  auto a = gloo_rank(0, 0, 1 * ms);
  auto b = gloo_rank(1, 1 * ms, 1 * ms);
  // Host B's steady clock reads 5 s more than A's at the same moment; both noted the same
  // wall clock at their start.
  b.process.host = "other";
  const std::uint64_t ahead = 5000 * ms;
  auto move = [](std::uint64_t& t) { t += ahead; }; // a constant: no capture
  move(b.process.start_ns), move(b.process.end_ns);
  for (auto& k : b.trace.kernels) move(k.start), move(k.end);
  for (auto& m : b.trace.memcpys) move(m.start), move(m.end);
  for (auto& x : b.trace.ranges) move(x.start), move(x.end);
  for (auto& w : b.trace.repetitions) move(w.start), move(w.end);
  a.process.tags["realtime_ns_at_start"] = std::to_string(1'700'000'000'000'000'000ULL);
  b.process.tags["realtime_ns_at_start"] = std::to_string(1'700'000'000'000'000'000ULL);
  const auto r = analyze_ranks({summarize_rank(a), summarize_rank(b)});
  const auto& other = r.clocks[0].host == "other" ? r.clocks[0] : r.clocks[1];
  CHECK(other.method == "wall clock");
  CHECK(other.offset_ns == Approx(-double(ahead)));
  CHECK(r.ranks[1].window_start == r.ranks[0].window_start);
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
}

namespace {

// The same rank with a host that runs ahead of its GPU (NCCL does not block it): step s's
// NVTX range and launch calls come 0.5 ms apart from the start, while its GPU work runs every
// 3 ms, so from step 1 on a step's GPU work runs long after the host left the step. With
// `launch_calls` false the trace has no launch calls (driver API records off).
profile::process_profile host_ahead(profile::process_profile p, bool launch_calls) {
  const std::uint64_t origin = p.process.start_ns + 2 * ms;
  std::uint32_t correlation = 1;
  for (std::size_t i = 0; i < p.trace.kernels.size(); ++i) {
    const std::uint64_t s = i / 2; // two kernels per step: the compute, then the all-reduce
    const std::uint64_t host = origin + s * 500 * us + (i % 2) * 100 * us;
    p.trace.kernels[i].correlation = correlation;
    if (launch_calls) {
      trace::api_record a;
      a.start = host;
      a.end = host + 10 * us;
      a.correlation = correlation;
      a.name = i % 2 ? "cuLaunchKernelEx" : "cudaLaunchKernel_v7000";
      a.driver = i % 2 == 1;
      p.trace.api_calls.push_back(a);
    }
    ++correlation;
  }
  p.trace.ranges.clear();
  for (std::uint64_t s = 0; s < p.trace.kernels.size() / 2; ++s)
    p.trace.ranges.push_back({origin + s * 500 * us, origin + s * 500 * us + 400 * us, p.process.pid, p.process.pid, "",
                              "train_step"});
  return p;
}

} // namespace

TEST_CASE("ranks: a host ahead of its GPU: GPU work counts in the step that launched it", "[ranks]") {
  const std::uint64_t injected = 800 * us;
  std::vector<analysis::rank_summary> ranks;
  ranks.push_back(summarize_rank(host_ahead(ddp_rank(0, 0, 0, injected), true)));
  ranks.push_back(summarize_rank(host_ahead(ddp_rank(1, 0, injected, injected), true)));
  const auto r = analyze_ranks(std::move(ranks));
  CHECK(r.step_method == "nvtx:train_step");
  REQUIRE(r.steps == 20);
  for (const auto& x : r.ranks) {
    CHECK(x.comm_placed_by_start == 0);
    std::size_t kernels = 0;
    for (const auto& s : x.steps) {
      CHECK(s.kernels == 2); // each step's own compute and all-reduce, though they ran steps later
      kernels += s.kernels;
    }
    CHECK(kernels == 40);
  }
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
  CHECK(r.wait_method == "collective kernels");
  CHECK(double(r.wait_per_step_ns[0]) == Approx(double(injected)).margin(1));
  CHECK(r.wait_per_step_ns[1] == Approx(0).margin(1));
  CHECK(r.straggler_excess_ns == Approx(double(injected)).margin(1));
  CHECK(r.notes.empty());
}

TEST_CASE("ranks: collective kernels without their launch calls are placed by their start, with a note", "[ranks]") {
  const std::uint64_t injected = 800 * us;
  std::vector<analysis::rank_summary> ranks;
  ranks.push_back(summarize_rank(host_ahead(ddp_rank(0, 0, 0, injected), false)));
  ranks.push_back(summarize_rank(host_ahead(ddp_rank(1, 0, injected, injected), false)));
  const auto r = analyze_ranks(std::move(ranks));
  for (const auto& x : r.ranks) CHECK(x.comm_placed_by_start == 20);
  REQUIRE(r.notes.size() == 2);
  CHECK(r.notes[0].find("rank 0: 20 collective kernel(s) have no launch call") != std::string::npos);
  CHECK(r.notes[0].find("SPEEDLAB_PROFILE_DRIVER_API=0") != std::string::npos);
}
