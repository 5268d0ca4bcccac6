// "cupti" in a profiled program (`speedlab profile`): the program session of the cupti
// backend (program_session.hpp). It holds the process's CUPTI subscription (shared with the
// other backends through callback_hub), enables the activity records with the collection
// core shared with `speedlab run` (cupti_collector.hpp), and at each flush writes what CUPTI
// completed, with the NVTX ranges the library recorded, as one records chunk. Options (the
// library's one options block, model/profile_options.hpp): the buffers and their cap, which
// API calls and from where (activity records or callbacks, api_recorder.hpp), launch calls
// in windows (launch_sampler.hpp), the clock, and when a flush forces (flush_policy.hpp).
// Nothing here throws out of a CUPTI callback; problems become note chunks.
#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <cupti.h>

#include <fmt/format.h>

#include "profilers/cupti/api_recorder.hpp"
#include "profilers/cupti/callback_hub.hpp"
#include "profilers/cupti/cupti_collector.hpp"
#include "profilers/cupti/flush_policy.hpp"
#include "profilers/cupti/launch_sampler.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/program_session.hpp"

namespace speedlab::profiling {
namespace {

using inject::api_recorder;
using inject::flush_policy;
using inject::launch_mode;
using inject::launch_sampler;
using inject::launch_sampling;
using inject::launch_settings;

constexpr std::size_t default_buffer_bytes = 8u << 20;
constexpr std::size_t default_cap_bytes = 256u << 20;

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
    out += fmt::format(
        ", uuid "
        "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  }
  return out;
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

// Every active primary context synchronized from a helper thread, waited for at most
// `wait_ms`: a context the stopped thread holds a driver lock on must not hang the flush.
bool synchronize_gpus(std::uint32_t wait_ms) {
  auto finished = std::make_shared<std::promise<void>>();
  std::future<void> f = finished->get_future();
  std::thread([finished] {
    cupti::synchronize_primary_contexts();
    finished->set_value();
  }).detach();
  return f.wait_for(std::chrono::milliseconds(wait_ms)) == std::future_status::ready;
}

class cupti_program final : public program_session, public cupti::callback_client {
public:
  bool configure(const profile::parsed_injection_options& settings, std::map<std::string, std::string>& tags) override {
    m_settings = settings;
    const profile::cupti_injection_options& o = settings.options.cupti;
    // A flush forces CUPTI's buffers out once GPU records were held back this long (a GPU
    // never idle at a flush): flush_policy.hpp. 0: never.
    m_policy = flush_policy(settings.options.force_after_ms_or_default() * 1000000ull);
    if (o.max_buffer_mib) m_cap_bytes = *o.max_buffer_mib << 20;
    // Cost knob (scripts/bench/profile_overhead.sh's breakdown): CUPTI's buffer size.
    if (o.buffer_kib) m_buffer_bytes = *o.buffer_kib << 10;
    tags["libcupti"] = cupti_in_use();
    const launch_settings launches = o.launches; // launch_sampler.hpp: the launch calls recorded
    m_launch_mode = launches.mode;
    m_sampling = launches.sampling;
    if (m_launch_mode == launch_mode::sampled) tags["launch_calls"] = "sampled";
    if (m_launch_mode == launch_mode::none) tags["launch_calls"] = "none";
    return true; // the records chunks also carry the NVTX ranges, CUPTI or not
  }

  void start(program_host& host) override {
    m_host = &host;
    for (const auto which :
         {profile::option::force_after_ms, profile::option::buffer_kib, profile::option::launch_calls})
      if (const std::string* why = m_settings.problem(which)) note(*why);
    if (const auto files = mapped_cupti_files(); files.size() > 1)
      note(fmt::format("{} libcupti copies are loaded in this process ({}); records come from {}", files.size(),
                       fmt::join(files, ", "), cupti_in_use()));
    if (!subscribe()) return;
    if (!enable()) {
      cupti::clear_active(m_buffers);
      hub().unsubscribe();
      return;
    }
    hub().enable(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    hub().enable(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    m_cupti_on = true;
  }

  void flush(flush_kind kind) override {
    if (kind != flush_kind::periodic) {
      if (kind == flush_kind::last) close_launch_windows();
      flush_once(true);
      return;
    }
    const bool force = m_policy.should_force(steady_now_ns());
    flush_once(force);
    if (!force) return;
    m_policy.forced(steady_now_ns());
    if (m_force_said) return;
    m_force_said = true;
    note(fmt::format("cupti: no kernel or copy record came out for {:.1f} s while work was launched (the "
                     "GPU was busy at every flush): this flush, and any later one after as long, forced "
                     "CUPTI's buffers out; records of work running at such a flush are lost and counted as "
                     "dropped ({}, 0: never force)",
                     static_cast<double>(m_policy.force_after_ns()) / 1e9,
                     profile::variable_name(profile::option::force_after_ms)));
  }

  std::uint64_t until_tick_ms() override {
    const std::uint64_t ns = m_sampler ? m_sampler->until_next(steady_now_ns()) : UINT64_MAX;
    return ns == UINT64_MAX ? UINT64_MAX : (ns + 999999) / 1000000;
  }

  void tick() override { switch_launch_calls(); }

  void stop(const program_end& end) override {
    if (!m_cupti_on) return;
    if (!end.terminated) {
      cupti::synchronize_current_context();
      return;
    }
    if (const std::uint32_t wait_ms = end.wait_ms * 3 / 5; !synchronize_gpus(wait_ms))
      note(fmt::format("{}: the GPU did not finish its work within {} ms; records of work still running are lost",
                       end.how, wait_ms));
  }

  void close(const program_end& end) override {
    if (m_cupti_on && !end.terminated) {
      cupti::disable_activities(m_enabled);
      cupti::clear_active(m_buffers);
    }
    if (m_api) note_api_callbacks();
  }

  std::uint64_t dropped() const override { return m_dropped; }

  // The program's switch (speedlab_inject_capture("cupti", on)): the API calls recorded
  // through callbacks (api_source callback), their callbacks disabled in CUPTI while off, so
  // only the kernel, copy and memset records remain: what the API calls cost, paired inside
  // one process (speedlab_launch_storm and torch_loop.py --alternate-capture cupti). Not on the
  // activity path (a disabled activity kind keeps its cost: LOW-OVERHEAD.md), nor where
  // launches are reserved (--metrics, --source: their collectors enable the launch callbacks
  // by themselves). With launch calls in windows (the light default) the launch ids go off
  // too while off, and the windows keep their cycle, switching nothing until it is on again:
  // the default's whole cost against kernel records alone (a window during an off block
  // recorded no call; the close says how often the program switched).
  bool set_capture(bool on) override {
    if (!m_api || hub().launches_reserved()) return false;
    std::lock_guard lock(m_switch_mutex);
    if (m_capturing == on) return true;
    m_capturing = on;
    ++m_program_switches;
    const bool windows = m_sampler != nullptr; // the launch ids are the windows' to switch
    const auto each = [on, windows](CUpti_CallbackDomain domain, const std::vector<std::uint8_t>& marks) {
      for (CUpti_CallbackId id = 0; id < marks.size(); ++id)
        if (marks[id] && !(windows && marks[id] == switched_mark)) hub().enable(domain, id, on);
    };
    each(CUPTI_CB_DOMAIN_RUNTIME_API, m_api_runtime_ids);
    each(CUPTI_CB_DOMAIN_DRIVER_API, m_api_driver_ids);
    if (windows && m_sampler->on()) m_launch_switch->set(on);
    m_api->switched(); // a call cut by the switch is not taken for an open one
    hub().callbacks_switched();
    return true;
  }

  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept override {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (m_api && api_recorded(domain, id)) record_api(domain, id, cb);
    if (cb->callbackSite != CUPTI_API_ENTER) return;
    if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && id == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) ||
        (domain == CUPTI_CB_DOMAIN_DRIVER_API && id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop))
      flush_point();
  }

private:
  static cupti::callback_hub& hub() { return cupti::callback_hub::process(); }

  void note(const std::string& text) { m_host->note(text); }

  // The process's one subscription and CUPTI's setup; false (noted) when CUPTI is not ours.
  bool subscribe() {
    if (std::string v = cupti::version_problem(); !v.empty()) {
      note("cupti: " + v + "; no GPU activity recorded");
      return false;
    }
    cupti::subscription sub = hub().subscribe("speedlab-inject");
    if (!sub.ok) {
      // Another CUPTI client (nsys, ncu, torch.profiler...): leave CUPTI to it untouched;
      // NVTX ranges still come through this library.
      note(sub.other_client ? sub.error + "; NVTX ranges are still recorded" : sub.error);
      return false;
    }
    hub().add(this); // before any of its callbacks is enabled
    // Cost knob: clock_offset maps CUPTI's times to the steady clock from offsets read at
    // start instead of CUPTI calling back for every timestamp.
    const cupti::process_setup& setup = cupti::setup_process(!m_settings.options.cupti.clock_offset);
    for (const auto& n : setup.notes) note(n);
    if (!setup.error.empty()) {
      note("cupti: " + setup.error);
      hub().unsubscribe();
      return false;
    }
    if (!setup.timestamp_callback) m_clock_start = cupti::read_clock_pair();
    m_buffers = std::make_shared<cupti::buffer_state>(m_buffer_bytes, m_cap_bytes);
    m_buffers->prefill();
    cupti::set_active(m_buffers);
    cupti::take_dropped_records();
    return true;
  }

  // The activity records, and the API calls through callbacks where asked; false (noted)
  // when CONCURRENT_KERNEL was refused.
  bool enable() {
    std::vector<std::string> notes;
    // Driver API records too: CuPy and Numba launch and copy through the driver API only.
    // Only the calls the analysis uses (launches, synchronizations, copies, memsets,
    // allocations, frees) unless all_api: the other calls (PyTorch makes several per launch)
    // cost a record each and are read by no analysis. runtime_api off: no runtime or
    // synchronization records, a cost knob only (the analysis then has kernels without
    // launch calls).
    const profile::cupti_injection_options& o = m_settings.options.cupti;
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
      return false;
    }
    if (what.api_by_callback) start_api_callbacks(what);
    if (m_launch_mode == launch_mode::sampled) start_launch_sampling(what);
    return true;
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
      sw = std::make_unique<cupti::launch_switch>(hub().handle(), marked(m_api_runtime_ids), marked(m_api_driver_ids));
    }
    if (sw && sw->usable()) {
      m_launch_switch = std::move(sw);
      // On the callback path the first launch is seen, so the start-up window closes a
      // period after it (launch_sampler.hpp); the activity path's cycle starts at once.
      m_sampler = std::make_unique<launch_sampler>(what.api_by_callback
                                                       ? launch_sampler::with_startup(m_sampling, steady_now_ns())
                                                       : launch_sampler(m_sampling, steady_now_ns()));
      hub().windows_launches();
      note(fmt::format("launch calls recorded {} ms of every {} ms{} (the light capture; --full or {}=all records "
                       "every one): a kernel launched between these windows has no launch call",
                       m_sampling.window_ns / 1000000, m_sampling.period_ns / 1000000,
                       what.api_by_callback ? ", and from the start to a period after the first launch" : "",
                       profile::variable_name(profile::option::launch_calls)));
      return;
    }
    note(what.api_by_callback
             ? "launch calls: not sampled with --metrics or --source (their launch callbacks stay on); every launch "
               "call is recorded"
             : "launch calls: sampling needs CUPTI's activity records enabled call by call, not available here; "
               "every launch call is recorded");
  }

