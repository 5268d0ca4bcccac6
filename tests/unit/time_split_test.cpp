#include "speedlab_catch.hpp"

#include <chrono>
#include <random>

#include "analysis/time_split.hpp"
#include "model/cuda_api.hpp"

using namespace speedlab;
using analysis::compute_time_splits;

namespace {

trace::kernel_record kernel(std::uint64_t s, std::uint64_t e, std::uint32_t stream = 7) {
  trace::kernel_record k;
  k.start = s;
  k.end = e;
  k.stream = stream;
  return k;
}

trace::memcpy_record copy(std::uint64_t s, std::uint64_t e, std::uint8_t kind, std::uint32_t correlation = 0) {
  trace::memcpy_record m;
  m.start = s;
  m.end = e;
  m.copy_kind = kind;
  m.correlation = correlation;
  return m;
}

trace::memset_record fill(std::uint64_t s, std::uint64_t e) {
  trace::memset_record m;
  m.start = s;
  m.end = e;
  return m;
}

trace::api_record api(std::uint64_t s, std::uint64_t e, const char* name, std::uint32_t thread = 7,
                      std::uint32_t correlation = 0) {
  trace::api_record a;
  a.start = s;
  a.end = e;
  a.name = name;
  a.thread = thread;
  a.process = 7;
  a.correlation = correlation;
  return a;
}

trace::device_trace with_window(std::uint64_t s, std::uint64_t e) {
  trace::device_trace t;
  t.process = 7;
  t.repetitions.push_back({s, e, 0, 0});
  return t;
}

double sum(const time_split& s) { return s.gpu_busy() + s.gpu_idle(); }

} // namespace

TEST_CASE("time split: GPU-busy precedence kernel > h2d > d2h > other copy > memset", "[time_split]") {
  auto t = with_window(0, 100);
  t.kernels.push_back(kernel(10, 40));
  t.memcpys.push_back(copy(30, 60, trace::copy_htod));
  t.memcpys.push_back(copy(50, 70, trace::copy_dtoh));
  t.memsets.push_back(fill(65, 80));
  t.memcpys.push_back(copy(75, 90, trace::copy_dtod));
  const auto s = compute_time_splits(t);
  REQUIRE(s.size() == 1);
  CHECK(s[0].kernel == 30);
  CHECK(s[0].h2d == 20);
  CHECK(s[0].d2h == 10);
  CHECK(s[0].memset == 5);      // [65,75]: d2h wins until 70, the DtoD copy from 75
  CHECK(s[0].copy_other == 15); // [75,90]: other copies win over memset
  CHECK(s[0].host == 20);
  CHECK(s[0].sync == 0);
  CHECK(s[0].api == 0);
  CHECK(s[0].wall_ns == 100);
  CHECK(sum(s[0]) == s[0].wall_ns);
}

TEST_CASE("time split: overlapping work is counted once", "[time_split]") {
  auto t = with_window(0, 100);
  t.kernels.push_back(kernel(10, 50, 1));
  t.kernels.push_back(kernel(30, 70, 2)); // another stream, overlapping
  t.kernels.push_back(kernel(35, 45, 3)); // nested
  t.memcpys.push_back(copy(20, 80, trace::copy_htod)); // hidden under the kernels where they overlap
  const auto s = compute_time_splits(t);
  CHECK(s[0].kernel == 60);
  CHECK(s[0].h2d == 10); // [20,80] shows only where no kernel runs: [70,80]
  CHECK(s[0].host == 30);
  CHECK(sum(s[0]) == 100);
}

TEST_CASE("time split: intervals are clipped to each repetition window", "[time_split]") {
  trace::device_trace t;
  t.repetitions = {{100, 200, 0, 0}, {300, 400, 0, 0}};
  t.kernels.push_back(kernel(50, 150));   // starts before window 1
  t.kernels.push_back(kernel(190, 320));  // spans the gap into window 2
  t.kernels.push_back(kernel(220, 280));  // between windows: nobody's
  t.memcpys.push_back(copy(390, 500, trace::copy_dtoh));
  const auto s = compute_time_splits(t);
  REQUIRE(s.size() == 2);
  CHECK(s[0].kernel == 60);
  CHECK(s[0].host == 40);
  CHECK(s[1].kernel == 20);
  CHECK(s[1].d2h == 10);
  CHECK(s[1].host == 70);
  for (const auto& x : s) CHECK(sum(x) == x.wall_ns);
}

