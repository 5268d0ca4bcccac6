#include "profilers/cupti/callback_hub.hpp"

namespace speedlab::profiling::cupti {

callback_hub& callback_hub::process() {
  static auto* hub = new callback_hub; // never destroyed: CUPTI may call back during exit
  return *hub;
}

subscription callback_hub::subscribe(const char* name) {
  subscription sub = cupti::subscribe(&trampoline, this, name);
  m_subscribed = sub.ok;
  m_handle = sub.handle;
  m_error = sub.ok ? std::string() : sub.error;
  return sub;
}

void callback_hub::unsubscribe() {
  if (!m_subscribed) return;
  cuptiUnsubscribe(m_handle); // leave CUPTI free for another client
  m_subscribed = false;
}

bool callback_hub::add(callback_client* client) {
  const std::size_t n = m_count.load(std::memory_order_relaxed);
  if (n == max_clients) return false;
  m_clients[n] = client;
  m_count.store(n + 1, std::memory_order_release); // a callback sees the client whole
  return true;
}

CUptiResult callback_hub::enable(int domain, unsigned id, bool on) {
  std::lock_guard lock(m_enable_mutex);
  unsigned& clients = m_enabled[{domain, id}];
  if (!on && clients == 0) return CUPTI_SUCCESS;
  if (on ? clients == 0 : clients == 1) {
    const CUptiResult r = cuptiEnableCallback(on ? 1 : 0, m_handle, static_cast<CUpti_CallbackDomain>(domain),
                                              static_cast<CUpti_CallbackId>(id));
    if (r != CUPTI_SUCCESS) return r;
  }
  clients += on ? 1 : -1;
  return CUPTI_SUCCESS;
}

void CUPTIAPI callback_hub::trampoline(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                       const void* data) noexcept {
  if (!self || !data) return;
  const auto* hub = static_cast<const callback_hub*>(self);
  const std::size_t n = hub->m_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i) hub->m_clients[i]->on_callback(domain, id, data);
}

} // namespace speedlab::profiling::cupti
