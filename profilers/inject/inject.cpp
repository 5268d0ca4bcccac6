// libspeedlab-inject.so: `speedlab profile -- PROGRAM` sets CUDA_INJECTION64_PATH and
// NVTX_INJECTION64_PATH to this library, so an unmodified program (C++, CuPy, Numba,
// PyTorch) is traced:
// - CUDA calls InitializeInjection() when the process initializes CUDA: the stream file
//   (model/profile_stream.hpp) is created, CUPTI activity is enabled through the collection
//   core shared with `speedlab run` (profilers/cupti/cupti_collector.hpp), and a flush thread
//   appends a records chunk every flush interval (model/profile_options.hpp, the library's
//   settings as `speedlab profile` writes them; 500 ms by default). At exit the
//   CUPTI buffers are forced out and a closing chunk written. A process that never
//   initializes CUDA never gets here: no file, no thread, no cost.
// - NVTX calls InitializeInjectionNvtx2() at the program's first NVTX call: this library
//   is the NVTX tool itself (profilers/nvtx), not libcupti, because (1) naming libcupti
//   there loads the toolkit's libcupti by path, a second copy beside a PyTorch wheel's own,
//   (2) CUPTI 13.0.0 can crash in nvtxNameOsThreadA as the NVTX tool, and (3) ranges still
//   arrive when another CUPTI client (nsys, torch.profiler) holds CUPTI.
// - libcupti is linked by soname, so a process that already has one (PyTorch's wheel)
//   shares it; the library checks /proc/self/maps and notes a second copy if one appears.
// - speedlab_inject_flush() writes a records chunk on demand: `speedlab run` injects this
//   library into the Python worker of a Python variant under the cupti profiler and asks
//   for the records after the measured repetitions (app/python/python_variants.cpp).
// - --source (injection_options::source_launches = N): the source collector (profilers/source)
//   on this library's subscription: PC sampling over the process's first N kernel launches,
//   SASS metrics (patched kernels) over the next N, then off; the folded lines are written
//   as a source chunk at exit or when the context is destroyed.
// Only these three entry points are exported (inject.map). Nothing here throws out of a CUDA,
// CUPTI or NVTX callback; problems become note chunks in the stream.
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <cupti.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/profile_options.hpp"
#include "model/profile_stream.hpp"
#include "profilers/cupti/cupti_collector.hpp"
#include "profilers/counters/counter_collector.hpp"
#include "profilers/inject/api_recorder.hpp"
#include "profilers/inject/flush_policy.hpp"
#include "profilers/inject/launch_sampler.hpp"
#include "profilers/inject/termination.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/source/source_collector.hpp"

namespace speedlab::inject {
namespace {

namespace cupti = profiling::cupti;

// Taken by the termination flush; a test program holds it (speedlab_inject_test_hold) to
// stand for a thread busy inside the CUDA driver with the locks the flush needs.
std::mutex g_test_flush_lock;
using profiling::steady_now_ns;

constexpr std::size_t buffer_bytes = 8u << 20;
constexpr std::size_t default_cap_bytes = 256u << 20;

std::uint64_t realtime_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::vector<std::string> read_cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// "gpu <index>: <name>, uuid GPU-<hex>" for a CUDA device ordinal, through the driver that
// loaded this library (looked up at run time: the library does not link libcuda). The
// stream reader turns the first such note into the process's gpu, gpu_name and gpu_uuid tags.
std::string gpu_description(std::uint32_t index) {
  using get_fn = CUresult (*)(CUdevice*, int);
  using name_fn = CUresult (*)(char*, int, CUdevice);
  using uuid_fn = CUresult (*)(CUuuid*, CUdevice);
  // The driver is loaded already (it loaded this library), often with RTLD_LOCAL, so look in
  // it by handle (RTLD_NOLOAD: never load a second one); RTLD_DEFAULT did not find it there.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  void* from = driver ? driver : RTLD_DEFAULT;
  auto get = reinterpret_cast<get_fn>(dlsym(from, "cuDeviceGet"));
  auto name = reinterpret_cast<name_fn>(dlsym(from, "cuDeviceGetName"));
  auto uuid = reinterpret_cast<uuid_fn>(dlsym(from, "cuDeviceGetUuid_v2"));
  if (!uuid) uuid = reinterpret_cast<uuid_fn>(dlsym(from, "cuDeviceGetUuid"));
  if (driver) dlclose(driver); // drops only the reference taken above
  CUdevice dev{};
  if (!get || get(&dev, static_cast<int>(index)) != CUDA_SUCCESS) return fmt::format("gpu {}: (not identified)", index);
  char text[256] = {};
  if (!name || name(text, sizeof text - 1, dev) != CUDA_SUCCESS) text[0] = '\0';
  std::string out = fmt::format("gpu {}: {}", index, text[0] ? text : "(no name)");
  CUuuid id{};
  if (uuid && uuid(&id, dev) == CUDA_SUCCESS) {
    const auto* b = reinterpret_cast<const unsigned char*>(id.bytes);
    out += fmt::format(", uuid GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  }
  return out;
}

// The launcher variables of the common multi-process launchers, so ranks can be told apart.
std::map<std::string, std::string> launcher_tags() {
  static const char* names[] = {"RANK",          "LOCAL_RANK",         "WORLD_SIZE",           "LOCAL_WORLD_SIZE",
                                "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
                                "PMI_RANK",      "PMI_SIZE",           "SLURM_PROCID",         "SLURM_LOCALID",
                                "SLURM_NTASKS",  "CUDA_VISIBLE_DEVICES"};
  std::map<std::string, std::string> tags;
  for (const char* n : names)
    if (const char* v = std::getenv(n)) tags[n] = v;
  return tags;
}

// Every distinct libcupti file mapped into this process.
std::set<std::string> mapped_cupti_files() {
  std::set<std::string> files;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    const auto base = path.rfind('/');
    if (path.compare(base + 1, 8, "libcupti") == 0) files.insert(path);
  }
  return files;
}

std::string cupti_in_use() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) && info.dli_fname) return info.dli_fname;
  return "unknown";
}

