// speedlab_launch_storm: what the CUPTI session adds to each kernel launch. Launches N empty
// kernels (and synchronizes) R times before CUPTI is touched, R times inside a cupti session,
// R times after the sessions ended, and prints one JSON line with the medians per launch. Under nsys the session cannot attach; the line then says why and
// carries the plain figures only.
//   speedlab_launch_storm [--launches N] [--rounds R] [--buffer-mib B] [--cap-mib C]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

// Seconds for n launches plus the final synchronize (the work the GPU actually did).
double storm(long n) {
  const auto t0 = speedlab::profiling::steady_now_ns();
  speedlab::storm::launch_empty(n);
  speedlab::storm::synchronize();
  return static_cast<double>(speedlab::profiling::steady_now_ns() - t0) * 1e-9;
}

} // namespace

int main(int argc, char** argv) {
  long launches = 100000;
  int rounds = 5;
  double buffer_mib = 8, cap_mib = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--launches")) launches = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--buffer-mib")) buffer_mib = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--cap-mib")) cap_mib = std::atof(argv[i + 1]);
  }
  nlohmann::json out{{"benchmark", "speedlab_launch_storm"}, {"launches", launches}, {"rounds", rounds}};
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
  std::string unavailable = profiler ? profiler->unavailable_reason() : "cupti backend not built";
  speedlab::profiling::profiler_options options;
  options.buffer_bytes = static_cast<std::size_t>(buffer_mib * (1 << 20));
  options.max_buffer_bytes = static_cast<std::size_t>(cap_mib * (1 << 20));

  // Three phases of R rounds each: plain launches before CUPTI was ever touched, launches
  // inside a cupti session (a new session per round), plain launches after the sessions
  // ended (what CUPTI leaves behind once initialized).
  std::vector<double> before, profiled, after, flush;
  std::uint64_t kernels = 0, api = 0, dropped = 0, buffer_bytes = 0;
  std::vector<std::string> messages;
  nlohmann::json overheads = nlohmann::json::object();
  for (int r = 0; r < rounds; ++r) before.push_back(storm(launches));
  for (int r = 0; r < rounds && unavailable.empty(); ++r) {
    std::unique_ptr<speedlab::profiling::session> s;
    try {
      s = profiler->create_session(options);
    } catch (const std::exception& e) {
      unavailable = e.what();
      break;
    }
    s->start();
    profiled.push_back(storm(launches));
    const auto f0 = speedlab::profiling::steady_now_ns();
    s->stop();
    flush.push_back(static_cast<double>(speedlab::profiling::steady_now_ns() - f0) * 1e-9);
    speedlab::profiling::profile_data data;
    s->collect(data);
    kernels = data.device.kernels.size();
    api = data.device.api_calls.size();
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
  if (!profiled.empty())
    for (int r = 0; r < rounds; ++r) after.push_back(storm(launches));

  const auto per_launch_us = [&](double seconds) { return seconds / static_cast<double>(launches) * 1e6; };
  out["plain_us_per_launch"] = per_launch_us(median(before));
  if (unavailable.empty() && !profiled.empty()) {
    out["cupti_us_per_launch"] = per_launch_us(median(profiled));
    out["plain_after_us_per_launch"] = per_launch_us(median(after));
    out["added_us_per_launch"] = per_launch_us(median(profiled) - median(before));
    out["residual_us_per_launch"] = per_launch_us(median(after) - median(before));
    out["stop_flush_ms"] = median(flush) * 1e3;
    out["kernels_recorded"] = kernels;
    out["api_records"] = api;
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
