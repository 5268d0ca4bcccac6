// speedlab_launch_storm: what the CUPTI session adds to each kernel launch. Launches N empty
// kernels (and synchronizes) R times before CUPTI is touched, R times inside a cupti session,
// R times after the sessions ended, and prints one JSON line with the medians per launch.
// Under nsys the session cannot attach; the line then says why and carries the plain
// figures only. --clock and --no-api select the session's options (profilers/profiler.hpp),
// to see what each part of the tracing costs per launch. It also prints the launch loop's own
// time per launch (loop_us_per_launch: equal to the total when the host is the bottleneck)
// and, per phase, one round with every launch call timed (launch_call: median, p10/p90/p99,
// mean in ns).
//   speedlab_launch_storm [--launches N] [--rounds R] [--buffer-mib B] [--cap-mib C]
//                         [--clock callback|offset] [--launch-records activity|callback|none] [--no-api]
//                         [--no-cupti]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_storm_kernels.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/profiler.hpp"

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Seconds for n launches plus the final synchronize (the work the GPU actually did); the
// launch loop's own seconds go to `loop` (close to the total: the host is the bottleneck).
double storm(long n, std::vector<double>& loop) {
  const auto t0 = speedlab::profiling::steady_now_ns();
  speedlab::storm::launch_empty(n);
  const auto t1 = speedlab::profiling::steady_now_ns();
  speedlab::storm::synchronize();
  const auto t2 = speedlab::profiling::steady_now_ns();
  loop.push_back(static_cast<double>(t1 - t0) * 1e-9);
  return static_cast<double>(t2 - t0) * 1e-9;
}

// One round with every launch call timed: the median call shows the typical cost without
// the rare stalls (buffer hand-overs, preemption) that the totals include.
nlohmann::json timed_round(long n) {
  std::vector<std::uint64_t> d(static_cast<std::size_t>(n));
  speedlab::storm::launch_empty_timed(n, d.data());
  speedlab::storm::synchronize();
  double sum = 0;
  for (auto v : d) sum += static_cast<double>(v);
  std::sort(d.begin(), d.end());
  const auto at = [&](double q) { return d[static_cast<std::size_t>(q * static_cast<double>(d.size() - 1))]; };
  return {{"median_ns", at(0.5)}, {"p10_ns", at(0.1)}, {"p90_ns", at(0.9)}, {"p99_ns", at(0.99)},
          {"mean_ns", sum / static_cast<double>(d.size())}};
}

} // namespace