TEST_CASE("time split: GPU-idle time goes to sync, api or host by the phase thread's calls", "[time_split]") {
  auto t = with_window(0, 100);
  t.ranges.push_back({0, 100, 7, 7, "speedlab", "x: compute"});
  t.api_calls.push_back(api(0, 10, "cudaLaunchKernel_v7000"));
  t.api_calls.push_back(api(10, 90, "cudaDeviceSynchronize_v3020"));
  t.kernels.push_back(kernel(15, 60));
  t.api_calls.push_back(api(90, 100, "cudaMemcpy_v3020", 8)); // another thread: ignored
  const auto s = compute_time_splits(t);
  CHECK(s[0].api == 10);
  CHECK(s[0].kernel == 45);
  CHECK(s[0].sync == 35);
  CHECK(s[0].host == 10);
  CHECK(sum(s[0]) == 100);
}

TEST_CASE("time split: a synchronous copy call is its copy's transfer time, GPU busy or not", "[time_split]") {
  // A pageable copy: the call stages through a bounce buffer around the GPU's DMA.
  auto t = with_window(0, 100);
  t.api_calls.push_back(api(0, 100, "cudaMemcpy_v3020", 7, 5));
  t.memcpys.push_back(copy(40, 60, trace::copy_htod, 5));
  auto s = compute_time_splits(t);
  CHECK(s[0].h2d == 100);
  CHECK(s[0].sync == 0);
  CHECK(s[0].host == 0);

  // Device to host: a kernel still running when the call starts keeps its time.
  t = with_window(0, 100);
  t.api_calls.push_back(api(0, 100, "cuMemcpyDtoH_v2", 7, 6));
  t.kernels.push_back(kernel(0, 30));
  t.memcpys.push_back(copy(30, 50, trace::copy_dtoh, 6));
  s = compute_time_splits(t);
  CHECK(s[0].kernel == 30);
  CHECK(s[0].d2h == 70);
  CHECK(s[0].sync == 0);
  CHECK(sum(s[0]) == 100);
}

TEST_CASE("time split: a synchronous memcpy without its copy record is sync while the GPU is not copying",
          "[time_split]") {
  auto t = with_window(0, 100);
  t.api_calls.push_back(api(0, 100, "cudaMemcpy_v3020", 7, 5));
  t.memcpys.push_back(copy(40, 60, trace::copy_htod, 9)); // another call's copy
  const auto s = compute_time_splits(t);
  CHECK(s[0].h2d == 20);
  CHECK(s[0].sync == 80);
  CHECK(s[0].host == 0);
}

TEST_CASE("time split: sync records count for the phase thread, never for stream waits", "[time_split]") {
  auto t = with_window(0, 100);
  t.api_calls.push_back(api(0, 5, "cudaLaunchKernel_v7000", 7, 1));
  t.api_calls.push_back(api(60, 70, "cudaStreamSynchronize_v3020", 8, 9)); // other thread
  t.syncs.push_back({20, 30, 1, 7, 5, 3});  // no API record for correlation 5: counts
  t.syncs.push_back({40, 50, 1, 7, 6, 2});  // stream wait event: the host does not wait
  t.syncs.push_back({60, 70, 1, 7, 9, 3});  // belongs to thread 8's call
  const auto s = compute_time_splits(t);
  CHECK(s[0].api == 5);
  CHECK(s[0].sync == 10);
  CHECK(s[0].host == 85);
}

TEST_CASE("time split: the phase thread", "[time_split]") {
  trace::device_trace t;
  t.process = 100;
  CHECK(analysis::phase_thread(t) == 0);
  t.api_calls.push_back(api(0, 1, "a", 101));
  t.api_calls.push_back(api(0, 1, "a", 101));
  t.api_calls.push_back(api(0, 1, "a", 102));
  CHECK(analysis::phase_thread(t) == 101); // most calls
  t.api_calls.push_back(api(0, 1, "a", 100));
  CHECK(analysis::phase_thread(t) == 100); // the main thread (tid == pid)
  t.ranges.push_back({0, 1, 100, 102, "plugin", "p"});
  CHECK(analysis::phase_thread(t) == 100); // other domains do not count
  t.ranges.push_back({0, 1, 100, 102, "speedlab", "x: compute"});
  CHECK(analysis::phase_thread(t) == 102);
}

