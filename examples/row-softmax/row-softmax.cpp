// row-softmax: y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r) over a rows x cols
// float32 matrix. Written from `speedlab new row-softmax --cuda` (scripts/new-kernel-demo.sh
// builds and runs it): a serial reference, a naive CUDA kernel (one thread per row) and an
// optimized one (one block per row, warp-shuffle reductions), both in row-softmax_cuda.cu.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "row-softmax_cuda.hpp"

namespace {

class serial_run final : public speedlab::variant_run {
public:
  explicit serial_run(const speedlab::point& p)
      : m_rows(static_cast<std::size_t>(p.get_int("rows"))), m_cols(static_cast<std::size_t>(p.get_int("cols"))) {}

  void setup() override {
    m_x = row_softmax_input(m_rows, m_cols);
    m_y.resize(m_x.size());
  }

  // The reference: three passes per row (max, sum of exponentials, scale), float arithmetic
  // as the kernels use.
  void compute() override {
    for (std::size_t r = 0; r < m_rows; ++r) {
      const float* x = m_x.data() + r * m_cols;
      float* y = m_y.data() + r * m_cols;
      float max = x[0];
      for (std::size_t c = 1; c < m_cols; ++c) max = std::max(max, x[c]);
      float sum = 0;
      for (std::size_t c = 0; c < m_cols; ++c) {
        y[c] = std::exp(x[c] - max);
        sum += y[c];
      }
      const float inv = 1.0f / sum;
      for (std::size_t c = 0; c < m_cols; ++c) y[c] *= inv;
    }
  }

  speedlab::validation validate() override { return row_softmax_check(m_x, m_y, m_rows, m_cols); }

private:
  std::size_t m_rows, m_cols;
  std::vector<float> m_x, m_y;
};

} // namespace

// Inputs in [-5, 5): a fixed hash of the index, the same for every variant.
std::vector<float> row_softmax_input(std::size_t rows, std::size_t cols) {
  std::vector<float> x(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 2654435761u) % 1000u) / 100.0f - 5.0f;
  return x;
}

// Against a double-precision softmax computed here. Each output is a float exp divided by a
// float sum of cols terms: the relative error bound grows with cols (rounding of the sum,
// about cols * 2^-24 at worst), plus a few ulp for exp and the division.
speedlab::validation row_softmax_check(const std::vector<float>& x, const std::vector<float>& y, std::size_t rows,
                                       std::size_t cols) {
  const double tolerance = 1e-6 + 6e-8 * static_cast<double>(cols);
  double worst = 0;
  std::size_t worst_at = 0;
  std::vector<double> e(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * cols;
    double max = xr[0];
    for (std::size_t c = 1; c < cols; ++c) max = std::max(max, static_cast<double>(xr[c]));
    double sum = 0;
    for (std::size_t c = 0; c < cols; ++c) sum += (e[c] = std::exp(static_cast<double>(xr[c]) - max));
    for (std::size_t c = 0; c < cols; ++c) {
      const double expected = e[c] / sum;
      const double rel = std::abs(static_cast<double>(y[r * cols + c]) - expected) / expected;
      if (!(rel <= worst)) { // NaN lands here too
        worst = std::isnan(rel) ? INFINITY : rel;
        worst_at = r * cols + c;
      }
    }
  }
  const std::string what = "max relative error " + std::to_string(worst) + " at element " + std::to_string(worst_at) +
                           " (tolerance " + std::to_string(tolerance) + ", double-precision reference)";
  return worst <= tolerance ? speedlab::validation::pass(what, worst) : speedlab::validation::fail(what, worst);
}

namespace {

speedlab::workload_info describe() {
  speedlab::workload_info w{"row-softmax", "softmax of every row of a rows x cols float32 matrix"};
  w.lesson = "a new kernel (the new-user walkthrough, scripts/new-kernel-demo.sh)";
  w.parameters = {
      speedlab::param_spec::integer("rows", "matrix rows", 1024, "2^0..2^14:2", 1, 1 << 20).as_size_axis(),
      speedlab::param_spec::integer("cols", "matrix columns (softmax length)", 1024, "2^4..2^16:2", 1, 1 << 20)
          .as_size_axis(),
  };
  w.constraints = {speedlab::constraint::product_at_most({"rows", "cols"}, double(1 << 28))};
  // The minimum: read x once, write y once; per element a subtraction, an exponential, an
  // addition and a multiplication (the max pass is comparisons, not counted).
  w.work = [](const speedlab::point& p) {
    const double n = static_cast<double>(p.get_int("rows")) * static_cast<double>(p.get_int("cols"));
    speedlab::work_model m;
    m.bytes_read = 4 * n;
    m.bytes_written = 4 * n;
    m.flops = 4 * n;
    m.items = n;
    return m;
  };
  w.variants = {speedlab::variant_spec::make<serial_run>("serial", speedlab::variant_kind::serial,
                                                         "three passes per row (max, exp and sum, scale)")};
#if SPEEDLAB_PLUGIN_HAS_CUDA
  for (auto& v : row_softmax_cuda_variants()) w.variants.push_back(std::move(v));
#endif
  return w;
}

} // namespace

SPEEDLAB_REGISTER_WORKLOAD(describe)