// ---- the injected collector ---------------------------------------------------------

// Where `--source` is: before the first launch, sampling, SASS metrics, read (waiting for
// the exit to be written), written.
enum class source_phase { idle, sampling, sass, read, done };

class injector {
public:
  // Returns false (after noting why on stderr) when the stream cannot be written at all.
  bool start() {
    m_pid = static_cast<std::uint32_t>(::getpid());
    m_settings = profile::parse_injection_options();
    const profile::injection_options& o = m_settings.options;
    if (o.dir.empty()) {
      std::fprintf(stderr, "speedlab-inject: %s is not set; this process is not profiled\n",
                   profile::variable_name(profile::option::dir));
      return false;
    }
    m_flush_ms = o.flush_ms;
    // A flush forces CUPTI's buffers out once GPU records were held back this long (a GPU
    // never idle at a flush): flush_policy.hpp. 0: never.
    m_policy = flush_policy(o.force_after_ms_or_default() * 1000000ull);
    if (o.max_buffer_mib) m_cap_bytes = *o.max_buffer_mib << 20;
    // Cost knob (scripts/bench/profile_overhead.sh's breakdown): CUPTI's buffer size.
    if (o.buffer_kib) m_buffer_bytes = *o.buffer_kib << 10;
    profile::process_info info;
    info.pid = m_pid;
    info.parent_pid = static_cast<std::uint32_t>(::getppid());
    info.host = host_name();
    info.command_line = read_cmdline();
    info.start_ns = steady_now_ns();
    info.tags = launcher_tags();
    info.tags["libcupti"] = cupti_in_use();
    const launch_settings launches = o.launches; // launch_sampler.hpp: the launch calls recorded
    m_launch_mode = launches.mode;
    m_sampling = launches.sampling;
    if (m_launch_mode == launch_mode::sampled) info.tags["launch_calls"] = "sampled";
    if (m_launch_mode == launch_mode::none) info.tags["launch_calls"] = "none";
    const std::uint64_t realtime = realtime_now_ns();
    std::string error;
    m_writer = profile::stream_writer::create(
        std::filesystem::path(o.dir) / profile::stream_file_name(info.host, m_pid), error);
    if (!m_writer) {
      std::fprintf(stderr, "speedlab-inject: %s; this process is not profiled\n", error.c_str());
      return false;
    }
    m_writer->write(profile::chunk_type::header, profile::header_json(info, realtime, m_flush_ms, "libspeedlab-inject"));
    m_start_ns = info.start_ns;
    for (const auto which :
         {profile::option::force_after_ms, profile::option::buffer_kib, profile::option::launch_calls})
      if (const std::string* why = m_settings.problem(which)) note(*why);

    if (const auto files = mapped_cupti_files(); files.size() > 1)
      note(fmt::format("{} libcupti copies are loaded in this process ({}); records come from {}", files.size(),
                       fmt::join(files, ", "), info.tags["libcupti"]));
    start_cupti();
    start_flush_thread();
    return true;
  }

  // Final flush and the closing chunk; from atexit (or a flush point such as
  // cudaDeviceReset when `final` is false). Not in a forked child: the stream is the parent's.
  void finish(const char* reason) {
    if (static_cast<std::uint32_t>(::getpid()) != m_pid) return;
    {
      std::lock_guard lock(m_mutex);
      if (m_finished) return;
      m_finished = true;
      m_stop = true;
    }
    termination::closed(); // from here a signal or _exit has nobody to ask
    termination::wake();
    if (m_thread.joinable()) m_thread.join();
    if (m_cupti_on) cupti::synchronize_current_context();
    write_source();
    write_counters();
    {
      std::lock_guard flushing(m_flush_mutex);
      close_launch_windows();
      flush_once();
    }
    if (m_cupti_on) {
      cupti::disable_activities(m_enabled);
      cupti::clear_active(m_buffers);
    }
    if (m_api) note_api_callbacks();
    m_writer->write(profile::chunk_type::close, profile::close_json(steady_now_ns(), reason, m_dropped));
  }

  // speedlab_inject_flush(): what CUPTI holds now, written as a records chunk before this
  // returns (the Python bridge asks for it after a point's measured repetitions, while the
  // process lives on). False when the stream is closed or this is a forked child.
  bool flush_now() {
    if (static_cast<std::uint32_t>(::getpid()) != m_pid) return false;
    {
      std::lock_guard lock(m_mutex);
      if (m_finished) return false;
    }
    std::lock_guard flushing(m_flush_mutex);
    flush_once();
    return true;
  }

  void on_fork_child() {
    // The flush thread did not survive the fork and the stream is the parent's.
    if (m_writer) m_writer->abandon();
    m_thread.detach();
  }

  // From CUPTI callbacks before cudaDeviceReset / cuProfilerStop: hand CUPTI's buffers to
  // us now (records of a reset context would be lost) and let the flush thread write them.
  void flush_point() noexcept {
    if (!m_cupti_on) return;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    m_flush_requested.store(true);
    termination::wake();
  }

private:
  void note(const std::string& text) {
    if (static_cast<std::uint32_t>(::getpid()) != m_pid) return;
    m_writer->write(profile::chunk_type::note, profile::note_json(steady_now_ns(), text));
  }