TEST_CASE("time split: degenerate windows and records", "[time_split]") {
  trace::device_trace t;
  t.repetitions = {{50, 50, 0, 0}, {80, 60, 0, 0}, {0, 10, 0, 0}};
  t.kernels.push_back(kernel(5, 5));  // empty
  t.kernels.push_back(kernel(9, 3));  // reversed: ignored
  const auto s = compute_time_splits(t);
  REQUIRE(s.size() == 3);
  CHECK(s[0].wall_ns == 0);
  CHECK(s[1].wall_ns == 0);
  CHECK(s[2].wall_ns == 10);
  CHECK(s[2].host == 10);
  CHECK(compute_time_splits(trace::device_trace{}).empty());
}

// Reference: classify every nanosecond on its own, straight from the definition.
TEST_CASE("time split: agrees with a per-nanosecond reference on random traces", "[time_split]") {
  std::mt19937_64 rng(12345);
  auto rnd = [&](std::uint64_t lo, std::uint64_t hi) { return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    trace::device_trace t;
    t.process = 7;
    const std::uint64_t horizon = 3000;
    for (int i = 0; i < 6; ++i) {
      const auto s = rnd(0, horizon - 50);
      t.repetitions.push_back({s, s + rnd(0, 400), 0, 0});
    }
    auto interval = [&] {
      const auto s = rnd(0, horizon);
      return std::pair{s, s + rnd(0, 200)};
    };
    for (int i = 0; i < 10; ++i) {
      auto [s, e] = interval();
      t.kernels.push_back(kernel(s, e));
    }
    const std::uint8_t kinds[] = {trace::copy_htod, trace::copy_dtoh, trace::copy_dtod, trace::copy_htoh};
    for (int i = 0; i < 10; ++i) {
      auto [s, e] = interval();
      t.memcpys.push_back(copy(s, e, kinds[rnd(0, 3)], static_cast<std::uint32_t>(rnd(0, 20))));
    }
    for (int i = 0; i < 5; ++i) {
      auto [s, e] = interval();
      t.memsets.push_back(fill(s, e));
    }
    const char* names[] = {"cudaLaunchKernel_v7000", "cudaStreamSynchronize_v3020", "cudaMemcpy_v3020",
                           "cudaMemcpyAsync_v3020"};
    for (std::uint32_t i = 0; i < 15; ++i) {
      auto [s, e] = interval();
      t.api_calls.push_back(api(s, e, names[rnd(0, 3)], rnd(0, 3) ? 7 : 8, i));
    }
    for (std::uint32_t i = 0; i < 6; ++i) {
      auto [s, e] = interval();
      t.syncs.push_back({s, e, 0, 0, static_cast<std::uint32_t>(rnd(0, 30)), static_cast<std::uint8_t>(rnd(1, 4))});
    }
    const auto got = compute_time_splits(t);
    REQUIRE(got.size() == t.repetitions.size());

    for (std::size_t w = 0; w < t.repetitions.size(); ++w) {
      const auto& win = t.repetitions[w];
      time_split ref;
      for (std::uint64_t x = win.start; x < win.end; ++x) {
        auto in = [x](const auto& r) { return r.start <= x && x < r.end; };
        bool k = false, h2d = false, d2h = false, other = false, ms = false, sync = false, apic = false;
        bool h2d_call = false, d2h_call = false, other_call = false;
        for (const auto& r : t.kernels) k |= in(r);
        for (const auto& r : t.memcpys)
          if (in(r)) (r.copy_kind == trace::copy_htod ? h2d : r.copy_kind == trace::copy_dtoh ? d2h : other) = true;
        for (const auto& r : t.memsets) ms |= in(r);
        for (const auto& r : t.api_calls) {
          if (r.thread != 7 || !in(r)) continue;
          if (!trace::blocks_host(trace::classify_api(r.name))) {
            apic = true;
            continue;
          }
          // A synchronous copy call with a recorded copy (the first of its correlation id)
          // counts as that copy's direction.
          const trace::memcpy_record* own = nullptr;
          if (std::string_view(r.name).starts_with("cudaMemcpy"))
            for (const auto& m : t.memcpys)
              if (m.correlation == r.correlation) {
                own = &m;
                break;
              }
          if (!own) sync = true;
          else (own->copy_kind == trace::copy_htod ? h2d_call : own->copy_kind == trace::copy_dtoh ? d2h_call : other_call) = true;
        }
        for (const auto& r : t.syncs) {
          if (r.type == 2 || !in(r)) continue;
          bool phase = false, any = false;
          for (const auto& a : t.api_calls)
            if (a.correlation == r.correlation) {
              any = true;
              phase |= a.thread == 7;
            }
          sync |= phase || !any;
        }
        if (k) ++ref.kernel;
        else if (h2d) ++ref.h2d;
        else if (d2h) ++ref.d2h;
        else if (other) ++ref.copy_other;
        else if (ms) ++ref.memset;
        else if (h2d_call) ++ref.h2d;
        else if (d2h_call) ++ref.d2h;
        else if (other_call) ++ref.copy_other;
        else if (sync) ++ref.sync;
        else if (apic) ++ref.api;
        else ++ref.host;
      }
      INFO("trial " << trial << " window " << w);
      CHECK(got[w].kernel == ref.kernel);
      CHECK(got[w].h2d == ref.h2d);
      CHECK(got[w].d2h == ref.d2h);
      CHECK(got[w].copy_other == ref.copy_other);
      CHECK(got[w].memset == ref.memset);
      CHECK(got[w].sync == ref.sync);
      CHECK(got[w].api == ref.api);
      CHECK(got[w].host == ref.host);
      CHECK(got[w].wall_ns == static_cast<double>(win.end - win.start));
      CHECK(sum(got[w]) == got[w].wall_ns);
    }
  }
}

