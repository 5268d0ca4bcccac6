// API calls from CUPTI callbacks (profilers/inject/api_recorder.hpp): a fake sequence of
// entry/exit callbacks gives the records the activity path would, minus the driver call
// nested in each runtime call; per-thread buffers drained while threads write; the records
// go through finalize and the stream's binary encoding unchanged.
#include "profilers/inject/api_recorder.hpp"
#include "speedlab_catch.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "model/profile_stream.hpp"
#include "model/cuda_api.hpp"
#include "profilers/cupti/cupti_records.hpp"

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
    start = rec.enter(driver) ? t : 0;
  }
  void exit(std::uint64_t t, std::int32_t status = 0) { rec.exit(driver, cbid, correlation, start, t, status); }
};

std::uint32_t this_tid() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

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
