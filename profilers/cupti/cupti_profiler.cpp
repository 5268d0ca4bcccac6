// "cupti": GPU activity through the CUPTI Activity API (kernels, copies, memsets, runtime
// and optionally driver API calls, synchronizations, CUPTI overhead) plus NVTX ranges, all
// on the host steady clock. Design:
// - Buffers, record parsing, process setup and the subscription are the collection core
//   (cupti_collector.hpp), shared with the injection library of `speedlab profile`; this
//   file is the session around it: one buffer state per measured point.
// - No lock of ours is ever held across a CUPTI call; callbacks never throw.
// - Setup failures throw with cuptiGetResultString's words (the runner notes them and goes
//   on); failures after setup become messages and the session records nothing.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <cupti.h>

#include <fmt/format.h>

#include "profilers/cupti/cupti_collector.hpp"
#include "profilers/cupti/cupti_options.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::profiling {
namespace {

using cupti::read_clock_pair;
using cupti::readable_size;
using cupti::result_string;
using cupti::synchronize_current_context;
using cupti::version_problem;

// ---- kernel launches through the callback API (cupti_options::launch_mode::callback) --

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

bool nvtx_goes_to_cupti() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  return path && std::strstr(path, "cupti") != nullptr;
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

using cupti::clock_pair;

class cupti_session final : public session {
public:
  explicit cupti_session(const profiler_options& options) : m_options(options.get<cupti_options>()) {
    if (m_options.buffer_bytes < 4096) m_options.buffer_bytes = 4096;
    if (std::string v = version_problem(); !v.empty()) throw std::runtime_error(v);
    // Claim CUPTI before touching any process-wide setting, so that under Nsight (which
    // holds the subscription) nothing of its configuration is changed.
    cupti::subscription sub = cupti::subscribe(&subscriber_callback, nullptr, "speedlab");
    if (sub.other_client) throw std::runtime_error(sub.error + "; its NVTX phase ranges still reach that tool");
    if (!sub.ok) throw std::runtime_error(sub.error);
    m_subscriber = sub.handle;
    m_subscribed = true;
    const cupti::process_setup& setup = cupti::setup_process(m_options.clock == cupti_options::clock_mode::callback);
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
      for (auto kind : m_enabled.kinds) check(cuptiActivityDisable(kind), "cuptiActivityDisable");
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      if (m_clock_start) m_clock_stop = read_clock_pair();
      stop_launch_callbacks();
      m_cupti_dropped += cupti::take_dropped_records();
      m_enabled.kinds.clear();
      if (m_nvtx) {
        m_ranges = m_nvtx->take();
        m_nvtx.reset();
      }
    } catch (...) {
      m_messages.push_back("cupti: stop failed unexpectedly; the trace may be incomplete");
    }
    cupti::clear_active(m_state);
  }

  void collect(profile_data& out) override {
    auto& d = out.device;
    d.backend = "cupti";
    d.process = static_cast<std::uint32_t>(::getpid());
    if (m_failed) d.note = m_failure;
    if (m_state) {
      cupti::parsed_records records = m_state->take();
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
      d.buffer_bytes = std::max<std::uint64_t>(d.buffer_bytes, m_state->peak_bytes());
      if (m_state->refused())
        m_messages.push_back(fmt::format("cupti: buffer cap of {} reached: CUPTI dropped {} record(s) "
                                          "({} buffer request(s) refused)",
                                          readable_size(m_state->max_bytes()), m_cupti_dropped, m_state->refused()));
      else if (m_cupti_dropped)
        m_messages.push_back(fmt::format("cupti: CUPTI dropped {} record(s)", m_cupti_dropped));
      if (incomplete)
        m_messages.push_back(fmt::format("cupti: {} record(s) without timestamps were dropped", incomplete));
      if (unpaired) m_messages.push_back(fmt::format("cupti: {} NVTX marker(s) without their other half", unpaired));
      if (m_state->parse_errors())
        m_messages.push_back(fmt::format("cupti: {} buffer(s) ended with a malformed record", m_state->parse_errors()));
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
    const cupti::process_setup& setup = cupti::setup_process(m_options.clock == cupti_options::clock_mode::callback);
    auto state = std::make_shared<cupti::buffer_state>(m_options.buffer_bytes, m_options.max_buffer_bytes);
    m_clock_start.reset();
    m_clock_stop.reset();
    if (!setup.timestamp_callback) m_clock_start = read_clock_pair();
    state->prefill();
    m_state = state;
    cupti::set_active(state);
    cupti::take_dropped_records(); // reset: earlier drops are not ours

    // Ranges come from speedlab's own NVTX recorder; CUPTI's MARKER only when the user made
    // libcupti the NVTX tool through NVTX_INJECTION64_PATH.
    std::vector<std::string> notes;
    m_enabled = cupti::enable_activities({m_options.api_records, m_options.driver_api, nvtx_goes_to_cupti()}, notes);
    for (auto& n : notes) note_once(std::move(n));
    if (!m_enabled.error.empty()) {
      cupti::clear_active(state);
      fail(m_enabled.error);
      return;
    }
    m_marker_enabled = m_enabled.has(CUPTI_ACTIVITY_KIND_MARKER);
    if (m_options.api_records && m_options.launches != cupti_options::launch_mode::activity) start_launch_callbacks();
    m_nvtx.emplace();
    m_running = true;
  }

  // Launch calls leave the RUNTIME activity (enabled just before, which reset these
  // per-call switches) and, in callback mode, go through subscriber_callback.
  void start_launch_callbacks() {
    for (CUpti_CallbackId id : cupti::launch_callback_ids) cuptiActivityEnableRuntimeApi(id, 0);
    if (m_options.launches != cupti_options::launch_mode::callback) return;
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

  bool check(CUptiResult r, const char* what) {
    if (r == CUPTI_SUCCESS) return true;
    m_messages.push_back(fmt::format("cupti: {} failed: {}", what, result_string(r)));
    return false;
  }

  void fail(std::string why) {
    m_failed = true;
    m_failure = why;
    stop_launch_callbacks();
    cupti::disable_activities(m_enabled);
    note_once(std::move(why));
  }

  void note_once(std::string msg) {
    if (first_time(msg)) m_messages.push_back(std::move(msg));
  }

  cupti_options m_options;
  CUpti_SubscriberHandle m_subscriber{};
  bool m_subscribed = false, m_running = false, m_failed = false, m_marker_enabled = false;
  std::string m_failure;
  cupti::enabled_activities m_enabled;
  std::shared_ptr<cupti::buffer_state> m_state;
  std::optional<clock_pair> m_clock_start, m_clock_stop; // offset clock mode only
  std::unique_ptr<launch_sink> m_launches;                // launch_mode::callback only
  std::optional<nvtx_capture> m_nvtx;
  std::vector<trace::range_record> m_ranges;
  std::uint64_t m_cupti_dropped = 0;
  std::vector<std::string> m_messages;
};

class cupti_profiler final : public profiler {
public:
  cupti_profiler()
      : profiler("cupti",
                 "CUDA kernels, copies, memsets, API calls, synchronizations and NVTX ranges (CUPTI Activity API)") {}

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
