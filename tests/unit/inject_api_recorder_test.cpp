// API calls from CUPTI callbacks (profilers/cupti/api_recorder.hpp): a fake sequence of
// entry/exit callbacks gives the records the activity path would, minus the driver call
// nested in each runtime call; per-thread buffers drained while threads write; the records
// go through finalize and the stream's binary encoding unchanged.
#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_CUPTI // the recorder and its records are CUPTI's types: no test without it

#include "profilers/cupti/api_recorder.hpp"
#include "speedlab_catch.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "model/cuda_api.hpp"
#include "model/device_model.hpp"
#include "model/profile_stream.hpp"
#include "profilers/cupti/cupti_records.hpp"
#include "finding_text.hpp"
#include "test_support.hpp"

using speedlab::inject::api_recorder;
using namespace speedlab;
namespace cupti = speedlab::profiling::cupti;

namespace {

constexpr std::uint32_t launch_kernel = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr std::uint32_t cu_launch = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
constexpr std::uint32_t memcpy_async = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;

// What CUPTI would call the ids used here.
std::string name_of(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return id == cu_launch ? "cuLaunchKernel" : "cu_" + std::to_string(id);
  if (id == launch_kernel) return "cudaLaunchKernel_v7000";
  if (id == memcpy_async) return "cudaMemcpyAsync_v3020";
  return "cuda_" + std::to_string(id);
}

// One call as CUPTI's callbacks deliver it: entry, (nested calls), exit; `start` is what the
// injector keeps in the call's correlationData slot (0 when the entry said not to record).
struct call {
  api_recorder& rec;
  bool driver;
  std::uint32_t cbid, correlation;
  std::uint64_t start = 0;
  call(api_recorder& r, bool d, std::uint32_t id, std::uint32_t c, std::uint64_t t) : rec(r), driver(d), cbid(id), correlation(c) {
    start = rec.enter(driver, correlation) ? t : 0;
  }
  void exit(std::uint64_t t, std::int32_t status = 0) { rec.exit(driver, cbid, correlation, start, t, status); }
};

std::uint32_t this_tid() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

// A recorded stream's API calls replayed as CUPTI's callbacks would deliver them, each
// runtime launch with the driver launch the runtime makes inside it (the callback API calls
// back for it; the activity path never wrote it: tests/fixtures/profile holds none), through
// the recorder, finalize (names from the stream) and the stream's binary encoding.
trace::device_trace through_callbacks(const trace::device_trace& recorded) {
  std::map<std::pair<bool, std::uint32_t>, std::string> names;
  for (const auto& a : recorded.api_calls) names[{a.driver, a.callback_id}] = a.name;
  api_recorder rec(recorded.api_calls.empty() ? 0 : recorded.api_calls[0].process);
  std::uint32_t nested_correlation = 1u << 30;
  for (const auto& a : recorded.api_calls) {
    call c(rec, a.driver, a.callback_id, a.correlation, a.start);
    if (!a.driver && trace::classify_api(a.name) == trace::api_kind::launch) {
      call inner(rec, true, cu_launch, nested_correlation++, a.start + 1);
      inner.exit(a.end > a.start + 1 ? a.end - 1 : a.start + 1);
    }
    c.exit(a.end, a.return_value);
  }
  cupti::parsed_records records; // the calls alone: the stream's kernels are named already
  records.trace.api_calls = rec.drain();
  // Replayed on one thread here; each call gets its own thread back (drained in order).
  REQUIRE(records.trace.api_calls.size() == recorded.api_calls.size());
  for (std::size_t i = 0; i < recorded.api_calls.size(); ++i) records.trace.api_calls[i].thread = recorded.api_calls[i].thread;
  trace::device_trace out = recorded;
  out.api_calls.clear();
  const auto name_of_recorded = [&](CUpti_CallbackDomain domain, CUpti_CallbackId id) {
    return names.at({domain == CUPTI_CB_DOMAIN_DRIVER_API, id});
  };
  cupti::finalize(std::move(records), name_of_recorded, out);
  return out;
}

std::vector<std::string> said(const std::vector<analysis::finding>& f) { return testing::finding_lines(f); }

} // namespace

TEST_CASE("api recorder: a runtime launch gives one record, its nested driver launch none", "[inject][api_recorder]") {
  api_recorder rec(4242);
  call runtime(rec, false, launch_kernel, 10, 1000);
  call nested(rec, true, cu_launch, 11, 1100);
  CHECK(nested.start == 0); // the entry said no: no clock read for it
  nested.exit(1200);
  runtime.exit(1300, 0);
  // A driver launch with nothing around it (CuPy, Numba, NCCL) is recorded.
  call alone(rec, true, cu_launch, 12, 2000);
  alone.exit(2100, 700);

  const auto calls = rec.drain();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].start == 1000);
  CHECK(calls[0].end == 1300);
  CHECK(calls[0].correlation == 10);
  CHECK(calls[0].callback_id == launch_kernel);
  CHECK_FALSE(calls[0].driver);
  CHECK(calls[0].process == 4242);
  CHECK(calls[0].thread == this_tid());
  CHECK(calls[1].driver);
  CHECK(calls[1].correlation == 12);
  CHECK(calls[1].return_value == 700);
  CHECK(rec.drain().empty()); // drained once
  CHECK(rec.not_kept() == 0);
  CHECK(rec.nested_driver_calls() == 1);
}

