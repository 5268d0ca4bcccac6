// The CUPTI collection core shared by `speedlab run` (the cupti profiler backend) and
// `speedlab profile` (the injection library, profilers/inject): buffers handed to CUPTI
// with a cap on memory, their records parsed into the trace model as they complete, the
// process-wide CUPTI setup, the subscription (which tells whether another CUPTI client,
// e.g. Nsight or torch.profiler, holds CUPTI), activity selection, clock reads and drop
// counting. Record parsing itself is cupti_records.hpp.
//
//   auto sub = cupti::subscribe(&callback, "speedlab");        // who else holds CUPTI?
//   const auto& setup = cupti::setup_process(true);            // steady-clock timestamps
//   auto buffers = std::make_shared<cupti::buffer_state>(8 << 20, 256 << 20);
//   cupti::set_active(buffers);                                // CUPTI's callbacks fill it
//   auto enabled = cupti::enable_activities({...}, notes);
//   ... cuptiActivityFlushAll(...); auto records = buffers->take();
//
// Internal to profilers/ (it includes cupti.h). No lock of ours is held across a CUPTI
// call; CUPTI callbacks never throw.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <cupti.h>

#include "profilers/cupti/cupti_records.hpp"

namespace speedlab::profiling::cupti {

std::string result_string(CUptiResult r);
// Sizes in messages: KiB below one MiB, so a tiny cap does not print as "0.0 MiB".
std::string readable_size(std::size_t bytes);
// Empty when the loaded libcupti has the record layouts speedlab was built with.
std::string version_problem();

// Activity buffers and the records parsed from them. One is active per process at a time
// (CUPTI's buffer callbacks are process-wide); a shared_ptr, so a late callback never sees
// a dead one. Buffers from an older state are freed, not parsed.
class buffer_state {
public:
  buffer_state(std::size_t buffer_bytes, std::size_t max_bytes);
  ~buffer_state();
  buffer_state(const buffer_state&) = delete;
  buffer_state& operator=(const buffer_state&) = delete;

  // Faults in a few zeroed spare buffers now, outside measured work.
  void prefill();
  // Everything parsed since the last take (CUPTI's clock or steady clock, as CUPTI stamped).
  parsed_records take();

  std::uint64_t generation() const { return m_generation; }
  std::size_t max_bytes() const { return m_max_bytes; }
  std::size_t peak_bytes() const { return m_peak.load(); }
  std::uint64_t refused() const { return m_refused.load(); }
  std::uint64_t parse_errors() const { return m_parse_errors.load(); }

  // From CUPTI's callbacks (through the trampolines in the .cpp).
  void request(std::uint8_t** buffer, std::size_t* size);
  bool complete(std::uint8_t* buffer, std::size_t valid); // true: kept for reuse

private:
  std::size_t total_bytes() const;
  std::uint8_t* allocate_zeroed() const;

