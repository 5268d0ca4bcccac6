#include "app/profile/profile_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "app/process/exit_code.hpp"
#include "app/profile/profile_report.hpp"
#include "app/profile/program_launcher.hpp"
#include "app/run/device_list.hpp"
#include "app/run/device_step.hpp"
#include "app/run/output_folder.hpp"
#include "app/run/progress.hpp"
#include "app/suite/suite_config.hpp"
#include "device/host_info.hpp"
#include "model/counters.hpp"
#include "model/profile_stream.hpp"
#include "model/saved_records.hpp"
#include "model/source_view.hpp"
#include "reports/reporter.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {
namespace {

constexpr const char* inject_library_name = "libspeedlab-inject.so"; // as the launcher looks for it
constexpr const char* facts_file = "profile.json";

// The folder's lock (app/run/output_folder.hpp: a second speedlab writing there is refused),
// then its contents: anything but the lock refuses the folder unless --force; with --force
// an earlier profile's streams and facts are removed first, so old processes never mix
// with new ones. `created`: the folder was made here (removed again if PROGRAM cannot start).
std::unique_ptr<folder_lock> prepare_folder(const std::filesystem::path& dir, bool force, bool& created) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(dir, ec);
  if (existed && !std::filesystem::is_directory(dir, ec))
    throw folder_refused(fmt::format("output folder {} exists and is not a folder", dir.string()));
  std::filesystem::create_directories(dir);
  created = !existed;
  auto lock = std::make_unique<folder_lock>(dir);
  std::vector<std::filesystem::path> present;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename() != layout::lock) present.push_back(e.path());
  if (!present.empty()) {
    if (!force)
      throw folder_refused(fmt::format("output folder {} is not empty; choose another with --out, or --force to replace "
                                       "an earlier profile there",
                                       dir.string()));
    std::size_t removed = 0;
    for (const auto& f : present)
      if (f.extension() == profile::stream_extension || f.filename() == facts_file)
        removed += std::filesystem::remove(f, ec) ? 1 : 0;
    std::cerr << fmt::format("speedlab: --force: removed {} file(s) of an earlier profile in {}\n", removed, dir.string());
  }
  if (::access(dir.c_str(), W_OK) != 0) throw folder_refused(fmt::format("output folder {} is not writable", dir.string()));
  return lock;
}

nlohmann::json process_json(const profile::process_profile& p) {
  const auto& i = p.process;
  double kernel_ns = 0;
  for (const auto& k : p.trace.kernels) kernel_ns += static_cast<double>(k.end - k.start);
  return nlohmann::json{{"pid", i.pid},
                        {"ppid", i.parent_pid},
                        {"host", i.host},
                        {"command_line", i.command_line},
                        {"start_ns", i.start_ns},
                        {"end_ns", i.end_ns},
                        {"exit_code", i.exit_code ? nlohmann::json(*i.exit_code) : nlohmann::json()},
                        {"signal", i.signal ? nlohmann::json(*i.signal) : nlohmann::json()},
                        {"used_cuda", i.used_cuda},
                        {"truncated", i.truncated},
                        {"last_flush_ns", i.last_flush_ns},
                        {"dropped_records", i.dropped_records},
                        {"tags", i.tags},
                        {"notes", i.notes},
                        {"stream", i.used_cuda ? profile::stream_file_name(i.host, i.pid) : std::string{}},
                        {"kernels", p.trace.kernels.size()},
                        {"kernel_ns", kernel_ns},
                        {"memcpys", p.trace.memcpys.size()},
                        {"memsets", p.trace.memsets.size()},
                        {"api_calls", p.trace.api_calls.size()},
                        {"nvtx_ranges", p.trace.ranges.size()}};
}

std::string short_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (s.size() > 60) return s + " ...";
    s += (s.empty() ? "" : " ") + a;
  }
  return s;
}

std::optional<int> env_int(const std::function<const char*(const char*)>& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (errno || *end || x < 0 || x > 1 << 30) return std::nullopt;
  return static_cast<int>(x);
}

} // namespace

