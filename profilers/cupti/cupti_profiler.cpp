// "cupti": GPU activity through the CUPTI Activity API (kernels, copies, memsets, runtime
// and optionally driver API calls, synchronizations, CUPTI overhead) plus NVTX ranges, all
// on the host steady clock. Design:
// - CUPTI's buffer callbacks are process-wide, so static CUPTIAPI trampolines forward to
//   the one active session state (a shared_ptr, so a late callback never sees a dead one).
// - Buffers are ours, with a cap on memory; a refused request makes CUPTI drop records,
//   which CUPTI counts and the session reports.
// - No lock of ours is ever held across a CUPTI call; callbacks never throw.
// - Setup failures throw with cuptiGetResultString's words (the runner notes them and goes
//   on); failures after setup become messages and the session records nothing.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <cupti.h>
#include <fmt/format.h>

#include "profilers/cupti/cupti_records.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::profiling {
namespace {

std::string result_string(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return fmt::format("CUPTI error {}", static_cast<int>(r));
  return s;
}

// Sizes in messages: KiB below one MiB, so a tiny cap does not print as "0.0 MiB".
std::string readable_size(std::size_t bytes) {
  if (bytes < (1u << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

// ---- buffers and the active session -------------------------------------------------

constexpr std::size_t buffer_header = 64; // keeps records 8-byte aligned (CUPTI needs 8)

struct buffer_prefix {
  std::uint64_t generation;
  std::size_t size;
};

// Buffers are handed to CUPTI already zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER),
// so CUPTI does not clear them on the measured thread; two are prefaulted at start() and
// completed buffers are cleared and reused, so a request during a repetition costs little.
constexpr std::size_t spare_buffers = 2; // prefaulted at start(); up to 2 * this kept for reuse

struct session_state {
  std::uint64_t generation = 0;
  std::size_t buffer_bytes = 0, max_bytes = 0;
  std::atomic<std::size_t> in_flight{0}, kept{0}, peak{0};
  std::atomic<std::uint64_t> refused{0}, buffers{0}, cold_buffers{0}, parse_errors{0};
  std::mutex mutex; // guards `records` and `spare`; never held across a CUPTI call
  cupti::parsed_records records;
  std::vector<std::uint8_t*> spare; // zeroed buffers (base pointers, header included)

  ~session_state() {
    for (auto* p : spare) std::free(p);
  }

  std::size_t total_bytes() const { return (buffer_header + buffer_bytes + 63) / 64 * 64; }

  // calloc: large blocks come zeroed from mmap, so a buffer needed mid-run costs no memset
  // on the measured thread (its pages fault in as CUPTI writes). 16-byte aligned, and the
  // 64-byte header keeps that; CUPTI needs 8.
  std::uint8_t* allocate_zeroed() { return static_cast<std::uint8_t*>(std::calloc(1, total_bytes())); }

  // The spares are faulted in now, outside the measured repetitions.
  void prefill() {
    for (std::size_t i = 0; i < spare_buffers; ++i)
      if (auto* b = allocate_zeroed()) {
        std::memset(b, 0, total_bytes());
        spare.push_back(b);
      }
  }

  void request(std::uint8_t** buffer, std::size_t* size) {
    const std::size_t used = in_flight.load() + kept.load();
    if (used + buffer_bytes > max_bytes) {
      ++refused; // CUPTI drops what it cannot store and counts it
      return;
    }
    std::uint8_t* base = nullptr;
    {
      std::lock_guard lock(mutex);
      if (!spare.empty()) {
        base = spare.back();
        spare.pop_back();
      }
    }
    if (!base) {
      ++cold_buffers;
      base = allocate_zeroed();
    }
    if (!base) {
      ++refused;
      return;
    }
    auto* prefix = reinterpret_cast<buffer_prefix*>(base);
    prefix->generation = generation;
    prefix->size = buffer_bytes;
    const std::size_t now = in_flight.fetch_add(buffer_bytes) + buffer_bytes + kept.load();
    for (std::size_t p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
    }
    *buffer = base + buffer_header;
    *size = buffer_bytes;
  }

  // Returns true when the buffer was kept for reuse (the caller must not free it).
  bool complete(std::uint8_t* buffer, std::size_t valid) {
    cupti::parsed_records batch;
    CUpti_Activity* record = nullptr;
    for (;;) {
      const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
      if (r == CUPTI_SUCCESS) cupti::parse_record(*record, 0, batch); // clock mapped in collect()
      else {
        if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) ++parse_errors;
        break;
      }
    }
    in_flight.fetch_sub(buffer_bytes);
    kept.fetch_add(valid);
    ++buffers;
    std::memset(buffer, 0, std::min(valid, buffer_bytes));
    std::lock_guard lock(mutex);
    records.append(std::move(batch));
    if (spare.size() >= 2 * spare_buffers) return false;
    spare.push_back(buffer - buffer_header);
    return true;
  }
};

std::mutex g_active_mutex; // held only to copy or swap the pointer
std::shared_ptr<session_state> g_active;
std::atomic<std::uint64_t> g_generation{0};
std::atomic<std::uint64_t> g_orphan_buffers{0};

std::shared_ptr<session_state> active_state() {
  std::lock_guard lock(g_active_mutex);
  return g_active;
}

void set_active(std::shared_ptr<session_state> s) {
  std::lock_guard lock(g_active_mutex);
  g_active = std::move(s);
}

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  try {
    if (auto s = active_state()) s->request(buffer, size);
  } catch (...) {
    *buffer = nullptr;
    *size = 0;
  }
}

void CUPTIAPI on_buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) noexcept {
  if (!buffer) return;
  auto* prefix = reinterpret_cast<buffer_prefix*>(buffer - buffer_header);
  bool reused = false;
  try {
    auto s = active_state();
    if (s && s->generation == prefix->generation) reused = s->complete(buffer, valid);
    else ++g_orphan_buffers; // from a session that already ended
  } catch (...) {
  }
  if (!reused) std::free(prefix);
}

std::uint64_t CUPTIAPI steady_timestamp() noexcept { return steady_now_ns(); }

// ---- kernel launches through the callback API (profiler_options::launch_mode::callback) --

// Launch calls seen by the callback, already on the steady clock. Written on the launching
// threads (an uncontended lock per launch), read after stop().
struct launch_sink {
  std::mutex mutex;
  std::vector<trace::api_record> calls;
  std::size_t max_calls = 0;
  std::uint64_t dropped = 0;
};
std::atomic<launch_sink*> g_launch_sink{nullptr};
thread_local std::uint64_t t_launch_enter = 0;

void CUPTIAPI subscriber_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || !data) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    t_launch_enter = steady_now_ns();
    return;
  }
  const std::uint64_t exit = steady_now_ns();
  launch_sink* sink = g_launch_sink.load(std::memory_order_acquire);
  if (!sink || !t_launch_enter) return;
  static thread_local const auto thread = static_cast<std::uint32_t>(::gettid());
  static const auto process = static_cast<std::uint32_t>(::getpid());
  trace::api_record r;
  r.start = t_launch_enter;
  r.end = exit;
  r.process = process;
  r.thread = thread;
  r.correlation = cb->correlationId;
  r.callback_id = id;
  if (cb->functionReturnValue) r.return_value = *static_cast<const std::int32_t*>(cb->functionReturnValue);
  t_launch_enter = 0;
  try {
    std::lock_guard lock(sink->mutex);
    if (sink->calls.size() < sink->max_calls) sink->calls.push_back(std::move(r));
    else ++sink->dropped;
  } catch (...) {
  }
}

