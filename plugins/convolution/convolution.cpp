// Lesson 6: 2-D convolution of a float32 image with a normalized random mask, zero padding.
// out[y][x] = sum_{i,j} image[y + i - h][x + j - h] * mask[i][j] (h = mask / 2; the mask is
// applied unflipped, as the lessons do). The variants show row-parallel threads, the copy
// cost (cuda-lesson) and naive vs tiled kernels (cuda-naive vs cuda).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "parallel.hpp"
#include "philox.hpp"
#include "worker_team.hpp"
#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda.hpp>

#include "convolution_cuda.hpp"
#include "cuda_variants.hpp"
#endif

namespace speedlab::plugins::convolution {
namespace {

inline constexpr int max_mask = 31;

// Uniform [0, 1) pixels from Philox stream 0, four per draw.
std::vector<float> make_image(int size) {
  const std::size_t n = std::size_t(size) * size;
  std::vector<float> image(n);
  parallel::for_static(parallel::default_threads(), (n + 3) / 4, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const rng::uint4x32 r = rng::draw4(rng::default_seed, 0, k);
      for (std::size_t c = 0; c < 4 && 4 * k + c < n; ++c) image[4 * k + c] = rng::to_unit_float(r.v[c]);
    }
  });
  return image;
}

// Positive random weights from Philox stream 1, normalized to sum to 1.
std::vector<float> make_mask(int m) {
  std::vector<double> w(std::size_t(m) * m);
  double sum = 0;
  for (std::size_t k = 0; k < w.size(); ++k) {
    const rng::uint4x32 r = rng::draw4(rng::default_seed, 1, k);
    w[k] = 0.05 + rng::to_unit_double(r.v[0], r.v[1]);
    sum += w[k];
  }
  std::vector<float> mask(w.size());
  for (std::size_t k = 0; k < w.size(); ++k) mask[k] = static_cast<float>(w[k] / sum);
  return mask;
}

// Output rows [row_begin, row_end). Each output sums its taps in mask row-major order.
// Interior columns (every tap inside the image) go in blocks of `block` outputs held in
// registers while a mask row's taps stream past (the inner loop vectorizes); border
// columns take the general path with the zero padding.
void convolve_rows(const float* image, const float* mask, float* out, int size, int m, int row_begin, int row_end) {
  constexpr int block = 32;
  const int h = m / 2;
  const int inner_begin = std::min(h, size), inner_end = std::max(inner_begin, size - h);
  const int blocked_end = inner_begin + (inner_end - inner_begin) / block * block;
  for (int y = row_begin; y < row_end; ++y) {
    float* o = out + std::size_t(y) * size;
    std::fill(o, o + size, 0.0f);
    for (int i = 0; i < m; ++i) {
      const int yy = y + i - h;
      if (yy < 0 || yy >= size) continue;
      const float* src = image + std::size_t(yy) * size - h; // src[x + j] = image[yy][x + j - h]
      const float* w = mask + std::size_t(i) * m;
      for (int x0 = inner_begin; x0 < blocked_end; x0 += block) {
        float acc[block];
        for (int k = 0; k < block; ++k) acc[k] = o[x0 + k];
        for (int j = 0; j < m; ++j) {
          const float wj = w[j];
          const float* s = src + x0 + j;
          for (int k = 0; k < block; ++k) acc[k] += s[k] * wj;
        }
        for (int k = 0; k < block; ++k) o[x0 + k] = acc[k];
      }
      auto general = [&](int x_begin, int x_end) { // any columns, taps outside the row skipped
        for (int x = x_begin; x < x_end; ++x) {
          float acc = o[x];
          for (int j = std::max(0, h - x); j < std::min(m, size + h - x); ++j) acc += src[x + j] * w[j];
          o[x] = acc;
        }
      };
      general(0, inner_begin);
      general(blocked_end, size);
    }
  }
}

// One output row in double precision, straight from the definition (validation only).
void reference_row(const float* image, const float* mask, int size, int m, int y, double* ref) {
  const int h = m / 2;
  for (int i = 0; i < m; ++i) {
    const int yy = y + i - h;
    if (yy < 0 || yy >= size) continue;
    for (int j = 0; j < m; ++j) {
      const double w = mask[std::size_t(i) * m + j];
      for (int x = 0; x < size; ++x) {
        const int xx = x + j - h;
        if (xx >= 0 && xx < size) ref[x] += w * image[std::size_t(yy) * size + xx];
      }
    }
  }
}