std::optional<int> launcher_rank(const std::function<const char*(const char*)>& env) {
  std::optional<int> world;
  for (const char* key : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if ((world = env_int(env, key))) break;
  if (!world || *world < 2) return std::nullopt;
  for (const char* key : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (auto r = env_int(env, key)) return r;
  return std::nullopt;
}

namespace {

void check_options(const profile_options& options) {
  if (options.program.empty()) throw config_error("no program given: speedlab profile [options] -- PROGRAM [ARGS...]");
  if (!profile::valid_flush_ms(options.flush_interval_ms))
    throw config_error(
        fmt::format("--flush-interval must be {} to {} ms", profile::min_flush_ms, profile::max_flush_ms));
  if (!options.metrics.empty()) {
    try {
      (void)counters::metric_set(options.metrics);
    } catch (const std::exception& e) {
      throw config_error(fmt::format("--metrics {}: {}", options.metrics, e.what()));
    }
  }
  static const std::vector<std::string> modes{"off", "cached", "quick", "full"};
  if (std::find(modes.begin(), modes.end(), options.calibrate) == modes.end())
    throw config_error(fmt::format("--calibrate {}: not a mode (valid: off, cached, quick, full)", options.calibrate));
  if (options.source && !options.metrics.empty())
    throw config_error("--source and --metrics cannot be used together (kernel replays and PC sampling were not "
                       "checked together): profile once with each");
}

// DIR, or DIR/rank-R for one rank of a launched job.
std::filesystem::path profile_dir(const profile_options& options) {
  std::filesystem::path dir = options.out;
  const std::optional<int> rank = launcher_rank([](const char* k) { return std::getenv(k); });
  if (rank) {
    dir /= fmt::format("rank-{}", *rank);
    notes() << fmt::format("speedlab: rank {} of a launched job: writing {} (after the job, `speedlab report {}` "
                           "merges the ranks)\n",
                           *rank, dir.string(), options.out);
  }
  return dir;
}

// The injection library to use; empty (with a note) when there is none or another tool's
// injection is already in the environment.
std::filesystem::path choose_library(const profile_options& options, std::vector<std::string>& notes) {
  std::filesystem::path library = find_inject_library();
  if (library.empty())
    notes.push_back(fmt::format("no {} beside speedlab (this build has no CUPTI, or SPEEDLAB_INJECT_LIBRARY is wrong): "
                                "the program ran without GPU profiling",
                                inject_library_name));
  // Under another tool (nsys, ncu: `nsys profile speedlab profile -- PROGRAM`) its injection
  // is already in the environment. Like `run` under Nsight, speedlab changes nothing of that
  // tool's setup: the program's GPU activity goes to it, and the report says so.
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH"); other && *other && !library.empty() &&
      std::filesystem::path(other) != library) {
    notes.push_back(fmt::format("another CUDA tool is attached (CUDA_INJECTION64_PATH={}, e.g. Nsight Systems or "
                                "Nsight Compute): speedlab left it in place, so the program's GPU activity went to that "
                                "tool and is not in this profile; run speedlab profile outside it",
                                other));
    if (options.source) notes.push_back(source::unavailable_note("--source: another CUDA tool holds the injection"));
    library.clear();
  }
  return library;
}

std::map<std::string, std::string> program_environment(const std::filesystem::path& library,
                                                       const std::filesystem::path& dir, const profile_options& options) {
  profile::injection_options injected;
  injected.dir = dir.string();
  injected.flush_ms = options.flush_interval_ms;
  if (!options.metrics.empty()) {
    // The injection library reads the metric names themselves (it has no set of its own).
    injected.counters.metrics = counters::metric_set(options.metrics);
    injected.counters.metric_set = options.metrics;
    injected.counters.per_kernel = options.counters_per_kernel;
  }
  if (options.source) injected.source.launches = options.source_launches;
  injected.python.lines = options.python_lines;
  if (options.full) injected.cupti.use_full_capture();
  auto environment = injection_environment(library, injected);
  const char* preload = std::getenv("LD_PRELOAD");
  if (const std::string with_shim = preload_with_exit_shim(library, preload ? preload : ""); !with_shim.empty())
    environment["LD_PRELOAD"] = with_shim;
  return environment;
}

// The direct child is listed even when it never used CUDA (a shell script, a launcher).
void add_direct_child(std::vector<profile::process_profile>& processes, const launch_result& run,
                      const profile_options& options) {
  auto child = std::find_if(processes.begin(), processes.end(),
                            [&](const auto& p) { return p.process.pid == static_cast<std::uint32_t>(run.pid); });
  if (child == processes.end()) {
    profile::process_profile p;
    p.process.pid = static_cast<std::uint32_t>(run.pid);
    p.process.parent_pid = static_cast<std::uint32_t>(::getpid());
    p.process.host = device::host_name();
    p.process.command_line = options.program;
    p.process.start_ns = run.start_ns;
    p.process.end_ns = run.end_ns;
    p.trace.repetitions = {{run.start_ns, run.end_ns, 0, 0}};
    processes.insert(processes.begin(), std::move(p));
    child = processes.begin();
  }
  child->process.exit_code = run.exit_code;
  child->process.signal = run.signal;
}

// No process used CUDA: where CUDA cannot run here at all (no driver, no GPU, ...), that is the
// cause to name first; a program that simply never called CUDA gets the plain note.
std::string no_cuda_note(const std::string& gpu_unavailable) {
  if (!gpu_unavailable.empty())
    return fmt::format("no process of the program used CUDA, and CUDA cannot run on this machine: {}", gpu_unavailable);
  return "no process of the program used CUDA (none initialized the CUDA driver): there is no GPU activity to report";
}

void add_process_notes(const std::vector<profile::process_profile>& processes, std::size_t with_cuda, bool traced,
                       std::vector<std::string>& notes) {
  // Counted in a child (device_list.hpp): CUDA stays out of this process.
  if (with_cuda == 0 && traced) notes.push_back(no_cuda_note(count_gpus(60).why_none));
  for (const auto& p : processes)
    for (const auto& n : p.process.notes)
      if (n.find("another CUPTI client") != std::string::npos &&
          std::find(notes.begin(), notes.end(), n) == notes.end())
        notes.push_back(fmt::format("{} (process {}): its GPU activity is not in this profile", n, p.process.pid));
}

nlohmann::json facts_json(const profile_options& options, const std::string& started_at, const launch_result& run,
                          const std::vector<std::string>& notes, const profile::folder_read& read) {
  nlohmann::json facts{{"command_line", options.program},
                       {"speedlab_command_line", options.command_line},
                       {"started_at", started_at},
                       {"hostname", device::host_name()},
                       {"speedlab_version", SPEEDLAB_VERSION},
                       {"wall_s", static_cast<double>(run.end_ns - run.start_ns) / 1e9},
                       {"exit_code", run.exit_code},
                       {"signal", run.signal ? nlohmann::json(*run.signal) : nlohmann::json()},
                       {"flush_interval_ms", options.flush_interval_ms},
                       {"calibrate", options.calibrate},
                       {"notes", notes},
                       {"read_messages", read.messages},
                       {"processes", nlohmann::json::array()}};
  for (const auto& p : read.processes) facts["processes"].push_back(process_json(p));
  return facts;
}

void print_processes(const profile_options& options, const launch_result& run,
                     const std::vector<profile::process_profile>& processes, std::size_t with_cuda) {
  notes() << fmt::format("speedlab: {} exited with {}{}; {} process(es), {} used CUDA\n", options.program[0],
                         run.exit_code, run.signal ? fmt::format(" (signal {})", *run.signal) : "", processes.size(),
                         with_cuda);
  for (const auto& p : processes) {
    const auto& i = p.process;
    double kernel_ms = 0;
    for (const auto& k : p.trace.kernels) kernel_ms += static_cast<double>(k.end - k.start) / 1e6;
    std::string state = i.used_cuda ? fmt::format("{} kernels ({:.3f} ms), {} copies, {} NVTX ranges", p.trace.kernels.size(),
                                                  kernel_ms, p.trace.memcpys.size(), p.trace.ranges.size())
                                    : "never used CUDA";
    if (i.truncated)
      state += fmt::format("; truncated: data up to the last flush, {:.3f} s after start",
                           static_cast<double>(i.last_flush_ns - std::min(i.last_flush_ns, i.start_ns)) / 1e9);
    if (const auto by = i.tags.find("closed_by"); by != i.tags.end()) state += "; stream closed at " + by->second;
    notes() << fmt::format("  pid {:<8} {:<40} {}\n", i.pid, short_command(i.command_line), state);
  }
}

// The reports of the program; whatever happens to them, speedlab exits as PROGRAM did.
void write_reports(const std::filesystem::path& dir, const std::vector<profile::process_profile>& processes,
                   const nlohmann::json& facts, const std::optional<analysis::device_model>& device) {
  try {
    const auto written = write_profile_reports(dir, processes, facts.get<analysis::program_facts>(),
                                               reports::reporter_names(), device.value_or(analysis::device_model{}));
    for (const auto& f : written.files) notes() << "speedlab: wrote " << f.string() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "speedlab: error: the profile's reports could not be written: " << json_problem(e)
              << " (the streams are kept; run `speedlab report " << dir.string() << "` again)\n";
  }
}

} // namespace

std::optional<analysis::device_model> profile_device_model(const std::string& mode, const std::filesystem::path& dir,
                                                           bool gpu_work) {
  if (!gpu_work) return std::nullopt; // no kernel to place under a roof
  notes() << fmt::format("speedlab: device model ({}): {}\n", mode,
                         mode == "cached" ? "this GPU's cached calibration, else a quick one now"
                         : mode == "off"  ? "the GPU's properties only, no ceilings"
                                          : "calibrating now");
  return obtain_device_model(mode, dir, 600);
}

int command_profile(const profile_options& options) {
  check_options(options);
  const std::filesystem::path dir = profile_dir(options);
  bool created = false;
  auto lock = prepare_folder(dir, options.force, created);

  std::vector<std::string> notes;
  const std::filesystem::path library = choose_library(options, notes);
  const std::string started_at = device::iso_utc_now();
  app::notes() << fmt::format("speedlab: profiling {} (output: {}, flush every {} ms)\n",
                              short_command(options.program), dir.string(), options.flush_interval_ms);
  const launch_result run = launch_and_wait(options.program, program_environment(library, dir, options));
  if (!run.started) {
    std::cerr << "speedlab: " << run.error << '\n';
    std::error_code ec;
    lock.reset();
    if (created) std::filesystem::remove_all(dir, ec); // nothing ran: leave no folder behind (only the lock is in it)
    return 127;
  }

  profile::folder_read read = profile::read_stream_folder(dir);
  auto& processes = read.processes;
  add_direct_child(processes, run, options);
  const std::size_t with_cuda =
      std::count_if(processes.begin(), processes.end(), [](const auto& p) { return p.process.used_cuda; });
  add_process_notes(processes, with_cuda, !library.empty(), notes);
  const nlohmann::json facts = facts_json(options, started_at, run, notes, read);
  write_json_file(dir / facts_file, facts);

  for (const auto& m : read.messages) std::cerr << "speedlab: warning: " << m << '\n';
  print_processes(options, run, processes, with_cuda);
  for (const auto& n : notes) app::notes() << "speedlab: note: " << n << '\n';
  app::notes() << fmt::format("speedlab: profile written to {} ({} and {} stream(s))\n", dir.string(), facts_file,
                              with_cuda);
  if (!options.report) {
    app::notes() << fmt::format("speedlab: no report (--no-report): `speedlab report {}` writes the reports\n",
                                dir.string());
    return run.exit_code;
  }
  // After the program, so calibration never shares the GPU with it; in a child (device_step).
  const auto device = profile_device_model(options.calibrate, dir, with_cuda > 0);
  write_reports(dir, processes, facts, device);
  return run.exit_code;
}

} // namespace speedlab::app
