#include "speedlab_catch.hpp"

#include "app/run/isolation.hpp"
#include "app/plugins/plugin_loader.hpp"
#include "speedlab/config.hpp"
#include "run_request_support.hpp"
#include "test_support.hpp"

using namespace speedlab;
using namespace speedlab::app;
using Catch::Contains;

namespace {
const plugin_registry& registry() {
  static plugin_registry reg;
  static bool loaded = reg.load_file(speedlab::testing::faulty_plugin());
  REQUIRE(loaded);
  return reg;
}

point_result run_variant(const std::string& variant, double timeout_s = 10) {
  const auto* w = registry().find("faulty");
  planned_point pp{"faulty", variant, {{"n", "1000"}, {"mode", "a"}, {"scale", "1.5"}}, {}, {}};
  pp.measure.min_samples = 3;
  pp.measure.max_samples = 5;
  pp.measure.min_time_s = 0;
  pp.measure.max_time_s = 5; // min_samples decides the count, not the load of the machine
  run_request req = testing::request(w, w->find_variant(variant), pp, 1, "host");
  return run_isolated(req, timeout_s).value();
}
} // namespace

TEST_CASE("isolation: a good variant is measured and validated in a child", "[isolation]") {
  const auto r = run_variant("ok");
  CHECK(r.status == point_status::ok);
  CHECK(r.samples_ns.size() >= 3);
  CHECK(r.wall.median > 0);
  CHECK(r.first_validation.checked);
  CHECK(r.last_validation.ok);
  CHECK(r.work.bytes_read == 8000);
  CHECK(r.id == "faulty/ok/mode=a,n=1000,scale=1.5");
  CHECK(r.phase_median_ns.count("compute"));
}

TEST_CASE("isolation: a segfault is recorded with its signal", "[isolation]") {
  const auto r = run_variant("segfault");
  CHECK(r.status == point_status::crashed);
  CHECK_THAT(r.reason, Contains("SIGSEGV") && Contains("during"));
}

TEST_CASE("isolation: an exception is recorded with its message", "[isolation]") {
  const auto r = run_variant("throw");
  CHECK(r.status == point_status::failed);
  CHECK_THAT(r.reason, Contains("deliberate failure in compute"));
}

TEST_CASE("isolation: abort() is recorded", "[isolation]") {
  const auto r = run_variant("abort");
  CHECK(r.status == point_status::crashed);
  CHECK_THAT(r.reason, Contains("SIGABRT"));
}

TEST_CASE("isolation: a hang is killed after the per-run timeout", "[isolation]") {
  const auto r = run_variant("hang", 1.0);
  CHECK(r.status == point_status::timeout);
  CHECK_THAT(r.reason, Contains("no progress for 1 s") && Contains("during warmup"));
}

TEST_CASE("isolation: a wrong answer is invalid, never a success", "[isolation]") {
  const auto r = run_variant("wrong");
  CHECK(r.status == point_status::invalid);
  CHECK_FALSE(r.first_validation.ok);
  CHECK_THAT(r.reason, Contains("sum != n"));
  const auto racy = run_variant("racy");
  CHECK(racy.status == point_status::invalid);
  CHECK(racy.expected_invalid);
}

TEST_CASE("isolation: a variant that cannot run here is skipped with the reason", "[isolation]") {
  const auto r = run_variant("unavailable");
  CHECK(r.status == point_status::skipped);
  CHECK(r.reason == "test variant that is never available");
}

TEST_CASE("runner: in-process measurement reports exceptions as failed results", "[runner]") {
  const auto* w = registry().find("faulty");
  planned_point pp{"faulty", "throw", {{"n", "10"}, {"mode", "a"}, {"scale", "1"}}, {}, {}};
  run_request req = testing::request(w, w->find_variant("throw"), pp, 1, "none");
  const auto r = measure_point(req);
  CHECK(r.status == point_status::failed);
}

TEST_CASE("runner: a variant's own timings are kept per measured repetition, only when asked", "[runner]") {
  const auto* w = registry().find("faulty");
  planned_point pp{"faulty", "ok", {{"n", "1000"}, {"mode", "a"}, {"scale", "1"}}, {}, {}};
  pp.measure.min_samples = 4;
  pp.measure.max_samples = 6;
  pp.measure.min_time_s = 0;
  pp.measure.warmup_runs = 2;
  run_request req = testing::request(w, w->find_variant("ok"), pp, 1, "none");
  CHECK(measure_point(req).self_timed_ns.empty());

  req.self_timing = true;
  const auto r = run_isolated(req, 10).value(); // through the child, as speedlab runs it
  REQUIRE(r.status == point_status::ok);
  REQUIRE(r.self_timed_ns.count("summing") == 1);
  const auto& series = r.self_timed_ns.at("summing");
  CHECK(series.size() == r.samples_ns.size()); // warm-up and validation reports are not kept
  for (std::size_t i = 0; i < series.size(); ++i) {
    CHECK(series[i] > 0);
    CHECK(series[i] <= r.samples_ns[i]); // the loop lies inside its repetition
  }
}