// The rows validation compares and their double-precision reference, computed once per
// run (a point validates its first and last repetition).
struct reference_rows {
  std::vector<int> rows;
  std::vector<double> values;
};

// Max relative error of `out` against a double-precision reference computed here. Large
// problems check a strided subset of rows (always including the padded border rows).
validation check_output(const float* image, const float* mask, const float* out, int size, int m,
                        reference_rows& ref) {
  const int h = m / 2;
  if (ref.rows.empty()) {
    const double budget = 4e9; // multiply-adds
    const double cost = double(size) * size * m * m;
    const int stride = std::max(1, static_cast<int>(std::ceil(cost / budget)));
    for (int y = 0; y < size; ++y)
      if (y % stride == 0 || y < h || y >= size - h) ref.rows.push_back(y);
    ref.values.assign(ref.rows.size() * std::size_t(size), 0.0);
    parallel::for_dynamic(parallel::default_threads(), ref.rows.size(), 4, [&](std::size_t, std::size_t b, std::size_t e) {
      for (std::size_t r = b; r < e; ++r) reference_row(image, mask, size, m, ref.rows[r], ref.values.data() + r * size);
    });
  }
  double worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t r = 0; r < ref.rows.size(); ++r) {
    for (int x = 0; x < size; ++x) {
      const double want = ref.values[r * size + x];
      const double got = out[std::size_t(ref.rows[r]) * size + x];
      const double err = std::abs(got - want) / std::max(std::abs(want), 1e-30);
      if (!(err <= worst)) { // also catches NaN
        worst = std::isnan(err) ? INFINITY : err;
        worst_at = std::size_t(ref.rows[r]) * size + x;
      }
    }
  }
  const std::string what = std::to_string(ref.rows.size()) + " of " + std::to_string(size) + " rows vs double reference";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", worst);
  if (!(worst <= 1e-5))
    return validation::fail("max relative error " + std::string(buf) + " > 1e-5 at pixel " + std::to_string(worst_at) +
                                " (" + what + ")",
                            worst);
  return validation::pass("max relative error " + std::string(buf) + " <= 1e-5 (" + what + ")", worst);
}

// The point's sizes, checked: image side and mask side (odd, 1..max_mask).
std::pair<int, int> sizes(const point& p) {
  const auto size = p.get_int("size"), mask = p.get_int("mask");
  if (size < 1) throw std::invalid_argument("convolution: size must be >= 1");
  if (mask < 1 || mask > max_mask || mask % 2 == 0)
    throw std::invalid_argument("convolution: mask must be odd, 1.." + std::to_string(max_mask) + " (got " +
                                std::to_string(mask) + ")");
  return {static_cast<int>(size), static_cast<int>(mask)};
}

class convolution_run : public variant_run {
protected:
  explicit convolution_run(const point& p) : m_size(sizes(p).first), m_mask(sizes(p).second) {}

  void make_inputs() {
    m_image = make_image(m_size);
    m_weights = make_mask(m_mask);
    m_out.assign(std::size_t(m_size) * m_size, 0.0f);
  }

  validation check(const std::vector<float>& out) {
    return check_output(m_image.data(), m_weights.data(), out.data(), m_size, m_mask, m_reference);
  }

#if SPEEDLAB_PLUGIN_HAS_CUDA
  // The CUDA variants' steps (cuda_variants.hpp).
  using gpu = gpu_convolution;
  static constexpr gpu_kernel lesson_kernel = gpu_kernel::tiled;
  std::unique_ptr<gpu> make_gpu(int device, gpu_kernel k) const {
    return std::make_unique<gpu>(device, m_size, m_mask, k);
  }
  void upload(gpu& g) const { g.upload(m_image.data(), m_weights.data()); }
  static void launch(gpu& g, gpu_kernel) { g.convolve(); }
  void download(gpu& g) { g.download(m_out.data()); }
  validation check_result() { return check(m_out); }
#endif

  int m_size, m_mask;
  std::vector<float> m_image, m_weights, m_out;

private:
  reference_rows m_reference;
};

