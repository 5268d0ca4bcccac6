// "counters": per-kernel hardware counters through the CUPTI range profiler. The session
// asks for a pass of its own (own_pass): the runner gives it one unmeasured repetition
// after the timed ones, so kernel replay never touches a timing. Everything CUPTI-side is
// in counter_collector; a failure at any step is one note naming the cause, and the point
// goes on with whatever the other backends recorded.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "profilers/counters/counter_collector.hpp"
#include "profilers/counters/counters_options.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::profiling {
namespace {

class counters_session final : public session {
public:
  explicit counters_session(const profiler_options& options) {
    const counters_options& o = options.get<counters_options>();
    m_options.metric_set = o.metric_set;
    m_options.metrics = counters::metric_set(o.metric_set); // throws on an unknown set: "could not start"
    m_options.per_kernel_limit = o.counters_per_kernel;
    // Diagnostic: SPEEDLAB_COUNTERS_GATE=off keeps the range profiler on for the whole pass
    // (every launch profiled, no K), to tell the launch gate's effect from CUPTI's.
    if (const char* gate = std::getenv("SPEEDLAB_COUNTERS_GATE"); gate && std::string_view(gate) == "off")
      m_options.gate_launches = false;
    // Diagnostic: SPEEDLAB_COUNTERS_ADD=each configures one metric per CUPTI call (the old way).
    if (const char* add = std::getenv("SPEEDLAB_COUNTERS_ADD"); add && std::string_view(add) == "each")
      m_options.add_metrics_each = true;
  }

  bool own_pass() const override { return true; }

  // CUDA and CUPTI are touched only here, once the variant's setup made its context.
  void start() override {
    if (m_collector || m_failed) return;
    if (!counters_core::has_current_context()) return; // a CPU variant: nothing to read
    try {
      const auto t0 = std::chrono::steady_clock::now();
      m_collector.emplace(nullptr, m_options);
      m_setup_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      m_collector->start();
    } catch (const std::exception& e) {
      m_collector.reset();
      fail(e.what());
    }
  }

  void stop() override {
    if (!m_collector) return;
    try {
      m_collector->stop();
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }

  void collect(profile_data& out) override {
    for (auto& msg : m_messages) out.messages.push_back(msg);
    if (!m_collector) return;
    try {
      counters::counter_pass pass = m_collector->take();
      pass.setup_wall_ns = m_setup_ns;
      out.sections.set(std::move(pass));
    } catch (const counters_core::counters_unavailable& e) {
      fail(e.what());
      out.messages.push_back(m_messages.back());
    } catch (const std::exception& e) {
      out.messages.push_back(fmt::format("counters: reading the ranges failed: {}", e.what()));
    }
    for (auto& msg : m_collector->messages()) out.messages.push_back(std::move(msg));
    m_collector.reset();
  }

private:
  void fail(const std::string& why) {
    m_failed = true;
    m_messages.push_back(fmt::format("counters unavailable: {}; the run goes on with activity tracing only", why));
  }

  counters_core::collector_options m_options;
  std::optional<counters_core::counter_collector> m_collector;
  bool m_failed = false;
  double m_setup_ns = 0;
  std::vector<std::string> m_messages;
};

class counters_profiler final : public profiler {
public:
  counters_profiler()
      : profiler("counters", "per-kernel hardware counters (CUPTI range profiler, kernel replay) in a pass of their "
                             "own: DRAM/L2/L1 bytes, FLOPs by precision, occupancy, throughputs, pipes") {}

  // Fork-safe like cupti's: no CUDA or CUPTI initialization here.
  std::string unavailable_reason() const override {
    static const std::string reason = no_driver_reason("no counters, the run goes on without them");
    return reason;
  }

  std::unique_ptr<session> create_session(const profiler_options& options) override {
    return std::make_unique<counters_session>(options);
  }
};

} // namespace

std::unique_ptr<profiler> make_counters_profiler() { return std::make_unique<counters_profiler>(); }

} // namespace speedlab::profiling