  // The callback path samples launch calls unless another backend (--metrics, --source)
  // needs every launch callback on.
  bool sampling_by_callback() const { return m_launch_mode == launch_mode::sampled && !hub().launches_reserved(); }

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
    if (m_sampler && m_api && m_sampler->awaits_first_launch())
      if (const std::uint64_t first = m_api->first_switched_ns()) m_sampler->first_launch(first);
    if (!m_sampler || !m_sampler->due(steady_now_ns())) return;
    std::lock_guard lock(m_switch_mutex); // the program's switch (set_capture) holds the ids while off
    bool ok = true;
    const std::uint64_t t0 = steady_now_ns();
    if (m_sampler->on()) {
      m_sampler->switched(steady_now_ns());
      if (m_capturing) ok = m_launch_switch->set(false);
    } else {
      if (m_capturing) ok = m_launch_switch->set(true);
      m_sampler->switched(steady_now_ns());
    }
    m_switch_ns.add(steady_now_ns() - t0);
    if (m_api) m_api->switched(); // a call cut by the switch is not taken for an open one
    hub().callbacks_switched();   // nor by another client of the same callbacks (python's)
    if (!ok && !m_switch_refused_said) {
      m_switch_refused_said = true;
      note("launch calls: CUPTI refused to switch a launch call id; the windows may hold fewer calls than launched");
    }
  }

