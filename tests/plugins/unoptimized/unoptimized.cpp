// A test plugin built with -O0 (tests/plugins/unoptimized/CMakeLists.txt): one serial
// variant that sums n doubles.
#include <speedlab/plugin.hpp>

#if defined(__OPTIMIZE__) || defined(NDEBUG)
#error "this test plugin must be compiled without optimization and without NDEBUG"
#endif

namespace {

class sum_run final : public speedlab::variant_run {
public:
  explicit sum_run(const speedlab::point& p) : m_n(static_cast<std::size_t>(p.get_int("n"))) {}
  void setup() override { m_data.assign(m_n, 1.0); }
  void compute() override {
    m_sum = 0;
    for (double v : m_data) m_sum += v;
  }
  speedlab::validation validate() override {
    return m_sum == static_cast<double>(m_n) ? speedlab::validation::pass("sum == n") : speedlab::validation::fail("sum != n");
  }

private:
  std::size_t m_n;
  std::vector<double> m_data;
  double m_sum = 0;
};

speedlab::workload_info describe() {
  speedlab::workload_info w{"unoptimized", "sum of n doubles, built with -O0"};
  w.parameters = {speedlab::param_spec::integer("n", "elements", 1024, "1024").as_size_axis()};
  w.variants = {speedlab::variant_spec::make<sum_run>("serial", speedlab::variant_kind::serial, "plain loop")};
  return w;
}

} // namespace

SPEEDLAB_REGISTER_WORKLOAD(describe)