  void start_cupti() {
    if (std::string v = cupti::version_problem(); !v.empty()) {
      note("cupti: " + v + "; no GPU activity recorded");
      return;
    }
    cupti::subscription sub = cupti::subscribe(&on_callback, this, "speedlab-inject");
    if (!sub.ok) {
      // Another CUPTI client (nsys, ncu, torch.profiler...): leave CUPTI to it untouched;
      // NVTX ranges still come through this library.
      note(sub.other_client ? sub.error + "; NVTX ranges are still recorded" : sub.error);
      if (m_settings.is_set(profile::option::source_launches)) note(profile_source_note(sub.error));
      return;
    }
    m_subscriber = sub.handle;
    // Cost knob: clock_offset maps CUPTI's times to the steady clock from offsets read at
    // start instead of CUPTI calling back for every timestamp.
    const cupti::process_setup& setup = cupti::setup_process(!m_settings.options.clock_offset);
    for (const auto& n : setup.notes) note(n);
    if (!setup.error.empty()) {
      note("cupti: " + setup.error);
      cuptiUnsubscribe(m_subscriber); // leave CUPTI free for another client
      return;
    }
    if (!setup.timestamp_callback) m_clock_start = cupti::read_clock_pair();
    m_buffers = std::make_shared<cupti::buffer_state>(m_buffer_bytes, m_cap_bytes);
    m_buffers->prefill();
    cupti::set_active(m_buffers);
    cupti::take_dropped_records();
    std::vector<std::string> notes;
    // Driver API records too: CuPy and Numba launch and copy through the driver API only.
    // Only the calls the analysis uses (launches, synchronizations, copies, memsets,
    // allocations, frees) unless all_api: the other calls (PyTorch makes several per launch)
    // cost a record each and are read by no analysis. runtime_api off: no runtime or
    // synchronization records, a cost knob only (the analysis then has kernels without
    // launch calls).
    const profile::injection_options& o = m_settings.options;
    cupti::activity_selection what{o.runtime_api, o.driver_api, false};
    what.analysis_calls_only = !o.all_api;
    what.api_by_callback = api_source_is_callback();
    what.launch_calls = m_launch_mode != launch_mode::none;
    // No SYNCHRONIZATION records unless sync_records: on the H100 they
    // cost more than every API record together, and the synchronizing calls (waits and
    // polls) are recorded as API calls the analysis reads in their place.
    what.sync_records = o.sync_records;
    m_enabled = cupti::enable_activities(what, notes);
    for (const auto& n : notes) note(n);
    if (!m_enabled.error.empty()) {
      note(m_enabled.error);
      cupti::clear_active(m_buffers);
      cuptiUnsubscribe(m_subscriber);
      return;
    }
    if (what.api_by_callback) start_api_callbacks(what);
    if (m_launch_mode == launch_mode::sampled) start_launch_sampling(what);
    cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    m_cupti_on = true;
    start_source();
    if (m_source && m_settings.is_set(profile::option::metrics))
      note("counters: not read with --source (replays and PC sampling were not checked together); profile again "
           "with --metrics alone");
    else start_counters();
  }

  // Launch calls in windows: CUPTI's activity records of the launch ids, or on the callback
  // path their callbacks, switched on and off. Where they cannot be (a libcupti without
  // per-id calls; on the callback path, --metrics or --source, whose launch callbacks must
  // stay on) every launch call is recorded, and at the close one window spans the process
  // (the analysis then misses nothing).
  void start_launch_sampling(const cupti::activity_selection& what) {
    std::unique_ptr<cupti::launch_switch> sw;
    if (!what.api_by_callback) {
      sw = std::make_unique<cupti::launch_switch>(m_enabled);
    } else if (sampling_by_callback()) {
      sw = std::make_unique<cupti::launch_switch>(m_subscriber, marked(m_api_runtime_ids), marked(m_api_driver_ids));
    }
    if (sw && sw->usable()) {
      m_launch_switch = std::move(sw);
      m_sampler = std::make_unique<launch_sampler>(m_sampling, steady_now_ns());
      note(fmt::format("launch calls recorded {} ms of every {} ms ({}=sampled): a kernel launched between these "
                       "windows has no launch call",
                       m_sampling.window_ns / 1000000, m_sampling.period_ns / 1000000,
                       profile::variable_name(profile::option::launch_calls)));
      return;
    }
    note(what.api_by_callback
             ? "launch calls: not sampled with --metrics or --source (their launch callbacks stay on); every launch "
               "call is recorded"
             : "launch calls: sampling needs CUPTI's activity records enabled call by call, not available here; "
               "every launch call is recorded");
  }

  // The callback path samples launch calls unless --metrics or --source needs every launch
  // callback on.
  bool sampling_by_callback() const {
    return m_launch_mode == launch_mode::sampled && !m_settings.is_set(profile::option::metrics) &&
           !m_settings.is_set(profile::option::source_launches);
  }

  // The ids the callback path switches (marked switched_mark by start_api_callbacks).
  static std::vector<CUpti_CallbackId> marked(const std::vector<std::uint8_t>& marks) {
    std::vector<CUpti_CallbackId> ids;
    for (CUpti_CallbackId id = 0; id < marks.size(); ++id)
      if (marks[id] == switched_mark) ids.push_back(id);
    return ids;
  }

  // On the flush thread: the launch ids switched when the sampler says so. A window opens
  // after the ids are on and closes before they go off, so every call starting inside it
  // was recorded.
  void switch_launch_calls() {
    std::lock_guard flushing(m_flush_mutex);
    if (!m_sampler || !m_sampler->due(steady_now_ns())) return;
    bool ok = true;
    if (m_sampler->on()) {
      m_sampler->switched(steady_now_ns());
      ok = m_launch_switch->set(false);
    } else {
      ok = m_launch_switch->set(true);
      m_sampler->switched(steady_now_ns());
    }
    if (m_api) m_api->switched(); // a call cut by the switch is not taken for an open one
    if (!ok && !m_switch_refused_said) {
      m_switch_refused_said = true;
      note("launch calls: CUPTI refused to switch a launch call id; the windows may hold fewer calls than launched");
    }
  }

  std::uint64_t until_launch_switch_ms() {
    std::lock_guard flushing(m_flush_mutex);
    const std::uint64_t ns = m_sampler ? m_sampler->until_next(steady_now_ns()) : UINT64_MAX;
    return ns == UINT64_MAX ? UINT64_MAX : (ns + 999999) / 1000000;
  }