// A guard against quadratic behaviour, not a benchmark: a quadratic sweep over 200k records
// and 1000 windows would take minutes; the bound is generous for loaded CI machines.
TEST_CASE("time split: 200k kernels and 1000 windows are split in one sweep", "[time_split]") {
  trace::device_trace t;
  t.process = 7;
  for (std::uint64_t i = 0; i < 200000; ++i) {
    t.kernels.push_back(kernel(i * 1000 + 100, i * 1000 + 600));
    t.api_calls.push_back(api(i * 1000, i * 1000 + 50, "cudaLaunchKernel_v7000", 7, static_cast<std::uint32_t>(i)));
  }
  for (std::uint64_t w = 0; w < 1000; ++w) t.repetitions.push_back({w * 200000, w * 200000 + 150000, 0, 0});
  const auto t0 = std::chrono::steady_clock::now();
  const auto s = compute_time_splits(t);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(s.size() == 1000);
  CHECK(s[0].kernel == 150 * 500);
  CHECK(s[0].api == 150 * 50);
  CHECK(sum(s[999]) == 150000);
  WARN("split 200k kernels over 1000 windows in " << seconds << " s");
  CHECK(seconds < 10.0);
}

TEST_CASE("time split summary: component-wise median and quartiles", "[time_split]") {
  std::vector<time_split> v(4);
  for (int i = 0; i < 4; ++i) {
    v[i].kernel = 10.0 * (i + 1); // 10 20 30 40
    v[i].host = 4.0 - i;          // 4 3 2 1
    v[i].wall_ns = v[i].kernel + v[i].host;
  }
  const auto s = analysis::summarize_time_splits(v);
  CHECK(s.count == 4);
  CHECK(s.median.kernel == Approx(25));
  CHECK(s.q1.kernel == Approx(17.5));
  CHECK(s.q3.kernel == Approx(32.5));
  CHECK(s.median.host == Approx(2.5));
  CHECK(s.median.sync == 0);
  CHECK(analysis::summarize_time_splits({}).count == 0);
}
