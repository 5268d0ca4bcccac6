// Template workload plugin: y = a*x + y (saxpy) over n floats, a serial and a CUDA variant
// (template_cuda.cu). An example for plugin authors: `speedlab new NAME --cuda` writes a
// project of this shape; docs/plugin-guide.md explains each part.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "template_cuda.hpp"

namespace template_plugin {

speedlab::validation check_saxpy(const std::vector<float>& y) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float expected = a * x_at(i) + 1.0f; // exact in float
    if (y[i] != expected)
      return speedlab::validation::fail("y[" + std::to_string(i) + "] = " + std::to_string(y[i]) + ", expected " +
                                        std::to_string(expected));
  }
  return speedlab::validation::pass("y = a*x + y exact for all " + std::to_string(y.size()) + " elements");
}

} // namespace template_plugin

namespace {

using template_plugin::a;

// One variant = one class. speedlab calls setup once, then transfer_in/compute/transfer_out
// per repetition (what is timed), validate after the first and last repetition.
class saxpy_serial final : public speedlab::variant_run {
public:
  explicit saxpy_serial(const speedlab::point& p) : m_n(static_cast<std::size_t>(p.get_int("n"))) {}

  // Untimed: allocate and fill inputs here, never in compute.
  void setup() override {
    m_x.resize(m_n);
    m_y0.assign(m_n, 1.0f);
    for (std::size_t i = 0; i < m_n; ++i) m_x[i] = template_plugin::x_at(i);
  }

  // y is reset from y0 each repetition so every repetition does the same work.
  void compute() override {
    m_y = m_y0;
    for (std::size_t i = 0; i < m_n; ++i) m_y[i] = a * m_x[i] + m_y[i];
  }

  // Compare with a result computed independently of compute(); say what was checked.
  speedlab::validation validate() override { return template_plugin::check_saxpy(m_y); }

private:
  std::size_t m_n;
  std::vector<float> m_x, m_y0, m_y;
};

speedlab::workload_info describe() {
  speedlab::workload_info w{"template-saxpy", "template plugin: y = a*x + y over n float32"};
  w.lesson = "template for plugin authors (not a lesson problem)";
  w.example = true; // `speedlab list` marks it as an example
  // Parameters: name, description, default, default sweep, min, max; n sizes the problem.
  w.parameters = {speedlab::param_spec::integer("n", "elements", 1 << 20, "2^10..2^24", 1, 1 << 28).as_size_axis()};
  // The least work one repetition must do: read x and y, write y, 2 flops per element.
  w.work = [](const speedlab::point& p) {
    const double n = static_cast<double>(p.get_int("n"));
    return speedlab::work_model{.bytes_read = 8 * n, .bytes_written = 4 * n, .flops = 2 * n, .items = n};
  };
  w.variants = {speedlab::variant_spec::make<saxpy_serial>("serial", speedlab::variant_kind::serial, "plain loop")};
#if SPEEDLAB_PLUGIN_HAS_CUDA
  w.variants.push_back(template_plugin::saxpy_cuda_variant());
#endif
  return w;
}

} // namespace

SPEEDLAB_REGISTER_WORKLOAD(describe)
