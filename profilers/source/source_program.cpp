// "source" in a profiled program (`speedlab profile --source`): the program session of the
// source backend (program_session.hpp). The source collector is fed the callbacks of the
// process's one CUPTI subscription (cupti::callback_hub), its windows counted in launches:
// PC sampling over the process's first N kernel launches, SASS metrics (patched kernels)
// over the next N, then off; the folded lines are written as a source chunk at exit or when
// the context is destroyed. Nothing here throws out of a CUPTI callback.
#include <memory>
#include <mutex>
#include <set>

#include <cupti.h>

#include <fmt/format.h>

#include "model/source_view.hpp"
#include "profilers/counters/counter_collector.hpp"
#include "profilers/cupti/callback_hub.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/program_session.hpp"
#include "profilers/source/source_collector.hpp"

namespace speedlab::profiling {
namespace {

// Where the pass is: before the first launch, sampling, SASS metrics, read (waiting for the
// exit to be written), written.
enum class source_phase { idle, sampling, sass, read, done };

class source_program final : public program_session, public cupti::callback_client {
public:
  bool configure(const profile::parsed_injection_options& settings, std::map<std::string, std::string>&) override {
    if (!settings.is_set(profile::option::source_launches)) return false;
    m_settings = settings;
    hub().reserve_launches(); // the windows are counted in launches
    return true;
  }

  void start(program_host& host) override {
    m_host = &host;
    if (!hub().subscribed()) {
      if (!hub().subscribe_error().empty()) note(source::unavailable_note(hub().subscribe_error()));
      return;
    }
    if (const std::string* why = m_settings.problem(profile::option::source_launches)) {
      note(source::unavailable_note(*why));
      return;
    }
    m_window = *m_settings.options.source.launches;
    try {
      m_collector = std::make_unique<source_core::source_collector>(source_core::collector_options{true});
    } catch (const std::exception& e) {
      note(source::unavailable_note(e.what()));
      return;
    }
    hub().take_launches();
    for (const auto& [domain, id] : counters_core::counter_collector::launch_callbacks())
      m_launch_callbacks.insert({domain, id});
    hub().add(this);
    for (const auto& [domain, id] : source_core::source_collector::resource_callbacks()) hub().enable(domain, id);
    for (const auto& [domain, id] : m_launch_callbacks) hub().enable(domain, id);
    // The pass is read before its context goes (Numba destroys its own at Python's exit).
    hub().enable(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  }

  void write_results() override { write_pass(); }

  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept override {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        write_pass();
      else
        m_collector->on_callback(domain, id, data); // context created, module loaded
      return;
    }
    if (m_launch_callbacks.count({static_cast<int>(domain), static_cast<unsigned>(id)}))
      launch(domain, static_cast<const CUpti_CallbackData*>(data));
  }

private:
  static cupti::callback_hub& hub() { return cupti::callback_hub::process(); }
  void note(const std::string& text) { m_host->note(text); }

  // A launch's entry: the first starts sampling, the one after N sampled launches switches
  // to SASS metrics, the one after N more stops (each on the launching thread, before the
  // launch: the switch synchronizes the context, so the phases never overlap a kernel).
  void launch(CUpti_CallbackDomain domain, const CUpti_CallbackData* cb) noexcept {
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
      std::lock_guard lock(m_mutex);
      if (m_phase == source_phase::done) return;
      ++m_launches;
      const std::uint64_t t0 = steady_now_ns();
      if (m_phase == source_phase::idle) {
        m_collector->start();
        m_phase = source_phase::sampling;
      } else if (m_phase == source_phase::sampling && m_launches > m_window) {
        m_collector->next_phase();
        m_phase = source_phase::sass;
      } else if (m_phase == source_phase::sass && m_launches > 2 * m_window) {
        m_collector->stop();
        m_phase = source_phase::read;
      } else {
        return;
      }
      m_host_ns += steady_now_ns() - t0;
    } catch (...) {
      m_phase = source_phase::done;
    }
  }

  // At exit, or when a context is being destroyed: the running phase stopped and read, the
  // lines folded and written as a source chunk (once), with what the collector has to say.
  void write_pass() noexcept {
    std::vector<std::string> said;
    try {
      std::lock_guard lock(m_mutex);
      if (!m_collector || m_phase == source_phase::done) return;
      const source_phase was = m_phase;
      m_phase = source_phase::done;
      const std::uint64_t t0 = steady_now_ns();
      // The SASS phase still on at exit is switched off unread: reading it there hung once.
      if (was == source_phase::sampling || (was == source_phase::sass && !m_collector->abandon_sass()))
        m_collector->stop();
      source::source_pass pass = m_collector->take();
      m_host_ns += steady_now_ns() - t0;
      pass.setup_wall_ns = static_cast<double>(m_host_ns);
      if (was != source_phase::idle)
        m_host->write(profile::chunk_type::source, profile::source_json(steady_now_ns(), pass));
      said = m_collector->messages();
      said.push_back(window_note(was));
    } catch (const std::exception& e) {
      said.push_back(source::unavailable_note(e.what()));
    } catch (...) {
    }
    for (const auto& n : said) note(n);
  }

  std::string window_note(source_phase was) const {
    if (was == source_phase::idle) return "source: no kernel was launched; no source view";
    const std::uint64_t n = m_window, seen = m_launches;
    std::string sass =
        seen > n ? fmt::format(", SASS metrics (patched kernels) over launches {} to {}", n + 1, std::min(seen, 2 * n))
                 : ", no SASS metrics (no launch after the sampling window: no sectors per request)";
    return fmt::format("source: PC sampling over launches 1 to {}{} of the {}{} seen; the launching thread spent "
                       "{:.1f} ms starting, switching and reading the pass (--source-launches sets the window)",
                       std::min(seen, n), sass, seen, seen > 2 * n ? "+" : "", static_cast<double>(m_host_ns) / 1e6);
  }

  program_host* m_host = nullptr;
  profile::parsed_injection_options m_settings;
  // The collector lives to the end of the process (CUPTI may call it late); it and the
  // launch callbacks are set before the callbacks are enabled.
  std::unique_ptr<source_core::source_collector> m_collector;
  std::set<std::pair<int, unsigned>> m_launch_callbacks;
  std::mutex m_mutex; // the phase and the counts
  source_phase m_phase = source_phase::idle;
  std::uint64_t m_window = 0, m_launches = 0, m_host_ns = 0;
};

} // namespace

std::unique_ptr<program_session> make_source_program_session() { return std::make_unique<source_program>(); }

} // namespace speedlab::profiling