  std::uint64_t m_generation;
  std::size_t m_buffer_bytes, m_max_bytes;
  std::atomic<std::size_t> m_in_flight{0}, m_kept{0}, m_peak{0};
  std::atomic<std::uint64_t> m_refused{0}, m_buffers{0}, m_cold_buffers{0}, m_parse_errors{0};
  std::mutex m_mutex; // guards m_records and m_spare; never held across a CUPTI call
  parsed_records m_records;
  std::vector<std::uint8_t*> m_spare; // zeroed buffers (base pointers, header included)
};

void set_active(std::shared_ptr<buffer_state> s);
std::shared_ptr<buffer_state> active_state();
// Clears the active state only if it is still `s`.
void clear_active(const std::shared_ptr<buffer_state>& s);

// Once per process. The first caller's clock mode holds for the whole process: CUPTI takes
// the timestamp callback only before the first cuptiActivityEnable.
struct process_setup {
  std::string error;               // non-empty: CUPTI cannot be used in this process
  bool timestamp_callback = false; // CUPTI stamps records with the steady clock itself
  std::vector<std::string> notes;
};
const process_setup& setup_process(bool steady_timestamps);

// cuptiSubscribe_v2. Another client holding CUPTI is the expected conflict (Nsight,
// torch.profiler, ncu): `other_client` with its name if CUPTI gives one.
struct subscription {
  CUpti_SubscriberHandle handle{};
  bool ok = false;
  bool other_client = false;
  std::string holder; // who holds CUPTI, when another client does
  std::string error;  // a sentence, when !ok
};
subscription subscribe(CUpti_CallbackFunc callback, void* user_data, const char* name);

// The activity kinds speedlab records. CONCURRENT_KERNEL is required (plain KERNEL would
// serialize launches); the rest degrade to a note each.
struct activity_selection {
  bool api_records = true;  // RUNTIME + SYNCHRONIZATION
  bool driver_api = false;  // DRIVER
  bool markers = false;     // MARKER (libcupti as NVTX tool)
  // Runtime and driver records only of the calls the analysis uses (model/cuda_api.hpp:
  // launches, synchronizations, copies, memsets, allocations, frees), enabled callback id by
  // callback id (cuptiActivityEnableRuntimeApi/DriverApi) instead of the whole kind: the
  // injection library's default. Where the loaded libcupti lacks those calls, the whole kind
  // is enabled and a note says so.
  bool analysis_calls_only = false;
  // The caller records runtime and driver calls itself through the callback API (the
  // injection library's api_records callback): no RUNTIME or DRIVER records
  // here, SYNCHRONIZATION still with api_records.
  bool api_by_callback = false;
  // With analysis_calls_only: the launch calls too (false: a cost probe, issue 29).
  bool launch_calls = true;
  bool sync_records = true; // SYNCHRONIZATION with api_records
};
struct enabled_activities {
  std::vector<CUpti_ActivityKind> kinds;
  // The callback ids enabled one by one (analysis_calls_only).
  std::vector<CUpti_CallbackId> runtime_ids, driver_ids;
  std::string error; // CONCURRENT_KERNEL refused: nothing enabled
  bool has(CUpti_ActivityKind k) const;
};
// The callback ids of a domain (runtime or driver API) whose calls model/cuda_api.hpp
// classifies as anything but `other`.
std::vector<CUpti_CallbackId> analysis_callback_ids(CUpti_CallbackDomain domain, bool launches = true);
enabled_activities enable_activities(const activity_selection& what, std::vector<std::string>& notes);
void disable_activities(enabled_activities& e);

// The launch calls among `ids` of a domain (model/cuda_api.hpp's api_kind::launch).
std::vector<CUpti_CallbackId> launch_ids(CUpti_CallbackDomain domain, const std::vector<CUpti_CallbackId>& ids);

// The launch calls, switched on and off together (launch calls recorded in windows:
// profilers/cupti/launch_sampler.hpp). Either CUPTI's activity records of the ids
// `enable_activities` enabled one by one, or a subscriber's callbacks (the callback path).
// Not usable when the ids were not enabled one by one (the whole kinds are on) or libcupti
// lacks the per-id calls: then every launch call is recorded.
class launch_switch {
public:
  explicit launch_switch(const enabled_activities& e);
  // The callback path: the subscriber's callbacks for these ids (its launch ids are kept).
  launch_switch(CUpti_SubscriberHandle subscriber, const std::vector<CUpti_CallbackId>& runtime_ids,
                const std::vector<CUpti_CallbackId>& driver_ids);
  bool usable() const { return !m_runtime_ids.empty() || !m_driver_ids.empty(); }
  // False if CUPTI refused an id (the others are switched all the same). One caller at a
  // time (CUPTI asks callers of cuptiEnableCallback to serialize).
  bool set(bool on) const;

private:
  using enable_fn = CUptiResult (*)(CUpti_CallbackId, uint8_t);
  enable_fn m_runtime = nullptr, m_driver = nullptr;
  CUpti_SubscriberHandle m_subscriber = nullptr; // set: the callback path
  std::vector<CUpti_CallbackId> m_runtime_ids, m_driver_ids;
};

// Records CUPTI dropped since the last call (the counter is reset by reading it).
std::uint64_t take_dropped_records();

// Flush returns only completed records, so finish the calling thread's device work first.
// Through the driver, and only if a context is current: a CPU-only point must not get one.
void synchronize_current_context();
// Every active primary context (the runtime API, PyTorch, CuPy and Numba use these),
// from a thread that need not have one current (the injection library's flush thread after
// a signal). False when the driver is not loaded or a call failed.
bool synchronize_primary_contexts();

// One CUPTI clock reading and the steady time at its middle, from the tightest of a few
// bracketing reads; nothing if CUPTI cannot read its clock.
struct clock_pair {
  std::uint64_t cupti = 0, steady = 0;
};
std::optional<clock_pair> read_clock_pair();

} // namespace speedlab::profiling::cupti
