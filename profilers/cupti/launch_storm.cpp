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
//                         [--no-cupti] [--alternate-capture BACKEND [--blocks K]]
// --alternate-capture (under `speedlab profile`, with --no-cupti): instead of the phases, K
// pairs of blocks of N launches, BACKEND's per-call capture switched on for one block of each
// pair and off for the other (speedlab_inject_capture, the order swapped every pair): the
// capture's cost per launch paired inside one process, where processes differ by up to 2 us.
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_storm_kernels.hpp"
#include "profilers/cupti/cupti_options.hpp"
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

// Each thread of this process and the CPU it last ran on (/proc/self/task/*/stat: the name,
// field 2, and the CPU, field 39): which placement a process of two modes had (processes of
// one tool fall near two figures, 2 us a launch apart, on the GPU machine).
nlohmann::json thread_cpus() {
  nlohmann::json out = nlohmann::json::array();
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2)); // field 3 on
    std::string field;
    int cpu = -1;
    for (int i = 3; rest >> field; ++i)
      if (i == 39) {
        cpu = std::atoi(field.c_str());
        break;
      }
    out.push_back({{"tid", std::atol(task.path().filename().c_str())},
                   {"name", stat.substr(open + 1, close - open - 1)},
                   {"cpu", cpu}});
  }
  return out;
}

struct storm_args {
  long launches = 100000;
  int rounds = 5;
  double buffer_mib = 8, cap_mib = 256;
  speedlab::profiling::profiler_options options;
  bool use_cupti = true;
  std::string alternate; // --alternate-capture: the backend whose capture is switched
  int blocks = 20;
};

// False (after saying why on stderr) for an argument it does not take.
bool parse_args(int argc, char** argv, storm_args& a) {
  using opts = speedlab::profiling::cupti_options;
  opts& cupti = a.options.block<opts>();
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--no-api"))
      cupti.api_records = false;
    else if (!std::strcmp(argv[i], "--no-cupti")) a.use_cupti = false;
    else if (has_value && !std::strcmp(argv[i], "--alternate-capture")) a.alternate = argv[++i];
    else if (has_value && !std::strcmp(argv[i], "--blocks")) a.blocks = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--launches")) a.launches = std::atol(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--rounds")) a.rounds = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--buffer-mib")) a.buffer_mib = std::atof(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--cap-mib")) a.cap_mib = std::atof(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--clock")) {
      const std::string v = argv[++i];
      if (v != "callback" && v != "offset") {
        std::fprintf(stderr, "speedlab_launch_storm: --clock takes callback or offset, not '%s'\n", v.c_str());
        return false;
      }
      cupti.clock = v == "offset" ? opts::clock_mode::offset : opts::clock_mode::callback;
    } else if (has_value && !std::strcmp(argv[i], "--launch-records")) {
      const std::string v = argv[++i];
      if (v == "activity")
        cupti.launches = opts::launch_mode::activity;
      else if (v == "callback")
        cupti.launches = opts::launch_mode::callback;
      else if (v == "none")
        cupti.launches = opts::launch_mode::none;
      else {
        std::fprintf(stderr, "speedlab_launch_storm: --launch-records takes activity, callback or none, not '%s'\n", v.c_str());
        return false;
      }
    } else {
      std::fprintf(stderr, "speedlab_launch_storm: unknown or incomplete argument '%s'\n", argv[i]);
      return false;
    }
  }
  cupti.buffer_bytes = static_cast<std::size_t>(a.buffer_mib * (1 << 20));
  cupti.max_buffer_bytes = static_cast<std::size_t>(a.cap_mib * (1 << 20));
  return true;
}

// What one read of the host steady clock costs here (a syscall where the VM's clock source
// has no vDSO path): the timestamp callback pays it for every CPU timestamp.
double clock_read_ns() {
  constexpr int reads = 200000;
  std::uint64_t last = 0;
  const auto t0 = speedlab::profiling::steady_now_ns();
  for (int i = 0; i < reads; ++i) last = speedlab::profiling::steady_now_ns();
  return static_cast<double>(last - t0) / reads;
}