// ---- once per process ---------------------------------------------------------------

struct process_setup {
  std::string error;               // non-empty: CUPTI cannot be used in this process
  bool timestamp_callback = false; // CUPTI reports the steady clock itself
  std::vector<std::string> notes;
};

// The first session's clock mode holds for the whole process: CUPTI takes the timestamp
// callback only before the first cuptiActivityEnable and cannot drop it afterwards.
const process_setup& setup_process(profiler_options::clock_mode clock) {
  static const process_setup setup = [clock] {
    process_setup s;
    if (clock == profiler_options::clock_mode::callback) {
      if (CUptiResult r = cuptiActivityRegisterTimestampCallback(&steady_timestamp); r == CUPTI_SUCCESS)
        s.timestamp_callback = true;
      else
        s.notes.push_back("cupti: timestamp callback not accepted (" + result_string(r) +
                          "); CUPTI times are mapped from offsets read at start and stop instead");
    }
    // gettid() thread ids, the same ids the NVTX recorder stores.
    if (CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); r != CUPTI_SUCCESS)
      s.notes.push_back("cupti: system thread ids unavailable (" + result_string(r) +
                        "); API calls and NVTX ranges may not match by thread");
    std::uint8_t zeroed = 1;
    std::size_t zeroed_size = sizeof zeroed;
    if (CUptiResult r = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size, &zeroed);
        r != CUPTI_SUCCESS)
      s.notes.push_back("cupti: zeroed-buffer attribute not accepted (" + result_string(r) +
                        "); CUPTI clears each buffer itself");
    if (CUptiResult r = cuptiActivityRegisterCallbacks(&on_buffer_requested, &on_buffer_completed); r != CUPTI_SUCCESS)
      s.error = "cuptiActivityRegisterCallbacks failed: " + result_string(r);
    return s;
  }();
  return setup;
}