int main(int argc, char** argv) {
  long launches = 100000;
  int rounds = 5;
  double buffer_mib = 8, cap_mib = 256;
  speedlab::profiling::profiler_options options;
  bool use_cupti = true;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--no-api")) options.api_records = false;
    else if (!std::strcmp(argv[i], "--no-cupti")) use_cupti = false;
    else if (has_value && !std::strcmp(argv[i], "--launches")) launches = std::atol(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--buffer-mib")) buffer_mib = std::atof(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--cap-mib")) cap_mib = std::atof(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--clock")) {
      const std::string v = argv[++i];
      if (v != "callback" && v != "offset") {
        std::fprintf(stderr, "speedlab_launch_storm: --clock takes callback or offset, not '%s'\n", v.c_str());
        return 2;
      }
      options.clock = v == "offset" ? speedlab::profiling::profiler_options::clock_mode::offset
                                    : speedlab::profiling::profiler_options::clock_mode::callback;
    } else if (has_value && !std::strcmp(argv[i], "--launch-records")) {
      using mode = speedlab::profiling::profiler_options::launch_mode;
      const std::string v = argv[++i];
      if (v == "activity") options.launches = mode::activity;
      else if (v == "callback") options.launches = mode::callback;
      else if (v == "none") options.launches = mode::none;
      else {
        std::fprintf(stderr, "speedlab_launch_storm: --launch-records takes activity, callback or none, not '%s'\n", v.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "speedlab_launch_storm: unknown or incomplete argument '%s'\n", argv[i]);
      return 2;
    }
  }
  nlohmann::json out{{"benchmark", "speedlab_launch_storm"},
                     {"launches", launches},
                     {"rounds", rounds},
                     {"clock", options.clock == speedlab::profiling::profiler_options::clock_mode::offset ? "offset"
                                                                                                       : "callback"},
                     {"record_api_calls", options.api_records},
                     {"launch_records", std::array{"activity", "callback", "none"}[static_cast<int>(options.launches)]}};
  {
    // What one read of the host steady clock costs here (a syscall where the VM's clock
    // source has no vDSO path): the timestamp callback pays it for every CPU timestamp.
    constexpr int reads = 200000;
    std::uint64_t last = 0;
    const auto t0 = speedlab::profiling::steady_now_ns();
    for (int i = 0; i < reads; ++i) last = speedlab::profiling::steady_now_ns();
    out["clock_read_ns"] = static_cast<double>(last - t0) / reads;
  }
  const std::string device = speedlab::storm::device_name();
  if (device.empty()) {
    out["error"] = "no usable CUDA device";
    std::puts(out.dump().c_str());
    return 77;
  }
  out["device"] = device;

  // Warm-up: context, module load, first launches.
  speedlab::storm::launch_empty(2000);
  speedlab::storm::synchronize();

  auto profiler = speedlab::profiling::make_profiler("cupti");
  std::string unavailable = !use_cupti ? "not asked for (--no-cupti)"
                            : profiler ? profiler->unavailable_reason()
                                       : "cupti backend not built";
  options.buffer_bytes = static_cast<std::size_t>(buffer_mib * (1 << 20));
  options.max_buffer_bytes = static_cast<std::size_t>(cap_mib * (1 << 20));

  // Three phases of R rounds each: plain launches before CUPTI was ever touched, launches
  // inside a cupti session (a new session per round), plain launches after the sessions
  // ended (what CUPTI leaves behind once initialized).
  std::vector<double> before, profiled, after, flush;
  std::vector<double> loop_before, loop_profiled, loop_after; // seconds in the launch loop alone
  std::uint64_t kernels = 0, api = 0, correlated = 0, dropped = 0, buffer_bytes = 0;
  std::vector<std::string> messages;
  nlohmann::json overheads = nlohmann::json::object();
  for (int r = 0; r < rounds; ++r) before.push_back(storm(launches, loop_before));
  nlohmann::json calls = nlohmann::json::object();
  calls["plain"] = timed_round(launches);
  for (int r = 0; r < rounds && unavailable.empty(); ++r) {
    std::unique_ptr<speedlab::profiling::session> s;
    try {
      s = profiler->create_session(options);
    } catch (const std::exception& e) {
      unavailable = e.what();
      break;
    }
    s->start();
    profiled.push_back(storm(launches, loop_profiled));
    const auto f0 = speedlab::profiling::steady_now_ns();
    s->stop();
    flush.push_back(static_cast<double>(speedlab::profiling::steady_now_ns() - f0) * 1e-9);
    speedlab::profiling::profile_data data;
    s->collect(data);
    kernels = data.device.kernels.size();
    api = data.device.api_calls.size();
    // Kernels whose launch call was recorded under the same correlation id.
    std::unordered_set<std::uint32_t> launch_ids;
    for (const auto& a : data.device.api_calls)
      if (a.name.find("Launch") != std::string::npos) launch_ids.insert(a.correlation);
    correlated = 0;
    for (const auto& k : data.device.kernels) correlated += launch_ids.count(k.correlation);
    dropped = data.device.dropped_records;
    buffer_bytes = data.device.buffer_bytes;
    if (!data.device.note.empty()) unavailable = data.device.note;
    for (auto& m : data.messages) messages.push_back(m);
    overheads = nlohmann::json::object(); // CUPTI's own time (last round): {kind: [count, total ns]}
    for (const auto& o : data.device.overheads) {
      auto& e = overheads[o.kind];
      if (e.is_null()) e = {0, 0};
      e[0] = e[0].get<std::uint64_t>() + 1;
      e[1] = e[1].get<std::uint64_t>() + (o.end - o.start);
    }
  }
  if (!profiled.empty()) {
    // One more session for the per-call round.
    try {
      auto s = profiler->create_session(options);
      s->start();
      calls["cupti"] = timed_round(launches);
      s->stop();
    } catch (const std::exception& e) {
      messages.push_back(std::string("timed round: ") + e.what());
    }
    for (int r = 0; r < rounds; ++r) after.push_back(storm(launches, loop_after));
    calls["plain_after"] = timed_round(launches);
  }

  const auto per_launch_us = [&](double seconds) { return seconds / static_cast<double>(launches) * 1e6; };
  out["plain_us_per_launch"] = per_launch_us(median(before));
  out["loop_us_per_launch"] = {{"plain", per_launch_us(median(loop_before))},
                               {"cupti", per_launch_us(median(loop_profiled))},
                               {"plain_after", per_launch_us(median(loop_after))}};
  out["launch_call"] = calls;
  if (unavailable.empty() && !profiled.empty()) {
    out["cupti_us_per_launch"] = per_launch_us(median(profiled));
    out["plain_after_us_per_launch"] = per_launch_us(median(after));
    out["added_us_per_launch"] = per_launch_us(median(profiled) - median(before));
    out["residual_us_per_launch"] = per_launch_us(median(after) - median(before));
    out["stop_flush_ms"] = median(flush) * 1e3;
    out["kernels_recorded"] = kernels;
    out["api_records"] = api;
    out["kernels_with_launch_record"] = correlated;
    out["dropped_records"] = dropped;
    out["buffer_peak_bytes"] = buffer_bytes;
    out["cupti"] = "ok";
    out["cupti_overheads"] = overheads;
  } else {
    out["cupti"] = "unavailable: " + unavailable;
  }
  out["plain_s"] = before;
  out["cupti_s"] = profiled;
  out["plain_after_s"] = after;
  out["messages"] = messages;
  std::puts(out.dump().c_str());
  return 0;
}