TEST_CASE("api recorder: runtime calls nest; a driver call after the runtime call ended is kept", "[inject][api_recorder]") {
  api_recorder rec(1);
  // A runtime call inside another (a callback-driven library): both kept, depth back to 0.
  call outer(rec, false, memcpy_async, 1, 100);
  call inner(rec, false, launch_kernel, 2, 110);
  call driver_in(rec, true, cu_launch, 3, 120);
  driver_in.exit(130);
  inner.exit(140);
  outer.exit(150);
  call driver_after(rec, true, cu_launch, 4, 200);
  driver_after.exit(210);
  const auto calls = rec.drain();
  std::set<std::uint32_t> kept;
  for (const auto& c : calls) kept.insert(c.correlation);
  CHECK(kept == std::set<std::uint32_t>{1, 2, 4});
}

TEST_CASE("api recorder: an exit without its entry is counted, not recorded", "[inject][api_recorder]") {
  api_recorder rec(1);
  // Recording began inside a runtime call: its exit arrives first (depth never goes below 0).
  rec.exit(false, launch_kernel, 7, 0, 500, 0);
  call alone(rec, true, cu_launch, 8, 600); // so a following driver call is not taken as nested
  alone.exit(650);
  const auto calls = rec.drain();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].correlation == 8);
  CHECK(rec.not_kept() == 1);
}

TEST_CASE("api recorder: an exit is kept only after its own entry, whatever its slot holds", "[inject][api_recorder]") {
  api_recorder rec(1);
  // CUPTI does not promise what correlationData holds when the entry callback did not run.
  rec.exit(false, launch_kernel, 9, 123456, 130000, 0);
  call seen(rec, false, memcpy_async, 10, 200000);
  seen.exit(200100);
  const auto calls = rec.drain();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].correlation == 10);
  CHECK(rec.not_kept() == 1);
}

// Launch calls in windows on the callback path: the launch ids' callbacks are switched off
// and on while calls are in flight.
TEST_CASE("api recorder: a launch whose exit was switched off does not hide the calls after it", "[inject][api_recorder]") {
  api_recorder rec(1);
  // The window closes during a runtime launch: its exit never comes.
  CHECK(rec.enter(false, 20, true));
  rec.switched();
  // A driver call with nothing around it (CuPy's cuStreamSynchronize) is recorded, not taken
  // for one nested in the lost launch.
  call sync(rec, true, 77, 21, 5000);
  sync.exit(5100);
  const auto calls = rec.drain();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].correlation == 21);
  CHECK(rec.cut_by_switch() == 1);
  CHECK(rec.not_kept() == 0); // expected at a switch: not an incomplete record
  CHECK(rec.nested_driver_calls() == 0);
}

TEST_CASE("api recorder: a launch whose entry came before the window opened is not recorded", "[inject][api_recorder]") {
  api_recorder rec(1);
  // The runtime launch entered while off; the window opens; its driver launch is seen alone
  // (recorded: one call per window open at most) and the runtime exit has no entry.
  rec.switched();
  call driver(rec, true, cu_launch, 31, 700);
  driver.exit(710);
  rec.exit(false, launch_kernel, 30, 0, 720, 0, true);
  call next(rec, false, launch_kernel, 32, 800);
  call nested(rec, true, cu_launch, 33, 801);
  nested.exit(802);
  next.exit(810);
  std::set<std::uint32_t> kept;
  for (const auto& c : rec.drain()) kept.insert(c.correlation);
  CHECK(kept == std::set<std::uint32_t>{31, 32});
  CHECK(rec.cut_by_switch() == 1);
  CHECK(rec.not_kept() == 0);
}

TEST_CASE("api recorder: a call not switched keeps its nesting across a switch", "[inject][api_recorder]") {
  api_recorder rec(1);
  // A long cudaMemcpy spans a window's end; the driver copy inside it stays nested.
  call copy(rec, false, memcpy_async, 40, 1000);
  rec.switched();
  call inner(rec, true, 55, 41, 1001);
  CHECK(inner.start == 0);
  inner.exit(1500);
  copy.exit(1600);
  const auto calls = rec.drain();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].correlation == 40);
  CHECK(calls[0].end == 1600);
  CHECK(rec.cut_by_switch() == 0);
  CHECK(rec.nested_driver_calls() == 1);
}

