// A test plugin whose variants fail in every way a plugin can: the host must survive each,
// record the reason, and keep the other points' results.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include <speedlab/plugin.hpp>


namespace {

enum class fault { none, segfault, exception, abort_call, hang, wrong_answer, slow_setup };

template <fault F>
class faulty_run final : public speedlab::variant_run {
public:
  faulty_run(const speedlab::point& p, const speedlab::run_context& c)
      : m_n(static_cast<std::size_t>(p.get_int("n"))), m_context(c) {}
  void setup() override {
    m_data.assign(m_n, 1.0);
    if constexpr (F == fault::slow_setup) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  void compute() override {
    if constexpr (F == fault::segfault) {
      volatile int* null_pointer = nullptr;
      *null_pointer = 42;
    }
    if constexpr (F == fault::exception) throw std::runtime_error("deliberate failure in compute");
    if constexpr (F == fault::abort_call) std::abort();
    if constexpr (F == fault::hang)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    speedlab::scoped_range range(m_context, "faulty: summing"); // a plugin's own range
    const auto start = std::chrono::steady_clock::now();
    m_sum = 0;
    for (double v : m_data) m_sum += v;
    if (m_context.self_timing) // its own timing of the loop, when asked
      speedlab::report_timing(m_context, "summing",
                              std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() + 1);
  }
  speedlab::validation validate() override {
    const double expected = static_cast<double>(m_n) + (F == fault::wrong_answer ? 1.0 : 0.0);
    if (m_sum == expected) return speedlab::validation::pass("sum == n");
    return speedlab::validation::fail("sum != n", std::abs(m_sum - expected));
  }

private:
  std::size_t m_n;
  speedlab::run_context m_context;
  std::vector<double> m_data;
  double m_sum = 0;
};

speedlab::workload_info describe() {
  using speedlab::variant_kind;
  using speedlab::variant_spec;
  speedlab::workload_info w{"faulty", "test workload whose variants crash, throw, abort, hang or lie"};
  w.parameters = {speedlab::param_spec::integer("n", "elements", 1000, "1000..3000:1000", 1, 1e8),
                  speedlab::param_spec::text("mode", "unused text parameter", "a", {"a", "b"}),
                  speedlab::param_spec::real("scale", "unused real parameter", 1.5, {}, 0.0, 10.0)};
  w.work = [](const speedlab::point& p) {
    speedlab::work_model m;
    m.bytes_read = 8.0 * static_cast<double>(p.get_int("n"));
    m.flops = static_cast<double>(p.get_int("n"));
    return m;
  };
  w.variants = {variant_spec::make<faulty_run<fault::none>>("ok", variant_kind::serial, "sums correctly"),
                variant_spec::make<faulty_run<fault::segfault>>("segfault", variant_kind::serial, "writes through null"),
                variant_spec::make<faulty_run<fault::exception>>("throw", variant_kind::serial, "throws from compute"),
                variant_spec::make<faulty_run<fault::abort_call>>("abort", variant_kind::serial, "calls abort()"),
                variant_spec::make<faulty_run<fault::hang>>("hang", variant_kind::serial, "never returns"),
                variant_spec::make<faulty_run<fault::wrong_answer>>("wrong", variant_kind::serial, "validates false"),
                variant_spec::make<faulty_run<fault::slow_setup>>("slow", variant_kind::serial, "slow setup")};
  auto unavailable = variant_spec::make<faulty_run<fault::none>>("unavailable", variant_kind::cuda, "cannot run here");
  unavailable.unavailable_reason = [] { return std::string("test variant that is never available"); };
  w.variants.push_back(std::move(unavailable));
  auto wrong_on_purpose = variant_spec::make<faulty_run<fault::wrong_answer>>("racy", variant_kind::serial, "wrong on purpose");
  wrong_on_purpose.expected_invalid = true;
  w.variants.push_back(std::move(wrong_on_purpose));
  return w;
}

} // namespace

SPEEDLAB_REGISTER_WORKLOAD(describe)