  // Before the last flush (under m_flush_mutex): the open window ends now.
  void close_launch_windows() {
    if (m_launch_mode != launch_mode::sampled || m_windows_closed) return;
    m_windows_closed = true;
    const std::uint64_t now = steady_now_ns();
    if (m_sampler) m_sampler->close(now);
    else m_writer->write(profile::chunk_type::launch_windows, profile::launch_windows_json(now, {{m_start_ns, now}}));
  }

  // injection_options::api_records: where runtime and driver API records come from. "activity"
  // (CUPTI's RUNTIME/DRIVER activity records, the default) or "callback" (this library's
  // callbacks, api_recorder.hpp: the same records; on the H100 not cheaper, so not the
  // default: docs/results/profile-termination-h100.md).
  bool api_source_is_callback() {
    if (const std::string* why = m_settings.problem(profile::option::api_source)) note(*why);
    return m_settings.options.api_records == profile::api_source::callback;
  }

  // The callback API for the calls the activity path would record (the analysis's calls, or
  // every call with all_api), marked by id in m_api_runtime_ids and
  // m_api_driver_ids so the callback knows them at the cost of an index.
  void start_api_callbacks(const cupti::activity_selection& what) {
    m_api = std::make_unique<api_recorder>(m_pid);
    const bool all = !what.analysis_calls_only;
    const auto enable = [&](CUpti_CallbackDomain domain, std::size_t size, std::vector<std::uint8_t>& marks) {
      marks.assign(size, 0);
      std::vector<CUpti_CallbackId> ids;
      if (all) {
        for (CUpti_CallbackId id = 1; id < size; ++id) ids.push_back(id);
      } else {
        ids = cupti::analysis_callback_ids(domain, what.launch_calls);
      }
      // The launch ids marked before any is enabled: the callbacks read the marks.
      if (sampling_by_callback())
        for (CUpti_CallbackId id : cupti::launch_ids(domain, ids)) marks[id] = switched_mark;
      std::size_t refused = 0;
      for (CUpti_CallbackId id : ids) {
        if (cuptiEnableCallback(1, m_subscriber, domain, id) == CUPTI_SUCCESS) {
          if (!marks[id]) marks[id] = 1;
        } else {
          marks[id] = 0;
          ++refused;
        }
      }
      // "all" asks for ids CUPTI may not have (gaps in the list); only a refused analysis call matters.
      if (refused && !all)
        note(fmt::format("cupti: {} of {} {} API calls could not be recorded through callbacks", refused, ids.size(),
                         domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime"));
    };
    if (what.api_records) enable(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, m_api_runtime_ids);
    if (what.driver_api) enable(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, m_api_driver_ids);
  }

  // A recorded call's entry or exit, on the calling thread: the steady clock (the clock the
  // activity records are mapped to), the correlation id CUPTI gives the call's kernel, copy
  // or memset record. The start time rides in CUPTI's per-call slot from entry to exit.
  void record_api(CUpti_CallbackDomain domain, CUpti_CallbackId id, const CUpti_CallbackData* cb) noexcept {
    const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    const auto& marks = driver ? m_api_driver_ids : m_api_runtime_ids;
    const bool switched = marks[id] == switched_mark; // api_recorded: id < marks.size()
    if (cb->callbackSite == CUPTI_API_ENTER) {
      const bool keep = m_api->enter(driver, cb->correlationId, switched);
      if (cb->correlationData) *cb->correlationData = keep ? steady_now_ns() : 0;
      return;
    }
    const std::uint64_t end = steady_now_ns();
    const std::int32_t status = cb->functionReturnValue ? *static_cast<const std::int32_t*>(cb->functionReturnValue) : 0;
    m_api->exit(driver, id, cb->correlationId, cb->correlationData ? *cb->correlationData : 0, end, status, switched);
  }

  // At exit: what the callback path left out, so a stream says how its API calls were taken.
  void note_api_callbacks() {
    note(fmt::format("cupti: API calls recorded through callbacks ({}=callback); {} driver call(s) made inside a "
                     "recorded runtime call were not recorded (one record per runtime call){}",
                     profile::variable_name(profile::option::api_source), m_api->nested_driver_calls(),
                     m_launch_switch ? fmt::format("; {} launch call(s) in flight when a window opened or closed were "
                                                   "not recorded",
                                                   m_api->cut_by_switch())
                                     : std::string()));
  }

  bool api_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId id) const noexcept {
    const auto& marks = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? m_api_runtime_ids : m_api_driver_ids;
    return id < marks.size() && marks[id];
  }

  // --source: a collector fed this library's callbacks (CUPTI allows one subscription), the
  // windows counted in launches (launch callbacks, shared with the counters' list).
  void start_source() {
    if (!m_settings.is_set(profile::option::source_launches)) return;
    if (const std::string* why = m_settings.problem(profile::option::source_launches)) {
      note(profile_source_note(*why));
      return;
    }
    m_source_window = *m_settings.options.source_launches;
    try {
      m_source = std::make_unique<profiling::source_core::source_collector>(
          profiling::source_core::collector_options{true});
    } catch (const std::exception& e) {
      note(profile_source_note(e.what()));
      return;
    }
    for (const auto& [domain, id] : profiling::source_core::source_collector::resource_callbacks())
      cuptiEnableCallback(1, m_subscriber, static_cast<CUpti_CallbackDomain>(domain), static_cast<CUpti_CallbackId>(id));
    for (const auto& [domain, id] : profiling::counters_core::counter_collector::launch_callbacks()) {
      m_launch_callbacks.insert({domain, id});
      cuptiEnableCallback(1, m_subscriber, static_cast<CUpti_CallbackDomain>(domain), static_cast<CUpti_CallbackId>(id));
    }
    // The pass is read before its context goes (Numba destroys its own at Python's exit).
    cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  }

  static std::string profile_source_note(const std::string& cause) { return source::unavailable_note(cause); }

  // A launch's entry: the first starts sampling, the one after N sampled launches switches
  // to SASS metrics, the one after N more stops (each on the launching thread, before the
  // launch: the switch synchronizes the context, so the phases never overlap a kernel).
  void source_launch(CUpti_CallbackDomain domain, const CUpti_CallbackData* cb) noexcept {
    // A runtime launch calls a driver launch: counted once, at the runtime call (as the
    // counters' launch gate does).
    thread_local int runtime_depth = 0;
    const bool enter = cb->callbackSite == CUPTI_API_ENTER;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      runtime_depth += enter ? 1 : -1;
      if (!enter) return;
    } else if (!enter || runtime_depth > 0) {
      return;
    }
    try {
      std::lock_guard lock(m_source_mutex);
      if (m_source_phase == source_phase::done) return;
      ++m_source_launches;
      const std::uint64_t t0 = steady_now_ns();
      if (m_source_phase == source_phase::idle) {
        m_source->start();
        m_source_phase = source_phase::sampling;
      } else if (m_source_phase == source_phase::sampling && m_source_launches > m_source_window) {
        m_source->next_phase();
        m_source_phase = source_phase::sass;
      } else if (m_source_phase == source_phase::sass && m_source_launches > 2 * m_source_window) {
        m_source->stop();
        m_source_phase = source_phase::read;
      } else {
        return;
      }
      m_source_host_ns += steady_now_ns() - t0;
    } catch (...) {
      m_source_phase = source_phase::done;
    }
  }

