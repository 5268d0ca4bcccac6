// "source": where each kernel's time goes by source line (CUPTI PC sampling: warp stall
// reasons per SASS PC, folded to file:line). Its session lives in a process of its own
// (own_process): created before the variant's setup, so that every module load is seen,
// and alone, so that its CUPTI subscription takes no place of the cupti backend's. The
// pass samples one repetition after one warm-up (the first launches after enabling cost
// about 270 ms on the H100, SOURCE-LINES.md), then runs one more with SASS metrics (global
// sectors and requests per instruction); no timing of the point comes from it.
#include <chrono>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "profilers/profiler.hpp"
#include "profilers/source/source_collector.hpp"

namespace speedlab::profiling {
namespace {

class source_session final : public session {
public:
  source_session() {
    const auto t0 = std::chrono::steady_clock::now();
    m_collector.emplace(); // throws source_unavailable: "source: could not start: ..."
    m_setup_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }

  bool own_pass() const override { return true; }
  // One repetition sampled, then one with the SASS metrics' patched kernels.
  std::size_t pass_repetitions() const override { return 2; }

  void repetition_end() override {
    if (++m_repetitions != 1) return;
    try {
      m_collector->next_phase();
    } catch (const std::exception& e) {
      m_messages.push_back(fmt::format("source: SASS metrics phase failed: {}", e.what()));
    }
  }

  void start() override {
    try {
      m_collector->start();
    } catch (const std::exception& e) {
      m_messages.push_back(fmt::format("source: start failed: {}", e.what()));
    }
  }

  void stop() override {
    try {
      m_collector->stop();
    } catch (const std::exception& e) {
      m_messages.push_back(fmt::format("source: stop failed: {}", e.what()));
    }
  }

  void collect(profile_data& out) override {
    try {
      source::source_pass pass = m_collector->take();
      pass.setup_wall_ns = m_setup_ns;
      if (!pass.kernels.empty()) out.sections.set(std::move(pass));
    } catch (const std::exception& e) {
      m_messages.push_back(fmt::format("source: folding the samples failed: {}", e.what()));
    }
    for (auto& msg : m_collector->messages()) out.messages.push_back(std::move(msg));
    for (auto& msg : m_messages) out.messages.push_back(std::move(msg));
    m_messages.clear();
  }

private:
  std::optional<source_core::source_collector> m_collector;
  double m_setup_ns = 0;
  std::size_t m_repetitions = 0;
  std::vector<std::string> m_messages;
};

class source_profiler final : public profiler {
public:
  source_profiler()
      : profiler("source", "source lines of each kernel (CUPTI PC sampling: warp stall reasons per line, needs nvcc "
                           "-lineinfo) in a pass and a process of their own") {}
  std::string unavailable_reason() const override {
    static const std::string reason = no_driver_reason("no source view, the run goes on without it");
    return reason;
  }
  bool own_process() const override { return true; }
  std::unique_ptr<session> create_session(const profiler_options&) override {
    return std::make_unique<source_session>();
  }
};

} // namespace

std::unique_ptr<profiler> make_source_profiler() { return std::make_unique<source_profiler>(); }

} // namespace speedlab::profiling