// The rounds inside a cupti session (a new session per round) and what the last one recorded.
struct profiled_phase {
  std::vector<double> seconds, flush, loop; // loop: seconds in the launch loop alone
  std::uint64_t kernels = 0, api = 0, correlated = 0, dropped = 0, buffer_bytes = 0;
  std::vector<std::string> messages;
  nlohmann::json overheads = nlohmann::json::object();
  std::string unavailable;
};

void take_session_data(const speedlab::profiling::profile_data& data, profiled_phase& ph) {
  ph.kernels = data.device.kernels.size();
  ph.api = data.device.api_calls.size();
  // Kernels whose launch call was recorded under the same correlation id.
  std::unordered_set<std::uint32_t> launch_ids;
  for (const auto& a : data.device.api_calls)
    if (a.name.find("Launch") != std::string::npos) launch_ids.insert(a.correlation);
  ph.correlated = 0;
  for (const auto& k : data.device.kernels) ph.correlated += launch_ids.count(k.correlation);
  ph.dropped = data.device.dropped_records;
  ph.buffer_bytes = data.device.buffer_bytes;
  if (!data.device.note.empty()) ph.unavailable = data.device.note;
  for (const auto& m : data.messages) ph.messages.push_back(m);
  ph.overheads = nlohmann::json::object(); // CUPTI's own time (last round): {kind: [count, total ns]}
  for (const auto& o : data.device.overheads) {
    auto& e = ph.overheads[o.kind];
    if (e.is_null()) e = {0, 0};
    e[0] = e[0].get<std::uint64_t>() + 1;
    e[1] = e[1].get<std::uint64_t>() + (o.end - o.start);
  }
}

void run_profiled_rounds(speedlab::profiling::profiler& profiler, const storm_args& a, profiled_phase& ph) {
  for (int r = 0; r < a.rounds && ph.unavailable.empty(); ++r) {
    std::unique_ptr<speedlab::profiling::session> s;
    try {
      s = profiler.create_session(a.options);
    } catch (const std::exception& e) {
      ph.unavailable = e.what();
      break;
    }
    s->start();
    ph.seconds.push_back(storm(a.launches, ph.loop));
    const auto f0 = speedlab::profiling::steady_now_ns();
    s->stop();
    ph.flush.push_back(static_cast<double>(speedlab::profiling::steady_now_ns() - f0) * 1e-9);
    speedlab::profiling::profile_data data;
    s->collect(data);
    take_session_data(data, ph);
  }
}

void write_profiled(const profiled_phase& ph, double before, double after, long launches, nlohmann::json& out) {
  const auto per_launch_us = [&](double seconds) { return seconds / static_cast<double>(launches) * 1e6; };
  if (!ph.unavailable.empty() || ph.seconds.empty()) {
    out["cupti"] = "unavailable: " + ph.unavailable;
    return;
  }
  out["cupti_us_per_launch"] = per_launch_us(median(ph.seconds));
  out["plain_after_us_per_launch"] = per_launch_us(after);
  out["added_us_per_launch"] = per_launch_us(median(ph.seconds) - before);
  out["residual_us_per_launch"] = per_launch_us(after - before);
  out["stop_flush_ms"] = median(ph.flush) * 1e3;
  out["kernels_recorded"] = ph.kernels;
  out["api_records"] = ph.api;
  out["kernels_with_launch_record"] = ph.correlated;
  out["dropped_records"] = ph.dropped;
  out["buffer_peak_bytes"] = ph.buffer_bytes;
  out["cupti"] = "ok";
  out["cupti_overheads"] = ph.overheads;
}

// The injection library's switch, when `speedlab profile` loaded it into this process.
using capture_fn = int (*)(const char*, int);
capture_fn injected_switch() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  void* lib = path ? dlopen(path, RTLD_NOLOAD | RTLD_NOW) : nullptr;
  return lib ? reinterpret_cast<capture_fn>(dlsym(lib, "speedlab_inject_capture")) : nullptr;
}