  // At exit, or when a context is being destroyed: the running phase stopped and read, the
  // lines folded and written as a source chunk (once), with what the collector has to say.
  void write_source() noexcept {
    std::vector<std::string> said;
    try {
      std::lock_guard lock(m_source_mutex);
      if (!m_source || m_source_phase == source_phase::done) return;
      const source_phase was = m_source_phase;
      m_source_phase = source_phase::done;
      const std::uint64_t t0 = steady_now_ns();
      // The SASS phase still on at exit is switched off unread: reading it there hung once.
      if (was == source_phase::sampling || (was == source_phase::sass && !m_source->abandon_sass())) m_source->stop();
      source::source_pass pass = m_source->take();
      m_source_host_ns += steady_now_ns() - t0;
      pass.setup_wall_ns = static_cast<double>(m_source_host_ns);
      if (was != source_phase::idle) m_writer->write(profile::chunk_type::source, profile::source_json(steady_now_ns(), pass));
      said = m_source->messages();
      said.push_back(source_window_note(was));
    } catch (const std::exception& e) {
      said.push_back(profile_source_note(e.what()));
    } catch (...) {
    }
    for (const auto& n : said) note(n);
  }

  std::string source_window_note(source_phase was) const {
    if (was == source_phase::idle) return "source: no kernel was launched; no source view";
    const std::uint64_t n = m_source_window, seen = m_source_launches;
    std::string sass = seen > n ? fmt::format(", SASS metrics (patched kernels) over launches {} to {}", n + 1,
                                               std::min(seen, 2 * n))
                                : ", no SASS metrics (no launch after the sampling window: no sectors per request)";
    return fmt::format("source: PC sampling over launches 1 to {}{} of the {}{} seen; the launching thread spent "
                       "{:.1f} ms starting, switching and reading the pass (--source-launches sets the window)",
                       std::min(seen, n), sass, seen, seen > 2 * n ? "+" : "", static_cast<double>(m_source_host_ns) / 1e6);
  }

  // --metrics: injection_options::metrics names the metrics. A collector per CUDA context,
  // made at the context's first launch (it must be current), fed the launch callbacks of
  // this library's subscription (CUPTI allows one per process), read when the context is
  // destroyed or at exit.
  void start_counters() {
    if (!m_settings.is_set(profile::option::metrics)) return;
    const profile::injection_options& o = m_settings.options;
    m_counter_options.metrics = o.metrics;
    m_counter_options.metric_set = o.metric_set_or_names();
    if (o.counters_per_kernel) m_counter_options.per_kernel_limit = *o.counters_per_kernel;
    m_counter_options.external_callbacks = true;
    for (const auto& [domain, id] : profiling::counters_core::counter_collector::launch_callbacks()) {
      m_launch_callbacks.insert({domain, id});
      cuptiEnableCallback(1, m_subscriber, static_cast<CUpti_CallbackDomain>(domain), static_cast<CUpti_CallbackId>(id));
    }
    // A context destroyed before the exit handler runs (Numba destroys its own at Python's
    // exit, and reading its counters afterwards crashed the process) is read as it goes.
    cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    m_counters_on = true;
  }

  // A context with a collector is being destroyed: its pass is read and written now.
  void counters_context_ending(CUcontext context) noexcept {
    try {
      std::unique_ptr<profiling::counters_core::counter_collector> c;
      {
        std::lock_guard lock(m_counters_mutex);
        auto it = m_collectors.find(context);
        if (it == m_collectors.end()) return;
        c = std::move(it->second);
        m_collectors.erase(it);
      }
      write_pass(*c);
    } catch (...) {
    }
  }

  // One collector's pass (its replays done, its ranges decoded) as a counters chunk, and
  // what the collector has to say as notes.
  void write_pass(profiling::counters_core::counter_collector& c) {
    std::vector<std::string> said;
    try {
      c.stop();
      const counters::counter_pass pass = c.take();
      m_writer->write(profile::chunk_type::counters, profile::counters_json(steady_now_ns(), pass));
      if (const std::size_t read = pass.kernels.size(); read > 0)
        said.push_back(fmt::format("counters: {} launch(es) were replayed to read their counters (the first {} of each "
                                   "kernel, grid and block); CUPTI records no activity for a replayed launch, so the "
                                   "trace lacks them",
                                   read, pass.per_kernel_limit));
      for (const auto& m : c.messages()) said.push_back(m);
    } catch (const std::exception& e) {
      said.push_back(std::string("counters: ") + e.what());
    }
    for (const auto& n : said) note(n);
  }