  // Before the last flush: the open window ends now.
  void close_launch_windows() {
    if (m_launch_mode != launch_mode::sampled || m_windows_closed) return;
    m_windows_closed = true;
    const std::uint64_t now = steady_now_ns();
    if (m_sampler)
      m_sampler->close(now);
    else
      m_host->write(profile::chunk_type::launch_windows,
                    profile::launch_windows_json(now, {{m_host->start_ns(), now}}));
  }

  // injection_options::api_records: where runtime and driver API records come from. "activity"
  // (CUPTI's RUNTIME/DRIVER activity records, the default) or "callback" (this library's
  // callbacks, api_recorder.hpp: the same records; on the H100 not cheaper, so not the
  // default: docs/results/profile-termination-h100.md).
  bool api_source_is_callback() {
    if (const std::string* why = m_settings.problem(profile::option::api_source)) note(*why);
    return m_settings.options.cupti.api_records == profile::api_source::callback;
  }

  // The callback API for the calls the activity path would record (the analysis's calls, or
  // every call with all_api), marked by id in m_api_runtime_ids and
  // m_api_driver_ids so the callback knows them at the cost of an index.
  void start_api_callbacks(const cupti::activity_selection& what) {
    m_api = std::make_unique<api_recorder>(m_host->pid());
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
        if (hub().enable(domain, id) == CUPTI_SUCCESS) {
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
      const std::uint64_t start = keep ? steady_now_ns() : 0;
      if (cb->correlationData) *cb->correlationData = start;
      if (switched && keep) m_api->saw_switched(start);
      return;
    }
    const std::uint64_t end = steady_now_ns();
    const std::int32_t status =
        cb->functionReturnValue ? *static_cast<const std::int32_t*>(cb->functionReturnValue) : 0;
    m_api->exit(driver, id, cb->correlationId, cb->correlationData ? *cb->correlationData : 0, end, status, switched);
  }