// --alternate-capture: pairs of blocks, the capture on in one and off in the other; each
// block's us per launch (totals) and its median launch call (a timed round of the same size).
int alternate(const storm_args& a, nlohmann::json& out) {
  const capture_fn set = injected_switch();
  if (!set || !set(a.alternate.c_str(), 1)) {
    out["error"] = "--alternate-capture " + a.alternate + ": no such capture to switch in this process (run under " +
                   "speedlab profile with --no-cupti)";
    std::puts(out.dump().c_str());
    return 2;
  }
  nlohmann::json on_us = nlohmann::json::array(), off_us = nlohmann::json::array();
  nlohmann::json on_call = nlohmann::json::array(), off_call = nlohmann::json::array();
  std::vector<double> loop;
  for (int b = 0; b < a.blocks; ++b)
    for (const int on : b % 2 == 0 ? std::array{1, 0} : std::array{0, 1}) {
      set(a.alternate.c_str(), on);
      (on ? on_us : off_us).push_back(storm(a.launches, loop) / static_cast<double>(a.launches) * 1e6);
      (on ? on_call : off_call).push_back(timed_round(a.launches)["median_ns"]);
    }
  set(a.alternate.c_str(), 1);
  out["backend"] = a.alternate;
  out["capture_on_us_per_launch"] = on_us;
  out["capture_off_us_per_launch"] = off_us;
  out["capture_on_call_median_ns"] = on_call;
  out["capture_off_call_median_ns"] = off_call;
  out["threads"] = thread_cpus();
  std::puts(out.dump().c_str());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  storm_args args;
  if (!parse_args(argc, argv, args)) return 2;
  const auto& cupti = args.options.get<speedlab::profiling::cupti_options>();
  const long launches = args.launches;
  nlohmann::json out{
      {"benchmark", "speedlab_launch_storm"},
      {"launches", launches},
      {"rounds", args.rounds},
      {"clock", cupti.clock == speedlab::profiling::cupti_options::clock_mode::offset ? "offset" : "callback"},
      {"record_api_calls", cupti.api_records},
      {"launch_records", std::array{"activity", "callback", "none"}[static_cast<int>(cupti.launches)]}};
  out["clock_read_ns"] = clock_read_ns();
  const std::string device = speedlab::storm::device_name();
  if (device.empty()) {
    out["error"] = "no usable CUDA device";
    out["threads"] = thread_cpus();
    std::puts(out.dump().c_str());
    return 77;
  }
  out["device"] = device;

  // Warm-up: context, module load, first launches.
  speedlab::storm::launch_empty(2000);
  speedlab::storm::synchronize();

  if (!args.alternate.empty()) return alternate(args, out);

  auto profiler = speedlab::profiling::make_profiler("cupti");
  profiled_phase ph;
  ph.unavailable = !args.use_cupti ? "not asked for (--no-cupti)"
                   : profiler      ? profiler->unavailable_reason()
                                   : "cupti backend not built";

  // Three phases of R rounds each: plain launches before CUPTI was ever touched, launches
  // inside a cupti session (a new session per round), plain launches after the sessions
  // ended (what CUPTI leaves behind once initialized).
  std::vector<double> before, after, loop_before, loop_after;
  for (int r = 0; r < args.rounds; ++r) before.push_back(storm(launches, loop_before));
  nlohmann::json calls = nlohmann::json::object();
  calls["plain"] = timed_round(launches);
  if (ph.unavailable.empty()) run_profiled_rounds(*profiler, args, ph);
  if (!ph.seconds.empty()) {
    // One more session for the per-call round.
    try {
      auto s = profiler->create_session(args.options);
      s->start();
      calls["cupti"] = timed_round(launches);
      s->stop();
    } catch (const std::exception& e) {
      ph.messages.push_back(std::string("timed round: ") + e.what());
    }
    for (int r = 0; r < args.rounds; ++r) after.push_back(storm(launches, loop_after));
    calls["plain_after"] = timed_round(launches);
  }

  const auto per_launch_us = [&](double seconds) { return seconds / static_cast<double>(launches) * 1e6; };
  out["plain_us_per_launch"] = per_launch_us(median(before));
  out["loop_us_per_launch"] = {{"plain", per_launch_us(median(loop_before))},
                               {"cupti", per_launch_us(median(ph.loop))},
                               {"plain_after", per_launch_us(median(loop_after))}};
  out["launch_call"] = calls;
  write_profiled(ph, median(before), median(after), launches, out);
  out["plain_s"] = before;
  out["cupti_s"] = ph.seconds;
  out["plain_after_s"] = after;
  out["messages"] = ph.messages;
  out["threads"] = thread_cpus();
  std::puts(out.dump().c_str());
  return 0;
}