class convolution_serial final : public convolution_run {
public:
  explicit convolution_serial(const point& p) : convolution_run(p) {}
  void setup() override { make_inputs(); }
  void compute() override { convolve_rows(m_image.data(), m_weights.data(), m_out.data(), m_size, m_mask, 0, m_size); }
  validation validate() override { return check(m_out); }
};

// Bands of 8 contiguous rows taken from a shared counter by a team of threads started once
// in setup, the same row code as serial: the work per row is even, but cores are not always
// (shared or throttled cores), and a static split waits for the slowest.
class convolution_threads final : public convolution_run {
public:
  convolution_threads(const point& p, const run_context& c) : convolution_run(p), m_threads(std::max(1, c.threads)) {}
  void setup() override {
    make_inputs();
    m_team = std::make_unique<parallel::worker_team>(m_threads);
  }
  void compute() override {
    m_team->run(std::size_t(m_size), 8, [&](std::size_t, std::size_t begin, std::size_t end) {
      convolve_rows(m_image.data(), m_weights.data(), m_out.data(), m_size, m_mask, int(begin), int(end));
    });
  }
  validation validate() override { return check(m_out); }
  void teardown() override { m_team.reset(); }

private:
  int m_threads;
  std::unique_ptr<parallel::worker_team> m_team;
};

work_model work(const point& p) {
  const double s2 = double(p.get_int("size")) * double(p.get_int("size"));
  const double m2 = double(p.get_int("mask")) * double(p.get_int("mask"));
  return work_model{.bytes_read = 4 * s2 + 4 * m2, .bytes_written = 4 * s2, .flops = 2 * m2 * s2, .items = s2};
}

workload_info describe() {
  workload_info w{"convolution", "2-D convolution of a float32 image with a normalized random mask, zero padding"};
  w.lesson = "lesson 6: 2-D convolution (shared-memory tiles, constant memory)";
  w.parameters = {
      param_spec::integer("size", "image side (size x size float32, Philox uniform)", 2048, "2^8..2^13", 1, 16384).as_size_axis(),
      param_spec::integer("mask", "mask side (odd)", 13, "3..31:4", 1, max_mask),
  };
  w.work = work;
  // The same image, mask and check for variants outside C++ (Python variants).
  w.data.arrays = [](const point& p) {
    const auto [size, m] = sizes(p);
    const auto n = static_cast<std::size_t>(size), k = static_cast<std::size_t>(m);
    return std::vector<array_spec>{{"image", element_type::f32, {n, n}},
                                   {"mask", element_type::f32, {k, k}},
                                   {"out", element_type::f32, {n, n}, true}};
  };
  w.data.fill = [](const point& p, const array_set& a) {
    const auto [size, m] = sizes(p);
    const std::vector<float> image = make_image(size), mask = make_mask(m);
    std::copy(image.begin(), image.end(), a.get<float>("image"));
    std::copy(mask.begin(), mask.end(), a.get<float>("mask"));
  };
  w.data.check = [](const point& p, const array_set& a) {
    const auto [size, m] = sizes(p);
    reference_rows ref;
    return check_output(a.get<float>("image"), a.get<float>("mask"), a.get<float>("out"), size, m, ref);
  };
  w.variants = {
      variant_spec::make<convolution_serial>(
          "serial", variant_kind::serial,
          "plain loops over rows and mask taps; interior columns in register blocks of 32"),
      variant_spec::make<convolution_threads>("threads", variant_kind::threads,
                                              "bands of 8 rows handed out dynamically to a persistent team of "
                                              "threads, same row code as serial"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  auto lesson = cuda::variant<cuda_lesson<convolution_run>>(
      "cuda-lesson", "tiled kernel; pageable buffers, cudaMalloc and copies in and out every repetition");
  lesson.work = copied_every_repetition(work);
  auto tiled = cuda::variant<cuda_resident<convolution_run, gpu_kernel::tiled>>(
      "cuda", "device-resident; shared-memory tile with halo, mask in constant memory, 8 outputs per thread");
  auto naive = cuda::variant<cuda_resident<convolution_run, gpu_kernel::naive>>(
      "cuda-naive", "device-resident; one output per thread, every tap read from global memory");
  for (auto* v : {&lesson, &tiled, &naive}) w.variants.push_back(std::move(*v));
#endif
  return w;
}

} // namespace
} // namespace speedlab::plugins::convolution

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::convolution::describe)