  // A launch callback (entry and exit): to the collector of the launch's context, made at
  // its first launch. Nothing here throws out of the callback.
  void counters_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const CUpti_CallbackData* cb) noexcept {
    try {
      std::lock_guard lock(m_counters_mutex);
      if (!m_counters_on || !cb->context) return;
      auto it = m_collectors.find(cb->context);
      if (it == m_collectors.end()) {
        if (cb->callbackSite != CUPTI_API_ENTER) return;
        auto made = std::make_unique<profiling::counters_core::counter_collector>(cb->context, m_counter_options);
        made->start();
        it = m_collectors.emplace(cb->context, std::move(made)).first;
      }
      it->second->on_api_callback(domain, id, cb);
    } catch (const std::exception& e) {
      m_counters_on = false; // one try: the cause is noted at exit
      m_counter_problems.push_back(std::string("counters unavailable: ") + e.what() +
                                   "; the program was traced without them");
    } catch (...) {
      m_counters_on = false;
    }
  }

  // At exit: the pass of each context still alive.
  void write_counters() {
    std::map<CUcontext, std::unique_ptr<profiling::counters_core::counter_collector>> collectors;
    std::vector<std::string> problems;
    {
      std::lock_guard lock(m_counters_mutex);
      m_counters_on = false;
      collectors.swap(m_collectors);
      problems.swap(m_counter_problems);
    }
    for (const auto& p : problems) note(p);
    for (auto& [context, c] : collectors) write_pass(*c);
  }

  static void CUPTIAPI on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept {
    if (!self || !data) return;
    auto* inj = static_cast<injector*>(self);
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        inj->write_source();
        inj->counters_context_ending(static_cast<const CUpti_ResourceData*>(data)->context);
      } else if (inj->m_source) { // context created, module loaded: the source collector's
        inj->m_source->on_callback(domain, id, data);
      }
      return;
    }
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (inj->m_api && inj->api_recorded(domain, id)) inj->record_api(domain, id, cb);
    if (!inj->m_launch_callbacks.empty() &&
        inj->m_launch_callbacks.count({static_cast<int>(domain), static_cast<unsigned>(id)})) {
      if (inj->m_source) inj->source_launch(domain, cb);
      else inj->counters_callback(domain, id, cb);
      return;
    }
    if (cb->callbackSite != CUPTI_API_ENTER) return;
    if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && id == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) ||
        (domain == CUPTI_CB_DOMAIN_DRIVER_API && id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop))
      static_cast<injector*>(self)->flush_point();
  }

  // The flush thread starts with SIGTERM, SIGINT and SIGHUP blocked (inherited from this
  // thread's mask, so no signal can reach it before it runs), then the handlers go in: a
  // handler never runs on the thread it waits for (termination.hpp).
  void start_flush_thread() {
    sigset_t block{}, old{};
    sigemptyset(&block);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&block, sig);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    m_thread = std::thread([this] { flush_loop(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (const std::string* why = m_settings.problem(profile::option::signal_wait_ms)) note(*why);
    const std::uint32_t wait_ms = m_settings.options.signal_wait_ms;
    m_signal_wait_ms = wait_ms;
    std::string error;
    // signals off: the program's signals untouched (_exit is still handled).
    if (!termination::install(wait_ms, m_settings.options.signals, error))
      note("signals: " + error + "; records since the last flush are lost if the process is ended by a signal");
  }

  // Wakes for a termination request, a flush point or finish(); otherwise every
  // recheck_interval_ms (the program may have replaced a handler) and flushes every m_flush_ms.
  void flush_loop() {
    std::uint64_t next_flush = steady_now_ns() + m_flush_ms * 1000000ull;
    for (;;) {
      const std::uint64_t now = steady_now_ns();
      const std::uint64_t until_flush_ms = next_flush > now ? (next_flush - now + 999999) / 1000000 : 0;
      pollfd p{termination::wake_fd(), POLLIN, 0};
      const std::uint64_t wait_ms = std::min({until_flush_ms, std::uint64_t{termination::recheck_interval_ms},
                                              until_launch_switch_ms()});
      ::poll(&p, 1, static_cast<int>(wait_ms));
      const termination::request r = termination::take();
      {
        std::lock_guard lock(m_mutex);
        if (m_stop) break;
      }
      if (r.kind != termination::request::none) {
        on_termination(r);
        termination::done();
        if (r.final) break;
        continue;
      }
      switch_launch_calls();
      if (const std::string taken = termination::recheck(); !taken.empty())
        note("signals: the program installed its own handler for " + taken + "; speedlab's runs first and passes " +
             "the signal on to it");
      if (steady_now_ns() < next_flush && !m_flush_requested.exchange(false)) continue;
      periodic_flush();
      next_flush = steady_now_ns() + m_flush_ms * 1000000ull;
    }
  }

  void periodic_flush() {
    try {
      std::lock_guard flushing(m_flush_mutex);
      const bool force = m_policy.should_force(steady_now_ns());
      flush_once(force);
      if (force) {
        m_policy.forced(steady_now_ns());
        if (!m_force_said) {
          m_force_said = true;
          note(fmt::format("cupti: no kernel or copy record came out for {:.1f} s while work was launched (the "
                           "GPU was busy at every flush): this flush, and any later one after as long, forced "
                           "CUPTI's buffers out; records of work running at such a flush are lost and counted as "
                           "dropped ({}, 0: never force)",
                           static_cast<double>(m_policy.force_after_ns()) / 1e9,
                           profile::variable_name(profile::option::force_after_ms)));
        }
      }
    } catch (...) {
    }
  }

  // A signal or _exit (termination.hpp), on the flush thread while the handler waits: the
  // GPU's work finished (bounded: the launching thread is stopped anywhere, maybe inside the
  // driver), CUPTI's buffers forced out into a records chunk, and, when the process ends
  // next, the closing chunk naming how. When the program's own handler runs next, the
  // process may go on: a note, and the stream stays open.
  void on_termination(const termination::request& r) noexcept {
    try {
      const std::string how = r.kind == termination::request::signal ? termination::signal_name(r.value)
                                                                     : fmt::format("_exit({})", r.value);
      if (r.signal_unix_ns != 0) // the work finished before it is what must be kept
        note(fmt::format("{} received at Unix time {:.6f} s", how, static_cast<double>(r.signal_unix_ns) / 1e9));
      if (m_cupti_on && !synchronize_gpus(m_signal_wait_ms * 3 / 5))
        note(fmt::format("{}: the GPU did not finish its work within {} ms; records of work still running are lost",
                         how, m_signal_wait_ms * 3 / 5));
      {
        std::lock_guard held_by_test(g_test_flush_lock); // stands for the driver's locks (tests)
        std::lock_guard flushing(m_flush_mutex);
        close_launch_windows();
        flush_once(true);
      }
      if (r.handler_next)
        note(how + " received: the records so far are written and the stream closed; the program's own handler "
                   "runs next (records after it are not kept)");
      else if (!r.final) {
        note(how + " received: the records so far are written; the program's own handler runs next");
        return;
      }
      {
        std::lock_guard lock(m_mutex);
        if (m_finished) return;
        m_finished = m_stop = true;
      }
      termination::closed();
      if (!m_counter_options.metrics.empty())
        note(how + ": the counters of CUDA contexts still alive are not read (the process is ending)");
      if (m_api) note_api_callbacks();
      m_writer->write(profile::chunk_type::close, profile::close_json(steady_now_ns(), how, m_dropped));
    } catch (...) {
    }
  }

  // Every active primary context synchronized from a helper thread, waited for at most
  // `wait_ms`: a context the stopped thread holds a driver lock on must not hang the flush.
  static bool synchronize_gpus(std::uint32_t wait_ms) {
    auto finished = std::make_shared<std::promise<void>>();
    std::future<void> f = finished->get_future();
    std::thread([finished] {
      cupti::synchronize_primary_contexts();
      finished->set_value();
    }).detach();
    return f.wait_for(std::chrono::milliseconds(wait_ms)) == std::future_status::ready;
  }

  // CUPTI's buffers -> parsed records -> one records chunk. Callers hold m_flush_mutex (the
  // flush thread, flush_now(), finish()). `forced` also takes buffers that hold records of
  // work still in flight: CUPTI hands those over without timestamps and never again, so they
  // are lost (a rank slowed by a 20 ms kernel lost 41 kernel records to periodic forced
  // flushes). The final flush, after the context is synchronized, and the explicit flush
  // points force; the periodic ones only when flush_policy says records are held back.
  void flush_once(bool forced = true) {
    trace::device_trace batch;
    batch.backend = "cupti";
    batch.process = m_pid;
    if (m_cupti_on) {
      cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
      cupti::parsed_records records = m_buffers->take();
      if (m_clock_start) {
        const auto now = cupti::read_clock_pair().value_or(*m_clock_start);
        cupti::map_clock(records, cupti::clock_map::from_pairs(m_clock_start->cupti, m_clock_start->steady, now.cupti,
                                                               now.steady));
      }
      if (m_api) { // already on the steady clock: after map_clock
        std::vector<trace::api_record> calls = m_api->drain();
        records.trace.api_calls.insert(records.trace.api_calls.end(), std::make_move_iterator(calls.begin()),
                                       std::make_move_iterator(calls.end()));
        const std::uint64_t not_kept = m_api->not_kept();
        records.incomplete += not_kept - m_api_not_kept;
        m_api_not_kept = not_kept;
      }
      const std::uint64_t dropped = cupti::take_dropped_records() + records.incomplete;
      std::uint64_t unpaired = 0;
      cupti::finalize(std::move(records), &cupti::cupti_api_name, batch, &unpaired);
      m_policy.delivered(batch, steady_now_ns());
      batch.dropped_records = dropped;
      batch.buffer_bytes = m_buffers->peak_bytes();
      m_dropped += dropped;
      if (m_buffers->refused() > m_refused_said) {
        m_refused_said = m_buffers->refused();
        note(fmt::format("cupti: buffer cap of {} reached: CUPTI dropped records (set {} or a shorter "
                         "--flush-interval)",
                         cupti::readable_size(m_buffers->max_bytes()),
                         profile::variable_name(profile::option::max_buffer_mib)));
      }
    }
    for (const auto& k : batch.kernels) // each GPU the process ran kernels on, named once
      if (m_gpus_said.insert(k.device).second) note(gpu_description(k.device));
    if (m_sampler)
      if (auto windows = m_sampler->take_closed(); !windows.empty())
        m_writer->write(profile::chunk_type::launch_windows, profile::launch_windows_json(steady_now_ns(), windows));
    batch.ranges = profiling::nvtx_capture::drain();
    if (const std::uint64_t lost = profiling::nvtx_capture::dropped(); lost > m_nvtx_dropped_said) {
      m_nvtx_dropped_said = lost;
      note(fmt::format("nvtx: {} range(s) lost to the recorder's cap", lost));
    }
    if (!batch.has_gpu_activity() && batch.api_calls.empty() && batch.ranges.empty() && batch.syncs.empty() &&
        !batch.dropped_records)
      return;
    // Binary columns (docs/profile-format.md): about as fast to write as the records are to
    // parse, and read back without a JSON parser.
    m_writer->write_bytes(profile::chunk_type::records_binary, profile::records_binary(steady_now_ns(), batch));
  }

  std::uint32_t m_pid = 0;
  std::uint64_t m_start_ns = 0;
  profile::parsed_injection_options m_settings; // read once, at start()
  std::uint32_t m_flush_ms = profile::default_flush_ms;
  // Launch calls (injection_options::launches); with sampling, the sampler and the ids it
  // switches, under m_flush_mutex once the flush thread runs.
  launch_mode m_launch_mode = launch_mode::all;
  launch_sampling m_sampling;
  std::unique_ptr<launch_sampler> m_sampler;
  std::unique_ptr<cupti::launch_switch> m_launch_switch;
  bool m_windows_closed = false, m_switch_refused_said = false;
  flush_policy m_policy{0};
  bool m_force_said = false;
  std::size_t m_cap_bytes = default_cap_bytes;
  std::size_t m_buffer_bytes = buffer_bytes;
  std::unique_ptr<profile::stream_writer> m_writer;
  CUpti_SubscriberHandle m_subscriber{};
  // Counters (--metrics): m_launch_callbacks is written before the callbacks are enabled and
  // only read after; the rest under m_counters_mutex (launching threads, exit).
  std::set<std::pair<int, unsigned>> m_launch_callbacks;
  profiling::counters_core::collector_options m_counter_options;
  std::mutex m_counters_mutex;
  bool m_counters_on = false;
  std::map<CUcontext, std::unique_ptr<profiling::counters_core::counter_collector>> m_collectors;
  std::vector<std::string> m_counter_problems;
  // Source (--source): the collector lives to the end of the process (CUPTI may call it
  // late); its phase and the launch count under m_source_mutex.
  std::unique_ptr<profiling::source_core::source_collector> m_source;
  std::mutex m_source_mutex;
  source_phase m_source_phase = source_phase::idle;
  std::uint64_t m_source_window = 0, m_source_launches = 0, m_source_host_ns = 0;
  bool m_cupti_on = false;
  cupti::enabled_activities m_enabled;
  std::shared_ptr<cupti::buffer_state> m_buffers;
  // api_records callback: the recorder and the callback ids it records,
  // written before the callbacks are enabled and only read after.
  std::unique_ptr<api_recorder> m_api;
  std::vector<std::uint8_t> m_api_runtime_ids, m_api_driver_ids; // 1: recorded; switched_mark: a sampled launch
  static constexpr std::uint8_t switched_mark = 2;
  std::uint64_t m_api_not_kept = 0;
  std::optional<cupti::clock_pair> m_clock_start;
  std::uint64_t m_dropped = 0, m_refused_said = 0, m_nvtx_dropped_said = 0;
  std::set<std::uint32_t> m_gpus_said;
  std::thread m_thread;
  std::mutex m_mutex; // guards m_stop/m_finished; never held across a CUPTI call
  // One flush at a time. Held across CUPTI calls, so no CUPTI callback ever takes it.
  std::mutex m_flush_mutex;
  std::atomic<bool> m_flush_requested{false}; // a flush point asked for a flush now
  std::uint32_t m_signal_wait_ms = termination::default_wait_ms;
  bool m_stop = false, m_finished = false;
};

// Never destroyed: atexit handlers and CUPTI callbacks may run during static destruction.
injector* g_injector = nullptr;
std::once_flag g_cuda_once, g_nvtx_once;

void at_exit() noexcept {
  try {
    if (g_injector) g_injector->finish("exit");
  } catch (...) {
  }
}

void at_fork_child() noexcept {
  if (g_injector) g_injector->on_fork_child();
}

// NVTX ranges are recorded from the first NVTX call on, also before CUDA starts; they are
// written from the first flush once CUDA initialized this library.
void start_nvtx_capture() {
  std::call_once(g_nvtx_once, [] { new profiling::nvtx_capture; });
}

} // namespace
} // namespace speedlab::inject