std::string version_problem() {
  std::uint32_t version = 0;
  if (CUptiResult r = cuptiGetVersion(&version); r != CUPTI_SUCCESS)
    return "libcupti is not usable: cuptiGetVersion failed: " + result_string(r);
  if (version / 10000 != CUPTI_API_VERSION / 10000)
    return fmt::format("libcupti API version {} does not match the {} speedlab was built with (record layouts differ)",
                       version, CUPTI_API_VERSION);
  return {};
}

bool nvtx_goes_to_cupti() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  return path && std::strstr(path, "cupti") != nullptr;
}

// Flush returns only completed records, so finish the calling thread's device work first.
// Through the driver, and only if a context is current: a CPU-only point must not get one.
void synchronize_current_context() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return;
  using get_fn = int (*)(void**);
  using sync_fn = int (*)();
  auto get = reinterpret_cast<get_fn>(dlsym(lib, "cuCtxGetCurrent"));
  auto sync = reinterpret_cast<sync_fn>(dlsym(lib, "cuCtxSynchronize"));
  void* ctx = nullptr;
  if (get && sync && get(&ctx) == 0 && ctx) sync();
  dlclose(lib);
}

// Messages that describe the process, not the point, are said once per process.
bool first_time(const std::string& msg) {
  static std::mutex m;
  static std::vector<std::string> said;
  std::lock_guard lock(m);
  for (const auto& s : said)
    if (s == msg) return false;
  said.push_back(msg);
  return true;
}

// ---- the session --------------------------------------------------------------------

struct clock_pair {
  std::uint64_t cupti = 0, steady = 0;
};

class cupti_session final : public session {
public:
  explicit cupti_session(const profiler_options& options) : m_options(options) {
    if (m_options.buffer_bytes < 4096) m_options.buffer_bytes = 4096;
    if (std::string v = version_problem(); !v.empty()) throw std::runtime_error(v);
    // Claim CUPTI before touching any process-wide setting, so that under Nsight (which
    // holds the subscription) nothing of its configuration is changed.
    CUpti_SubscriberParams params{};
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "speedlab";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = sizeof(holder) - 1;
    const CUptiResult r = cuptiSubscribe_v2(&m_subscriber, &subscriber_callback, nullptr, &params);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      throw std::runtime_error(fmt::format(
          "another CUPTI client is attached ({}), e.g. Nsight Systems/Compute: speedlab records no GPU activity; "
          "its NVTX phase ranges still reach that tool",
          holder[0] ? holder : "name not given"));
    if (r != CUPTI_SUCCESS)
      throw std::runtime_error("GPU activity tracing unavailable: cuptiSubscribe failed: " + result_string(r) +
                               " (no usable GPU or driver?)");
    m_subscribed = true;
    const process_setup& setup = setup_process(m_options.clock);
    if (!setup.error.empty()) {
      cuptiUnsubscribe(m_subscriber);
      m_subscribed = false;
      throw std::runtime_error(setup.error);
    }
    for (const auto& n : setup.notes) note_once(n);
  }

