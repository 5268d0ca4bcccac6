// CUPTI allows one subscription per process. In a profiled program (the injection library)
// the backends share it through this hub: the cupti session subscribes, the others (counters,
// source) register as clients and enable the callbacks they need; every callback goes to
// each client in registration order.
//
//   auto& hub = cupti::callback_hub::process();
//   hub.reserve_launches();                     // configure: this backend needs every launch callback
//   if (hub.subscribed()) { hub.add(this); hub.enable(CUPTI_CB_DOMAIN_RESOURCE, id); }
//
// Clients are added before they enable anything and never removed (the process's sessions
// live to its end); callbacks never throw.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <cupti.h>

#include "profilers/cupti/cupti_collector.hpp"

namespace speedlab::profiling::cupti {

class callback_client {
public:
  virtual ~callback_client() = default;
  virtual void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept = 0;
};

class callback_hub {
public:
  static callback_hub& process();

  // cupti::subscribe with the hub as callback; the subscription's error is kept (error()).
  subscription subscribe(const char* name);
  void unsubscribe();
  bool subscribed() const { return m_subscribed; }
  CUpti_SubscriberHandle handle() const { return m_handle; }
  // Why the subscription failed (another client holds CUPTI...), empty otherwise.
  const std::string& subscribe_error() const { return m_error; }

  bool add(callback_client* client); // false when full
  // Counted per callback id: a client switching its callbacks off (python's capture, switched
  // by the program) leaves on those another client enabled.
  CUptiResult enable(int domain, unsigned id, bool on = true);

  // A backend whose launch callbacks must stay on (counters, source) reserves them while
  // configuring, so the cupti session does not switch them in windows; at start, the first
  // to take them is the one they go to (CUPTI replays and PC sampling were not checked together).
  void reserve_launches() { m_launches_reserved = true; }
  bool launches_reserved() const { return m_launches_reserved; }
  bool take_launches() { return !std::exchange(m_launches_taken, true); }

  // Launch calls in windows (the cupti session's light capture): the launch ids' callbacks
  // are switched on the one subscription, for every client (python's stacks follow the
  // windows), so no client may switch them itself.
  void windows_launches() { m_launches_windowed.store(true, std::memory_order_release); }
  bool launches_windowed() const { return m_launches_windowed.load(std::memory_order_acquire); }
  // Every switch of callbacks during the run (a window, or a session switched by the program)
  // is counted here: a client's call in flight at one lost its entry or its exit.
  void callbacks_switched() { m_switches.fetch_add(1, std::memory_order_relaxed); }
  std::uint32_t switches() const { return m_switches.load(std::memory_order_relaxed); }

private:
  static void CUPTIAPI trampoline(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                  const void* data) noexcept;

  static constexpr std::size_t max_clients = 8;
  std::array<callback_client*, max_clients> m_clients{};
  std::atomic<std::size_t> m_count{0};
  CUpti_SubscriberHandle m_handle{};
  std::mutex m_enable_mutex;                              // CUPTI asks the callers of cuptiEnableCallback to serialize
  std::map<std::pair<int, unsigned>, unsigned> m_enabled; // callback id -> clients that enabled it
  bool m_subscribed = false, m_launches_reserved = false, m_launches_taken = false;
  std::atomic<bool> m_launches_windowed{false};
  std::atomic<std::uint32_t> m_switches{0};
  std::string m_error;
};

} // namespace speedlab::profiling::cupti