extern "C" {

// Tests only (tests/helpers/signal_probe.cpp): 1 takes the lock the termination flush
// needs, 0 lets it go, from the calling thread.
__attribute__((visibility("default"))) void speedlab_inject_test_hold(int hold) {
  if (hold) speedlab::inject::g_test_flush_lock.lock();
  else speedlab::inject::g_test_flush_lock.unlock();
}

// CUDA's injection entry point (CUDA_INJECTION64_PATH), called once per process during
// CUDA initialization; the once flag guards against a second call all the same.
__attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace speedlab::inject;
  std::call_once(g_cuda_once, [] {
    try {
      start_nvtx_capture();
      auto* inj = new injector;
      if (!inj->start()) return;
      g_injector = inj;
      pthread_atfork(nullptr, nullptr, &at_fork_child);
      // The final flush runs in at_exit; exit() runs handlers in reverse order of
      // registration, static destructors included, so everything the flush uses is made
      // before at_exit is registered (seen on the GPU machine: a trace written from at_exit
      // with a destroyed static table of column names).
      (void)speedlab::profile::records_binary(0, speedlab::trace::device_trace{});
      std::atexit(&at_exit);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "speedlab-inject: setup failed: %s; this process is not profiled\n", e.what());
    } catch (...) {
    }
  });
  return 1;
}

// Writes what CUPTI has recorded so far to the stream now; 1 when written, 0 when this
// process is not being profiled (CUDA never started, or the stream is closed). For a
// process that lives on past a measurement (the Python worker of `speedlab run`), so
// nothing waits for the flush interval or the exit.
__attribute__((visibility("default"))) int speedlab_inject_flush(void) {
  using namespace speedlab::inject;
  try {
    return g_injector && g_injector->flush_now() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

// NVTX's injection entry point (NVTX_INJECTION64_PATH).
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  using namespace speedlab::inject;
  // Cost knob: nvtx off declines to be the NVTX tool (no ranges recorded).
  if (!speedlab::profile::parse_injection_options().options.nvtx) return 0;
  try {
    start_nvtx_capture();
  } catch (...) {
    return 0;
  }
  return speedlab::profiling::initialize_nvtx_tool(get_export_table);
}

} // extern "C"