  ~cupti_session() override {
    try {
      stop();
    } catch (...) {
    }
    if (m_subscribed) cuptiUnsubscribe(m_subscriber);
  }

  void start() override {
    if (m_running || m_failed) return;
    try {
      start_impl();
    } catch (const std::exception& e) {
      fail(std::string("cupti: start failed: ") + e.what());
    }
  }

  void stop() override {
    if (!m_running) return;
    m_running = false;
    try {
      synchronize_current_context();
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      for (auto kind : m_enabled) check(cuptiActivityDisable(kind), "cuptiActivityDisable");
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      if (m_clock_start) m_clock_stop = read_clock_pair();
      stop_launch_callbacks();
      std::size_t dropped = 0;
      if (check(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), "cuptiActivityGetNumDroppedRecords"))
        m_cupti_dropped += dropped;
      m_enabled.clear();
      if (m_nvtx) {
        m_ranges = m_nvtx->take();
        m_nvtx.reset();
      }
    } catch (...) {
      m_messages.push_back("cupti: stop failed unexpectedly; the trace may be incomplete");
    }
    std::lock_guard lock(g_active_mutex);
    if (g_active == m_state) g_active.reset();
  }

  void collect(profile_data& out) override {
    auto& d = out.device;
    d.backend = "cupti";
    d.process = static_cast<std::uint32_t>(::getpid());
    if (m_failed) d.note = m_failure;
    if (m_state) {
      cupti::parsed_records records;
      {
        std::lock_guard lock(m_state->mutex);
        records = std::move(m_state->records);
        m_state->records = {};
      }
      const std::uint64_t incomplete = records.incomplete;
      if (m_clock_start) {
        const clock_pair stop = m_clock_stop.value_or(*m_clock_start);
        cupti::map_clock(records, cupti::clock_map::from_pairs(m_clock_start->cupti, m_clock_start->steady,
                                                               stop.cupti, stop.steady));
      }
      // Launch calls from the callback are on the steady clock already; finalize names them.
      const std::uint64_t launch_dropped = m_launches ? take_launch_calls(records) : 0;
      std::uint64_t unpaired = 0;
      cupti::finalize(std::move(records), &cupti::cupti_api_name, d, &unpaired);
      d.dropped_records += launch_dropped;
      d.ranges.insert(d.ranges.end(), m_ranges.begin(), m_ranges.end());
      std::stable_sort(d.ranges.begin(), d.ranges.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
      d.dropped_records += m_cupti_dropped + incomplete;
      d.buffer_bytes = std::max<std::uint64_t>(d.buffer_bytes, m_state->peak.load());
      if (m_state->refused)
        m_messages.push_back(fmt::format("cupti: buffer cap of {} reached: CUPTI dropped {} record(s) "
                                          "({} buffer request(s) refused)",
                                          readable_size(m_state->max_bytes), m_cupti_dropped, m_state->refused.load()));
      else if (m_cupti_dropped)
        m_messages.push_back(fmt::format("cupti: CUPTI dropped {} record(s)", m_cupti_dropped));
      if (incomplete)
        m_messages.push_back(fmt::format("cupti: {} record(s) without timestamps were dropped", incomplete));
      if (unpaired) m_messages.push_back(fmt::format("cupti: {} NVTX marker(s) without their other half", unpaired));
      if (m_state->parse_errors)
        m_messages.push_back(fmt::format("cupti: {} buffer(s) ended with a malformed record", m_state->parse_errors.load()));
      if (!d.kernels.empty() && d.api_calls.empty() && first_time("cupti: no API records"))
        m_messages.push_back("cupti: kernels but no API records: the split cannot tell sync from host time");
      if (const char* path = std::getenv("NVTX_INJECTION64_PATH"); path && !m_marker_enabled) {
        const std::string msg = fmt::format("cupti: NVTX ranges go to the tool in NVTX_INJECTION64_PATH ({})", path);
        if (first_time(msg)) m_messages.push_back(msg);
      }
    }
    for (auto& m : m_messages) out.messages.push_back(std::move(m));
    m_messages.clear();
  }

private:
  void start_impl() {
    const process_setup& setup = setup_process(m_options.clock);
    auto state = std::make_shared<session_state>();
    state->generation = ++g_generation;
    state->buffer_bytes = (m_options.buffer_bytes + 7) / 8 * 8;
    state->max_bytes = std::max(m_options.max_buffer_bytes, m_options.buffer_bytes);
    m_clock_start.reset();
    m_clock_stop.reset();
    if (!setup.timestamp_callback) m_clock_start = read_clock_pair();
    state->prefill();
    m_state = state;
    set_active(state);
    std::size_t stale = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &stale); // reset: earlier drops are not ours

    // CONCURRENT_KERNEL is required (plain KERNEL would serialize launches); the rest degrade.
    if (CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS) {
      set_active(nullptr);
      fail("cupti: GPU activity tracing unavailable: cuptiActivityEnable(CONCURRENT_KERNEL) failed: " +
           result_string(r) + " (no usable GPU or driver?)");
      return;
    }
    m_enabled.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    std::vector<std::pair<CUpti_ActivityKind, const char*>> optional = {{CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
                                                                        {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
                                                                        {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
                                                                        {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"}};
    if (m_options.api_records) {
      optional.emplace_back(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME");
      optional.emplace_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION");
    }
    if (m_options.driver_api) optional.emplace_back(CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER");
    // Ranges come from speedlab's own NVTX recorder; CUPTI's MARKER only when the user made
    // libcupti the NVTX tool through NVTX_INJECTION64_PATH.
    if (nvtx_goes_to_cupti()) optional.emplace_back(CUPTI_ACTIVITY_KIND_MARKER, "MARKER");
    for (auto [kind, name] : optional) {
      if (CUptiResult r = cuptiActivityEnable(kind); r == CUPTI_SUCCESS) {
        m_enabled.push_back(kind);
        if (kind == CUPTI_ACTIVITY_KIND_MARKER) m_marker_enabled = true;
      } else {
        note_once(fmt::format("cupti: {} records unavailable: {}", name, result_string(r)));
      }
    }
    if (m_options.api_records && m_options.launches != profiler_options::launch_mode::activity) start_launch_callbacks();
    m_nvtx.emplace();
    m_running = true;
  }

  // Launch calls leave the RUNTIME activity (enabled just before, which reset these
  // per-call switches) and, in callback mode, go through subscriber_callback.
  void start_launch_callbacks() {
    for (CUpti_CallbackId id : cupti::launch_callback_ids) cuptiActivityEnableRuntimeApi(id, 0);
    if (m_options.launches != profiler_options::launch_mode::callback) return;
    m_launches = std::make_unique<launch_sink>();
    m_launches->max_calls = m_options.max_buffer_bytes / sizeof(trace::api_record);
    m_launches->calls.reserve(std::min<std::size_t>(m_launches->max_calls, 4096));
    g_launch_sink.store(m_launches.get(), std::memory_order_release);
    for (CUpti_CallbackId id : cupti::launch_callback_ids)
      if (CUptiResult r = cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id); r != CUPTI_SUCCESS) {
        note_once("cupti: launch callbacks unavailable (" + result_string(r) + "); launch calls count as host time");
        break;
      }
  }

  void stop_launch_callbacks() {
    if (!m_launches) return;
    for (CUpti_CallbackId id : cupti::launch_callback_ids) cuptiEnableCallback(0, m_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
    g_launch_sink.store(nullptr, std::memory_order_release);
  }

  // Moves the callback's launch calls into `records`; returns how many the cap dropped.
  std::uint64_t take_launch_calls(cupti::parsed_records& records) {
    std::vector<trace::api_record> calls;
    std::uint64_t dropped = 0;
    {
      std::lock_guard lock(m_launches->mutex);
      calls = std::move(m_launches->calls);
      dropped = m_launches->dropped;
      m_launches->calls = {};
      m_launches->dropped = 0;
    }
    auto& api = records.trace.api_calls;
    api.insert(api.end(), std::make_move_iterator(calls.begin()), std::make_move_iterator(calls.end()));
    if (dropped) m_messages.push_back(fmt::format("cupti: buffer cap reached: {} launch call(s) not recorded", dropped));
    return dropped;
  }

  // One CUPTI clock reading and the steady time at its middle, from the tightest of a few
  // bracketing reads; nothing if CUPTI cannot read its clock.
  static std::optional<clock_pair> read_clock_pair() {
    std::optional<clock_pair> best;
    std::uint64_t best_width = ~0ull;
    for (int i = 0; i < 7; ++i) {
      std::uint64_t c = 0;
      const std::uint64_t a = steady_now_ns();
      if (cuptiGetTimestamp(&c) != CUPTI_SUCCESS) return best;
      const std::uint64_t b = steady_now_ns();
      if (b - a < best_width) {
        best_width = b - a;
        best = clock_pair{c, a + (b - a) / 2};
      }
    }
    return best;
  }

  bool check(CUptiResult r, const char* what) {
    if (r == CUPTI_SUCCESS) return true;
    m_messages.push_back(fmt::format("cupti: {} failed: {}", what, result_string(r)));
    return false;
  }

  void fail(std::string why) {
    m_failed = true;
    m_failure = why;
    stop_launch_callbacks();
    for (auto kind : m_enabled) cuptiActivityDisable(kind);
    m_enabled.clear();
    note_once(std::move(why));
  }

  void note_once(std::string msg) {
    if (first_time(msg)) m_messages.push_back(std::move(msg));
  }

  profiler_options m_options;
  CUpti_SubscriberHandle m_subscriber{};
  bool m_subscribed = false, m_running = false, m_failed = false, m_marker_enabled = false;
  std::string m_failure;
  std::vector<CUpti_ActivityKind> m_enabled;
  std::shared_ptr<session_state> m_state;
  std::optional<clock_pair> m_clock_start, m_clock_stop; // offset clock mode only
  std::unique_ptr<launch_sink> m_launches;                // launch_mode::callback only
  std::optional<nvtx_capture> m_nvtx;
  std::vector<trace::range_record> m_ranges;
  std::uint64_t m_cupti_dropped = 0;
  std::vector<std::string> m_messages;
};

class cupti_profiler final : public profiler {
public:
  std::string name() const override { return "cupti"; }
  std::string description() const override {
    return "CUDA kernels, copies, memsets, API calls, synchronizations and NVTX ranges (CUPTI Activity API)";
  }

  // Cheap and fork-safe: never initializes CUDA or CUPTI, so the runner may ask in the
  // parent before forking the children that measure.
  std::string unavailable_reason() const override {
    static const std::string reason = [] {
      if (std::string v = version_problem(); !v.empty()) return v;
      return no_driver_reason();
    }();
    return reason;
  }

  std::unique_ptr<session> create_session(const profiler_options& options) override {
    return std::make_unique<cupti_session>(options);
  }
};

} // namespace



std::unique_ptr<profiler> make_cupti_profiler() { return std::make_unique<cupti_profiler>(); }

} // namespace speedlab::profiling