TEST_CASE("isolation: the source pass's process joins the point as notes, never replacing what was measured",
          "[isolation][source]") {
  // A CPU variant, or a Python one whose kernels run in its worker, has no kernels to sample
  // here: no second process, no note.
  variant_spec v;
  v.kind = variant_kind::serial;
  run_request req{};
  req.variant = &v;
  req.profilers = {"host", "source"};
  CHECK_FALSE(wants_own_process_pass(req));
  v.kind = variant_kind::cuda;
  v.language = "python";
  CHECK_FALSE(wants_own_process_pass(req));
  v.language = "c++";
  req.profilers = {"host", "cupti"};
  CHECK_FALSE(wants_own_process_pass(req));
#if SPEEDLAB_HAS_CUPTI
  req.profilers = {"host", "cupti", "source"};
  CHECK(wants_own_process_pass(req)); // a CUDA variant in this process: the pass runs
#endif

  point_result measured;
  measured.samples_ns = {5, 6};
  measured.profiler_messages = {"first"};
  point_result pass;
  pass.status = point_status::crashed;
  pass.reason = "crashed during source: SIGSEGV";
  pass.samples_ns = {99};
  pass.profiler_messages = {"source: a note"};
  merge_own_process_pass(measured, pass, req);
  CHECK(measured.samples_ns == std::vector<double>{5, 6});
  CHECK_FALSE(measured.sections.has<source::source_pass>());
  REQUIRE(measured.profiler_messages.size() == 3);
  CHECK(measured.profiler_messages[1] == "source: a note");
  CHECK_THAT(measured.profiler_messages[2], Contains("ended crashed: crashed during source: SIGSEGV"));

  pass = point_result{};
  pass.sections.set<source::source_pass>(source::source_pass{});
  pass.sections.get<source::source_pass>()->total_samples = 7;
  merge_own_process_pass(measured, pass, req);
  REQUIRE(measured.sections.has<source::source_pass>());
  CHECK(measured.sections.get<source::source_pass>()->total_samples == 7);
  // A second pass never replaces the first one's view.
  pass.sections.get<source::source_pass>()->total_samples = 8;
  merge_own_process_pass(measured, pass, req);
  CHECK(measured.sections.get<source::source_pass>()->total_samples == 7);
}

namespace {
run_request pair_request(const std::string& variant) {
  const auto* w = registry().find("faulty");
  planned_point pp{"faulty", variant, {{"n", "1000"}, {"mode", "a"}, {"scale", "1.5"}}, {}, {}};
  pp.measure.min_samples = 4;
  pp.measure.max_samples = 6;
  pp.measure.min_time_s = 0;
  pp.measure.max_time_s = 5;
  return testing::request(w, w->find_variant(variant), pp, 1, "host");
}
} // namespace

TEST_CASE("runner: the two sides of a pair are measured in one process, each under its own rule",
          "[runner][interleave]") {
  const run_request a = pair_request("ok"), b = pair_request("ok");
  for (int first : {0, 1}) {
    const auto r = measure_point_pair(a, b, first);
    for (const auto& p : r) {
      INFO(p.reason);
      CHECK(p.status == point_status::ok);
      CHECK(p.samples_ns.size() >= 4);
      CHECK(p.samples_ns.size() <= 6);
      CHECK(p.first_validation.ok);
      CHECK(p.last_validation.ok);
      CHECK(p.cpu_utilization > 0); // each side got its own repetitions' host usage
      CHECK(p.id == "faulty/ok/mode=a,n=1000,scale=1.5");
    }
  }
}

TEST_CASE("runner: what one side of a pair throws or gets wrong ends that side only", "[runner][interleave]") {
  auto r = measure_point_pair(pair_request("ok"), pair_request("throw"), 0);
  CHECK(r[0].status == point_status::ok);
  CHECK(r[0].samples_ns.size() >= 4);
  CHECK(r[1].status == point_status::failed);
  CHECK_THAT(r[1].reason, Contains("deliberate failure in compute"));
  r = measure_point_pair(pair_request("wrong"), pair_request("ok"), 1);
  CHECK(r[0].status == point_status::invalid);
  CHECK(r[0].stop_reason == "first validation failed");
  CHECK(r[1].status == point_status::ok);
  CHECK(r[1].samples_ns.size() >= 4);
  r = measure_point_pair(pair_request("unavailable"), pair_request("ok"), 0);
  CHECK(r[0].status == point_status::skipped);
  CHECK(r[1].status == point_status::ok);
}

TEST_CASE("isolation: a pair's child that crashes gives no result, so neither side is blamed",
          "[isolation][interleave]") {
  paired_outcome out = run_pair_isolated(pair_request("ok"), pair_request("segfault"), 0, 10);
  CHECK(!out.abandoned);
  CHECK(!out.results);
  CHECK_THAT(out.failure, Contains("SIGSEGV"));
  out = run_pair_isolated(pair_request("ok"), pair_request("ok"), 1, 10);
  REQUIRE(out.results);
  CHECK((*out.results)[0].status == point_status::ok);
  CHECK((*out.results)[1].status == point_status::ok);
}