  // At the close: what the callback path left out, so a stream says how its API calls were taken.
  void note_api_callbacks() {
    note(fmt::format("cupti: API calls recorded through callbacks ({}=callback); {} driver call(s) made inside a "
                     "recorded runtime call were not recorded (one record per runtime call){}",
                     profile::variable_name(profile::option::api_source), m_api->nested_driver_calls(),
                     m_launch_switch ? fmt::format("; {} launch call(s) in flight when a window opened or closed were "
                                                   "not recorded",
                                                   m_api->cut_by_switch())
                                     : std::string()));
    if (m_sampler && m_switch_ns.count)
      note(fmt::format("cupti: the launch calls' callbacks were switched {} time(s) (windows opened and closed), "
                       "{:.1f} us each on average, {:.1f} us at most, on the flush thread",
                       m_switch_ns.count, m_switch_ns.total_ns / 1e3 / static_cast<double>(m_switch_ns.count),
                       m_switch_ns.max_ns / 1e3));
    if (m_sampler && m_program_switches)
      note(fmt::format("cupti: the program switched the API calls' capture {} time(s) (speedlab_inject_capture); a "
                       "launch window while it was off recorded no launch call",
                       m_program_switches));
  }

  bool api_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId id) const noexcept {
    const auto& marks = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? m_api_runtime_ids : m_api_driver_ids;
    return id < marks.size() && marks[id];
  }

  // From CUPTI callbacks before cudaDeviceReset / cuProfilerStop: hand CUPTI's buffers to
  // us now (records of a reset context would be lost) and let the flush thread write them.
  void flush_point() noexcept {
    if (!m_cupti_on) return;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    m_host->request_flush();
  }

  // CUPTI's buffers -> parsed records -> one records chunk (the host holds its flush lock).
  // `forced` also takes buffers that hold records of work still in flight: CUPTI hands those
  // over without timestamps and never again, so they are lost (a rank slowed by a 20 ms
  // kernel lost 41 kernel records to periodic forced flushes). The final flush, after the
  // context is synchronized, and the explicit flush points force; the periodic ones only
  // when flush_policy says records are held back.
  void flush_once(bool forced) {
    trace::device_trace batch;
    batch.backend = "cupti";
    batch.process = m_host->pid();
    if (m_cupti_on) take_records(forced, batch);
    for (const auto& k : batch.kernels) // each GPU the process ran kernels on, named once
      if (m_gpus_said.insert(k.device).second) note(gpu_description(k.device));
    if (m_sampler)
      if (auto windows = m_sampler->take_closed(); !windows.empty())
        m_host->write(profile::chunk_type::launch_windows, profile::launch_windows_json(steady_now_ns(), windows));
    batch.ranges = nvtx_capture::drain();
    if (const std::uint64_t lost = nvtx_capture::dropped(); lost > m_nvtx_dropped_said) {
      m_nvtx_dropped_said = lost;
      note(fmt::format("nvtx: {} range(s) lost to the recorder's cap", lost));
    }
    if (!batch.has_gpu_activity() && batch.api_calls.empty() && batch.ranges.empty() && batch.syncs.empty() &&
        !batch.dropped_records)
      return;
    // Binary columns (docs/profile-format.md): about as fast to write as the records are to
    // parse, and read back without a JSON parser.
    m_host->write_bytes(profile::chunk_type::records_binary, profile::records_binary(steady_now_ns(), batch));
  }

  void take_records(bool forced, trace::device_trace& batch) {
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    cupti::parsed_records records = m_buffers->take();
    if (m_clock_start) {
      const auto now = cupti::read_clock_pair().value_or(*m_clock_start);
      cupti::map_clock(
          records, cupti::clock_map::from_pairs(m_clock_start->cupti, m_clock_start->steady, now.cupti, now.steady));
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

  program_host* m_host = nullptr;
  profile::parsed_injection_options m_settings;
  // Launch calls (injection_options::launches); with sampling, the sampler and the ids it
  // switches, under the host's flush lock once the flush thread runs.
  launch_mode m_launch_mode = launch_mode::all;
  launch_sampling m_sampling;
  std::unique_ptr<launch_sampler> m_sampler;
  std::unique_ptr<cupti::launch_switch> m_launch_switch;
  bool m_windows_closed = false, m_switch_refused_said = false;
  flush_policy m_policy{0};
  bool m_force_said = false;
  std::size_t m_cap_bytes = default_cap_bytes;
  std::size_t m_buffer_bytes = default_buffer_bytes;
  bool m_cupti_on = false;
  cupti::enabled_activities m_enabled;
  std::shared_ptr<cupti::buffer_state> m_buffers;
  // api_records callback: the recorder and the callback ids it records,
  // written before the callbacks are enabled and only read after.
  std::unique_ptr<api_recorder> m_api;
  std::vector<std::uint8_t> m_api_runtime_ids, m_api_driver_ids; // 1: recorded; switched_mark: a sampled launch
  static constexpr std::uint8_t switched_mark = 2;
  std::uint64_t m_api_not_kept = 0;
  std::mutex m_switch_mutex; // the program's switch (set_capture)
  bool m_capturing = true;
  std::uint64_t m_program_switches = 0;
  struct switch_times { // what switching the launch ids took (the flush thread's own time)
    std::uint64_t count = 0, total_ns = 0, max_ns = 0;
    void add(std::uint64_t ns) { ++count, total_ns += ns, max_ns = std::max(max_ns, ns); }
  } m_switch_ns;
  std::optional<cupti::clock_pair> m_clock_start;
  std::uint64_t m_dropped = 0, m_refused_said = 0, m_nvtx_dropped_said = 0;
  std::set<std::uint32_t> m_gpus_said;
};

} // namespace

std::unique_ptr<program_session> make_cupti_program_session() { return std::make_unique<cupti_program>(); }

} // namespace speedlab::profiling
