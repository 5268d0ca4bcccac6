// "counters" in a profiled program (`speedlab profile --metrics`): the program session of the
// counters backend (program_session.hpp). The options name the metrics (and the set's name,
// and K); a collector per CUDA context, made at the context's first launch (it must be
// current), fed the launch callbacks of the process's one CUPTI subscription
// (cupti::callback_hub), read when the context is destroyed or at exit, each pass written as
// a counters chunk. Nothing here throws out of a CUPTI callback.
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <cupti.h>

#include <fmt/format.h>

#include "profilers/counters/counter_collector.hpp"
#include "profilers/cupti/callback_hub.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/program_session.hpp"

namespace speedlab::profiling {
namespace {

using counters_core::counter_collector;

class counters_program final : public program_session, public cupti::callback_client {
public:
  bool configure(const profile::parsed_injection_options& settings, std::map<std::string, std::string>&) override {
    if (!settings.is_set(profile::option::metrics)) return false;
    const profile::counters_injection_options& o = settings.options.counters;
    m_options.metrics = o.metrics;
    m_options.metric_set = o.metric_set_or_names();
    if (o.per_kernel) m_options.per_kernel_limit = *o.per_kernel;
    m_options.external_callbacks = true;
    hub().reserve_launches(); // the launch gate needs every launch callback
    return true;
  }

  void start(program_host& host) override {
    m_host = &host;
    if (!hub().subscribed()) return; // CUPTI is not ours: the cupti session said why
    if (!hub().take_launches()) {
      host.note("counters: not read with --source (replays and PC sampling were not checked together); profile again "
                "with --metrics alone");
      return;
    }
    for (const auto& [domain, id] : counter_collector::launch_callbacks()) m_launch_callbacks.insert({domain, id});
    hub().add(this);
    for (const auto& [domain, id] : m_launch_callbacks) hub().enable(domain, id);
    // A context destroyed before the exit handler runs (Numba destroys its own at Python's
    // exit, and reading its counters afterwards crashed the process) is read as it goes.
    hub().enable(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    std::lock_guard lock(m_mutex);
    m_on = m_started = true;
  }

  // At exit: the pass of each context still alive.
  void write_results() override {
    std::map<CUcontext, std::unique_ptr<counter_collector>> collectors;
    std::vector<std::string> problems;
    {
      std::lock_guard lock(m_mutex);
      m_on = false;
      collectors.swap(m_collectors);
      problems.swap(m_problems);
    }
    for (const auto& p : problems) m_host->note(p);
    for (auto& [context, c] : collectors) write_pass(*c);
  }

  void close(const program_end& end) override {
    if (end.terminated && m_started && !m_options.metrics.empty())
      m_host->note(end.how + ": the counters of CUDA contexts still alive are not read (the process is ending)");
  }

  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept override {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        context_ending(static_cast<const CUpti_ResourceData*>(data)->context);
      return;
    }
    if (m_launch_callbacks.count({static_cast<int>(domain), static_cast<unsigned>(id)}))
      launch(domain, id, static_cast<const CUpti_CallbackData*>(data));
  }

private:
  static cupti::callback_hub& hub() { return cupti::callback_hub::process(); }

  // A context with a collector is being destroyed: its pass is read and written now.
  void context_ending(CUcontext context) noexcept {
    try {
      std::unique_ptr<counter_collector> c;
      {
        std::lock_guard lock(m_mutex);
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
  void write_pass(counter_collector& c) {
    std::vector<std::string> said;
    try {
      c.stop();
      const counters::counter_pass pass = c.take();
      m_host->write(profile::chunk_type::counters, profile::counters_json(steady_now_ns(), pass));
      if (const std::size_t read = pass.kernels.size(); read > 0)
        said.push_back(fmt::format("counters: {} launch(es) were replayed to read their counters (the first {} of each "
                                   "kernel, grid and block); CUPTI records no activity for a replayed launch, so the "
                                   "trace lacks them",
                                   read, pass.per_kernel_limit));
      for (const auto& m : c.messages()) said.push_back(m);
    } catch (const std::exception& e) {
      said.push_back(std::string("counters: ") + e.what());
    }
    for (const auto& n : said) m_host->note(n);
  }

  // A launch callback (entry and exit): to the collector of the launch's context, made at
  // its first launch.
  void launch(CUpti_CallbackDomain domain, CUpti_CallbackId id, const CUpti_CallbackData* cb) noexcept {
    try {
      std::lock_guard lock(m_mutex);
      if (!m_on || !cb->context) return;
      auto it = m_collectors.find(cb->context);
      if (it == m_collectors.end()) {
        if (cb->callbackSite != CUPTI_API_ENTER) return;
        auto made = std::make_unique<counter_collector>(cb->context, m_options);
        made->start();
        it = m_collectors.emplace(cb->context, std::move(made)).first;
      }
      it->second->on_api_callback(domain, id, cb);
    } catch (const std::exception& e) {
      m_on = false; // one try: the cause is noted at exit
      m_problems.push_back(std::string("counters unavailable: ") + e.what() + "; the program was traced without them");
    } catch (...) {
      m_on = false;
    }
  }

  program_host* m_host = nullptr;
  counters_core::collector_options m_options;
  // Written before the callbacks are enabled and only read after.
  std::set<std::pair<int, unsigned>> m_launch_callbacks;
  bool m_started = false;
  std::mutex m_mutex; // the rest: launching threads, context ends, exit
  bool m_on = false;
  std::map<CUcontext, std::unique_ptr<counter_collector>> m_collectors;
  std::vector<std::string> m_problems;
};

} // namespace

std::unique_ptr<program_session> make_counters_program_session() { return std::make_unique<counters_program>(); }

} // namespace speedlab::profiling