TEST_CASE("api recorder: many blocks drain in order, while the writer goes on", "[inject][api_recorder]") {
  api_recorder rec(1);
  const std::uint32_t n = static_cast<std::uint32_t>(api_recorder::block_records) * 3 + 17;
  std::vector<std::uint32_t> seen;
  for (std::uint32_t i = 1; i <= n; ++i) {
    call c(rec, false, launch_kernel, i, 10ull * i);
    c.exit(10ull * i + 5);
    if (i % 1000 == 0)
      for (const auto& r : rec.drain()) seen.push_back(r.correlation);
  }
  for (const auto& r : rec.drain()) seen.push_back(r.correlation);
  REQUIRE(seen.size() == n);
  for (std::uint32_t i = 0; i < n; ++i) REQUIRE(seen[i] == i + 1);
}

TEST_CASE("api recorder: threads write while a drainer reads; no record lost or doubled", "[inject][api_recorder]") {
  api_recorder rec(1);
  constexpr int threads = 4;
  constexpr std::uint32_t per_thread = 20000;
  std::atomic<int> running{threads};
  std::vector<trace::api_record> got;
  std::thread drainer([&] {
    while (running.load() > 0) {
      auto part = rec.drain();
      got.insert(got.end(), part.begin(), part.end());
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      for (std::uint32_t i = 0; i < per_thread; ++i) {
        const std::uint32_t id = static_cast<std::uint32_t>(t) * per_thread + i + 1;
        call runtime(rec, false, launch_kernel, id, 1000ull * id);
        call nested(rec, true, cu_launch, id + 1000000, 1000ull * id + 1);
        nested.exit(1000ull * id + 2);
        runtime.exit(1000ull * id + 3);
      }
      --running;
    });
  for (auto& w : writers) w.join();
  drainer.join();
  auto rest = rec.drain(); // what came after the drainer's last pass
  got.insert(got.end(), rest.begin(), rest.end());
  REQUIRE(got.size() == threads * per_thread);
  std::set<std::uint32_t> ids, tids;
  std::map<std::uint32_t, std::uint32_t> last_of_thread;
  for (const auto& r : got) {
    ids.insert(r.correlation);
    tids.insert(r.thread);
    CHECK_FALSE(r.driver);
    // Each thread's records come in its own order.
    auto [it, first] = last_of_thread.try_emplace(r.thread, r.correlation);
    if (!first) {
      REQUIRE(r.correlation > it->second);
      it->second = r.correlation;
    }
  }
  CHECK(ids.size() == threads * per_thread);
  CHECK(tids.size() == threads);
  CHECK(rec.nested_driver_calls() == threads * per_thread); // counted still after the threads ended
  CHECK(rec.drain().empty()); // ended threads' buffers are gone, nothing left behind
}

TEST_CASE("api recorder: records go through finalize and the stream encoding like activity records", "[inject][api_recorder]") {
  api_recorder rec(99);
  call copy(rec, false, memcpy_async, 21, 5000);
  copy.exit(5400);
  call launch(rec, false, launch_kernel, 22, 6000);
  call nested(rec, true, cu_launch, 23, 6010);
  nested.exit(6020);
  launch.exit(6100);

  cupti::parsed_records records;
  trace::kernel_record k;
  k.start = 7000;
  k.end = 9000;
  k.correlation = 22; // the kernel names its launch's correlation id
  k.mangled_name = "_Z6kernelv";
  records.trace.kernels.push_back(k);
  trace::memcpy_record m;
  m.start = 5200;
  m.end = 5300;
  m.correlation = 21;
  m.bytes = 4096;
  m.async = false; // CUPTI's flag clear: finalize reads the call's name (cuda...Async)
  records.trace.memcpys.push_back(m);
  for (auto& a : rec.drain()) records.trace.api_calls.push_back(std::move(a));
  trace::device_trace batch;
  cupti::finalize(std::move(records), &name_of, batch);
  REQUIRE(batch.api_calls.size() == 2);
  CHECK(batch.api_calls[0].name == "cudaMemcpyAsync_v3020");
  CHECK(batch.api_calls[1].name == "cudaLaunchKernel_v7000");
  CHECK(batch.api_calls[1].correlation == batch.kernels[0].correlation);
  CHECK(batch.memcpys[0].async);
  CHECK(trace::classify_api(batch.api_calls[1].name) == trace::api_kind::launch);

  const profile::records_batch back = profile::decode_records_binary(profile::records_binary(10000, batch));
  CHECK(nlohmann::json(back.trace) == nlohmann::json(batch));
}

TEST_CASE("api recorder: recorded streams analyse the same when their calls come through callbacks",
          "[inject][api_recorder]") {
  // Streams recorded on the GPU with activity records (tests/fixtures/profile): a CuPy and a
  // Numba program (driver launches, no runtime call around them: all kept) and PyTorch
  // (runtime launches, each with a nested driver launch that must not be kept). Same records,
  // same split, same findings.
  const auto root = speedlab::testing::fixture_dir() / "profile";
  for (const char* name : {"cupy_vector.slstream", "numba_pi.slstream", "torch_mlp.slstream"}) {
    INFO(name);
    auto r = profile::read_stream(root / name);
    REQUIRE(r.valid);
    profile::process_profile replayed = r.profile;
    const trace::device_trace via = through_callbacks(r.profile.trace);
    replayed.trace = profile::decode_records_binary(profile::records_binary(0, via)).trace;
    replayed.trace.repetitions = r.profile.trace.repetitions;
    CHECK(replayed.trace.api_calls.size() == r.profile.trace.api_calls.size());
    const auto a = analysis::analyze_program(std::vector<profile::process_profile>{r.profile}, {}, device_model{});
    const auto b = analysis::analyze_program(std::vector<profile::process_profile>{replayed}, {}, device_model{});
    CHECK(said(a.result.findings) == said(b.result.findings));
    for (auto field : {&time_split::kernel, &time_split::h2d, &time_split::d2h, &time_split::memset,
                       &time_split::sync, &time_split::api, &time_split::host, &time_split::wall_ns})
      CHECK(a.split.*field == b.split.*field);
    REQUIRE(a.processes.size() == b.processes.size());
    CHECK(a.processes[0].trace.launch_calls == b.processes[0].trace.launch_calls);
    CHECK(a.processes[0].trace.launch_calls > 0);
  }
}

TEST_CASE("api recorder: the same programs recorded on the GPU with activity and callback API records",
          "[inject][api_recorder]") {
  // tests/fixtures/profile/api_source: each program under `speedlab profile` twice on the
  // H100 (gpu-check.sh cost-record), SPEEDLAB_PROFILE_API_SOURCE=activity and =callback. The
  // calls recorded, by name and count, are the same; every kernel and copy has its call by
  // correlation id in both; the callback stream says how it was taken.
  const auto root = speedlab::testing::fixture_dir() / "profile" / "api_source";
  for (const char* name : {"torch_loop", "cupy_vector", "numba_pi"}) {
    INFO(name);
    const auto act = profile::read_stream(root / (std::string(name) + "-activity.slstream"));
    const auto cb = profile::read_stream(root / (std::string(name) + "-callback.slstream"));
    REQUIRE(act.valid);
    REQUIRE(cb.valid);
    const auto& a = act.profile;
    const auto& c = cb.profile;
    CHECK_FALSE(c.process.truncated);
    CHECK(c.trace.dropped_records == 0);
    const auto calls = [](const trace::device_trace& t) {
      std::map<std::pair<std::string, bool>, std::size_t> n;
      for (const auto& x : t.api_calls) ++n[{x.name, x.driver}];
      return n;
    };
    CHECK(calls(a.trace) == calls(c.trace));
    CHECK(a.trace.kernels.size() == c.trace.kernels.size());
    CHECK(a.trace.memcpys.size() == c.trace.memcpys.size());
    CHECK(a.trace.syncs.size() == c.trace.syncs.size());
    for (const auto* p : {&a, &c}) {
      std::map<std::uint32_t, const trace::api_record*> by_correlation;
      for (const auto& x : p->trace.api_calls) by_correlation[x.correlation] = &x;
      std::size_t launched = 0, copied = 0;
      for (const auto& k : p->trace.kernels) {
        auto it = by_correlation.find(k.correlation);
        if (it == by_correlation.end()) continue;
        ++launched;
        CHECK(trace::classify_api(it->second->name) == trace::api_kind::launch);
        CHECK(it->second->start <= k.start); // the call began before its kernel: one clock
      }
      for (const auto& m : p->trace.memcpys) copied += by_correlation.count(m.correlation);
      CHECK(launched == p->trace.kernels.size());
      CHECK(copied == p->trace.memcpys.size());
    }
    // The same rules fire (their figures are another run's: times differ run to run).
    const auto rules = [](const profile::process_profile& p) {
      std::set<std::string> r;
      for (const auto& f :
           analysis::analyze_program(std::vector<profile::process_profile>{p}, {}, device_model{}).result.findings)
        r.insert(f.rule);
      return r;
    };
    CHECK(rules(a) == rules(c));
    const bool said_callbacks = std::any_of(c.process.notes.begin(), c.process.notes.end(), [](const std::string& n) {
      return n.find("API calls recorded through callbacks") != std::string::npos;
    });
    CHECK(said_callbacks);
  }
}

#endif
