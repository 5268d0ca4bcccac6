// The cross-rank rules (analysis/rules_ranks.cpp) are rules of the one registry: listed by
// rule_names(), run by analyze_ranks on the job and on each rank, silent everywhere else.
#include "analysis/rules.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "analysis/rank_analysis.hpp"

#include "analysis_test_support.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {

constexpr std::uint64_t us = 1000;
constexpr std::uint64_t ms = 1000 * us;

// A data-parallel rank: per 3 ms step a compute kernel (1 ms + extra) and an all-reduce that
// ends when the slowest rank (slowest_extra) arrives.
analysis::rank_summary ddp_rank(int rank, std::uint64_t extra, std::uint64_t slowest_extra, std::uint64_t step = 3 * ms,
                                int world = 2) {
  profile::process_profile p;
  p.process.pid = 2000 + static_cast<std::uint32_t>(rank);
  p.process.host = "node";
  p.process.tags = {{"RANK", std::to_string(rank)}, {"WORLD_SIZE", std::to_string(world)}};
  const std::uint64_t origin = 10 * ms;
  p.process.start_ns = origin - 2 * ms;
  for (std::uint64_t s = 0; s < 20; ++s) {
    const std::uint64_t t0 = origin + s * step;
    trace::kernel_record k;
    k.start = t0;
    k.end = t0 + 1 * ms + extra;
    k.name = "sm90_gemm_fwd";
    p.trace.kernels.push_back(k);
    k.start = k.end;
    k.end = t0 + 1 * ms + slowest_extra + 200 * us;
    k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    p.trace.kernels.push_back(k);
  }
  p.process.end_ns = origin + 20 * step;
  p.trace.repetitions = {{p.process.start_ns, p.process.end_ns, 0, 0}};
  return analysis::summarize_rank(p);
}

const std::set<std::string> rank_rules = {"straggler", "exposed-communication", "rank-gpu-idle"};

} // namespace

TEST_CASE("rank rules: in the one registry, with thresholds", "[rules][ranks]") {
  const auto names = analysis::rule_names();
  for (const auto& name : rank_rules) {
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
    const auto* r = analysis::find_rule(name);
    REQUIRE(r != nullptr);
    CHECK(!r->threshold().empty());
    CHECK(!r->summary().empty());
  }
}

TEST_CASE("rank rules: a job's findings come from the registry's rules", "[rules][ranks]") {
  // Rank 1 computes 1.5 ms more per step; rank 0 waits that long in each all-reduce, most of
  // its time exposed communication.
  const auto r = analysis::analyze_ranks({ddp_rank(0, 0, 1500 * us), ddp_rank(1, 1500 * us, 1500 * us)});
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
  std::set<std::string> fired;
  for (const auto& f : r.findings) {
    // Only the rank rules judge a job (no point rule finds anything in its contexts), and
    // each finding carries its rule's own threshold.
    CHECK(rank_rules.count(f.rule) == 1);
    const auto* rule = analysis::find_rule(f.rule);
    REQUIRE(rule != nullptr);
    CHECK(f.threshold == rule->threshold());
    CHECK(f.workload == "ranks");
    fired.insert(f.rule + " " + f.variant);
  }
  CHECK(fired.count("straggler rank 1") == 1);
  CHECK(fired.count("exposed-communication rank 0") == 1);
  CHECK(fired.count("exposed-communication rank 1") == 0); // its 200 us all-reduce is no wait
  // The job's finding first, then each rank's, as the registry runs them.
  REQUIRE(!r.findings.empty());
  CHECK(r.findings.front().rule == "straggler");
}

TEST_CASE("rank rules: the straggler's gain is over the job's median step", "[rules][ranks]") {
  // Ranks 0 and 2 step every 3 ms; rank 1, 1.5 ms slower in compute, every 4 ms. The job's
  // step is the median over the ranks (3 ms): gain 3 / (3 - 1.5) = 2, not the straggler's
  // own 4 / (4 - 1.5) = 1.6.
  const auto r = analysis::analyze_ranks(
      {ddp_rank(0, 0, 1500 * us, 3 * ms, 3), ddp_rank(1, 1500 * us, 1500 * us, 4 * ms, 3), ddp_rank(2, 0, 1500 * us, 3 * ms, 3)});
  REQUIRE(r.straggler);
  CHECK(*r.straggler == 1);
  CHECK(r.straggler_excess_ns == Approx(1.5e6).epsilon(0.01));
  const auto f = std::find_if(r.findings.begin(), r.findings.end(), [](const auto& x) { return x.rule == "straggler"; });
  REQUIRE(f != r.findings.end());
  CHECK(f->estimated_gain == Approx(2.0).epsilon(0.01));
  CHECK(f->severity == speedlab::severity::critical);
}

TEST_CASE("rank rules: disabled by name like any rule; the figures stay", "[rules][ranks]") {
  const auto r = analysis::analyze_ranks({ddp_rank(0, 0, 1500 * us), ddp_rank(1, 1500 * us, 1500 * us)},
                                         {"straggler", "exposed-communication"});
  REQUIRE(r.straggler); // the analysis still names it; only the finding is off
  CHECK(*r.straggler == 1);
  for (const auto& f : r.findings) {
    CHECK(f.rule != "straggler");
    CHECK(f.rule != "exposed-communication");
  }
}

TEST_CASE("rank rules: nothing on a suite point or a single process", "[rules][ranks]") {
  const auto p = cuda_point("vector", "cuda_lesson", {{"n", "16777216"}}, make_split(0.5e6, 6e6, 2e6, 0, 0, 1.5e6));
  const auto device = h100();
  analysis::analysis_options o;
  const analysis::rule_context ctx{.point = &p, .device = device, .options = o};
  for (const auto& name : rank_rules) CHECK(analysis::find_rule(name)->evaluate(ctx).empty());
  // The job's context alone (no rank) judges no single rank.
  const auto job = analysis::analyze_ranks({ddp_rank(0, 0, 1500 * us), ddp_rank(1, 1500 * us, 1500 * us)});
  const analysis::rule_context whole{.device = device, .options = o, .ranks = &job};
  CHECK(analysis::find_rule("exposed-communication")->evaluate(whole).empty());
  CHECK(analysis::find_rule("rank-gpu-idle")->evaluate(whole).empty());
  CHECK(analysis::find_rule("straggler")->evaluate(whole).size() == 1);
}

TEST_CASE("rule driver: a job is a context of its own, which only the job rules judge", "[rules][ranks]") {
  const auto device = h100();
  analysis::analysis_options o;
  const auto job = analysis::analyze_ranks({ddp_rank(0, 0, 1500 * us), ddp_rank(1, 1500 * us, 1500 * us)});
  const analysis::rule_context whole{.device = device, .options = o, .subject = "the ranks", .ranks = &job};
  CHECK(whole.scope() == analysis::rule_scope::job);
  std::vector<analysis::finding> found;
  std::vector<std::string> notes;
  analysis::run_rules(whole, found, notes);
  REQUIRE(found.size() == 1); // the straggler, from the one loop; no point rule ran on the job
  CHECK(found[0].rule == "straggler");
  CHECK(notes.empty());
  for (const auto& name : analysis::rule_names())
    if (analysis::find_rule(name)->scope() == analysis::rule_scope::point)
      CHECK(analysis::find_rule(name)->evaluate(whole).empty());
  // A disabled rule is left out by the same loop.
  o.disabled_rules = {"straggler"};
  found.clear();
  analysis::run_rules(whole, found, notes);
  CHECK(found.empty());
}
