// Lesson 8: Mandelbrot escape counts on a size x size grid over [-2, 2]^2. Work per pixel
// ranges from 1 to `iterations`, so the variants show load balance: dynamic row scheduling
// on the host, 2-D thread blocks on the GPU, and the copy cost (cuda-lesson).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <speedlab/plugin.hpp>

#include "mandelbrot_problem.hpp"
#include "parallel.hpp"
#include "worker_team.hpp"
#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda.hpp>

#include "cuda_variants.hpp"
#include "mandelbrot_cuda.hpp"
#endif

namespace speedlab::plugins::mandelbrot {
namespace {

void render_rows(std::int32_t* image, int size, int iterations, int row_begin, int row_end) {
  for (int row = row_begin; row < row_end; ++row) {
    const double cy = coordinate(row, size);
    std::int32_t* out = image + std::size_t(row) * size;
    for (int col = 0; col < size; ++col) out[col] = escape_count(coordinate(col, size), cy, iterations);
  }
}

// Membership check against a reference made here (never by a variant's code path); the
// reference rows are computed once and kept for the next check.
class image_checker {
public:
  image_checker(int size, int iterations) : m_size(size), m_iterations(iterations) {}
  // Membership (count == iterations) against a reference computed here with the plain
  // loop, in parallel; large problems check a strided subset of rows.
  validation check(const std::int32_t* image) {
    if (m_rows.empty()) {
      const double budget = 2e9; // iterations, assuming 10% members
      const double cost = double(m_size) * m_size * (0.1 * m_iterations + 20);
      const int stride = std::max(1, static_cast<int>(std::ceil(cost / budget)));
      for (int row = 0; row < m_size; row += stride) m_rows.push_back(row);
      m_reference.assign(m_rows.size() * std::size_t(m_size), 0);
      parallel::for_dynamic(
          parallel::default_threads(), m_rows.size(), 1, [&](std::size_t, std::size_t b, std::size_t e) {
            for (std::size_t r = b; r < e; ++r) {
              const double cy = coordinate(m_rows[r], m_size);
              for (int col = 0; col < m_size; ++col)
                m_reference[r * m_size + col] = escape_count(coordinate(col, m_size), cy, m_iterations);
            }
          });
    }
    std::size_t membership = 0, counts = 0, members = 0;
    for (std::size_t r = 0; r < m_rows.size(); ++r) {
      for (int col = 0; col < m_size; ++col) {
        const std::int32_t want = m_reference[r * m_size + col];
        const std::int32_t got = image[std::size_t(m_rows[r]) * m_size + col];
        members += want == m_iterations;
        counts += got != want;
        membership += (got == m_iterations) != (want == m_iterations);
      }
    }
    const double checked = double(m_rows.size()) * m_size;
    const double fraction = double(membership) / checked;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%zu membership mismatches in %.0f pixels (%.4f%%, limit 0.1%%); %zu members; %zu counts differ; %zu "
                  "of %d rows checked",
                  membership, checked, 100 * fraction, members, counts, m_rows.size(), m_size);
    return fraction < 1e-3 ? validation::pass(buf, fraction) : validation::fail(buf, fraction);
  }

private:
  int m_size, m_iterations;
  std::vector<int> m_rows;
  std::vector<std::int32_t> m_reference;
};

class mandelbrot_run : public variant_run {
protected:
  explicit mandelbrot_run(const point& p)
      : m_size(static_cast<int>(p.get_int("size"))), m_iterations(static_cast<int>(p.get_int("iterations"))) {
    if (m_size < 1) throw std::invalid_argument("mandelbrot: size must be >= 1");
    if (m_iterations < 1) throw std::invalid_argument("mandelbrot: iterations must be >= 1");
  }

  void make_inputs() { m_image.assign(std::size_t(m_size) * m_size, 0); }
  validation check(const std::vector<std::int32_t>& image) { return m_checker.check(image.data()); }

#if SPEEDLAB_PLUGIN_HAS_CUDA
  // The CUDA variants' steps (cuda_variants.hpp). The lesson copied its (empty) image in; the
  // resident variants copy it once in setup too, where it costs nothing measured.
  using gpu = gpu_mandelbrot;
  static constexpr mandelbrot_kernel lesson_kernel = mandelbrot_kernel::lesson;
  std::unique_ptr<gpu> make_gpu(int device, mandelbrot_kernel k) const {
    return std::make_unique<gpu>(device, m_size, m_iterations, k);
  }
  void upload(gpu& g) const { g.upload(m_image.data()); }
  static void launch(gpu& g, mandelbrot_kernel) { g.render(); }
  void download(gpu& g) { g.download(m_image.data()); }
  validation check_result() { return check(m_image); }
#endif

  int m_size, m_iterations;
  std::vector<std::int32_t> m_image;

private:
  image_checker m_checker{m_size, m_iterations};
};

class mandelbrot_serial final : public mandelbrot_run {
public:
  explicit mandelbrot_serial(const point& p) : mandelbrot_run(p) {}
  void setup() override { make_inputs(); }
  void compute() override { render_rows(m_image.data(), m_size, m_iterations, 0, m_size); }
  validation validate() override { return check(m_image); }
};

// Rows handed out one at a time from a shared counter to a team of threads started once in
// setup: rows through the set cost far more than rows outside it, so static chunks would
// leave threads idle.
class mandelbrot_threads final : public mandelbrot_run {
public:
  mandelbrot_threads(const point& p, const run_context& c) : mandelbrot_run(p), m_threads(std::max(1, c.threads)) {}
  void setup() override {
    make_inputs();
    m_team = std::make_unique<parallel::worker_team>(m_threads);
  }
  void compute() override {
    m_team->run(std::size_t(m_size), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
      render_rows(m_image.data(), m_size, m_iterations, int(begin), int(end));
    });
  }
  validation validate() override { return check(m_image); }
  void teardown() override { m_team.reset(); }

private:
  int m_threads;
  std::unique_ptr<parallel::worker_team> m_team;
};

// Iterations actually run per pixel, estimated from a 64 x 64 subgrid (cached: the work
// model is asked for often and the estimate costs up to 64*64*iterations steps).
// skip_cardioid: pixels inside the main cardioid or period-2 bulb count none (cuda-cardioid).
double iterations_per_pixel(int size, int iterations, bool skip_cardioid = false) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, bool>, double> cache;
  std::lock_guard lock(mutex);
  const auto key = std::make_tuple(size, iterations, skip_cardioid);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const int k = std::min(size, 64);
  double sum = 0;
  for (int r = 0; r < k; ++r)
    for (int c = 0; c < k; ++c) {
      const double cx = coordinate(int(std::int64_t(c) * size / k), size);
      const double cy = coordinate(int(std::int64_t(r) * size / k), size);
      if (skip_cardioid && in_cardioid_or_bulb(cx, cy)) continue;
      const int count = escape_count(cx, cy, iterations);
      sum += count < iterations ? count + 1 : iterations;
    }
  return cache[key] = sum / (double(k) * k);
}

work_model work(const point& p) {
  const int size = static_cast<int>(p.get_int("size"));
  const double pixels = double(size) * size;
  // about 8 double-precision flops per iteration (2 multiplies for z^2, x*y, 2 adds for
  // the update, the |z|^2 sum); the only memory traffic is writing the counts
  const double flops = 8 * pixels * iterations_per_pixel(size, static_cast<int>(p.get_int("iterations")));
  return work_model{.bytes_written = 4 * pixels, .flops = flops, .items = pixels, .fp64 = true};
}

workload_info describe() {
  workload_info w{"mandelbrot", "Mandelbrot escape counts (int32) over [-2, 2]^2, escape bound 2, double precision"};
  w.lesson = "lesson 8: Mandelbrot (load balance, 2-D thread blocks)";
  w.parameters = {
      param_spec::integer("size", "image side (size x size pixels)", 512, "2^9..2^13", 1, 8192).as_size_axis(),
      param_spec::integer("iterations", "maximum iterations per pixel", 256, "2^8..2^12", 1, 4096),
  };
  w.work = work;
  // Python variants: no inputs (the grid is the parameters), one image out.
  w.data.arrays = [](const point& p) {
    const auto n = static_cast<std::size_t>(p.get_int("size"));
    return std::vector<array_spec>{{"image", element_type::i32, {n, n}, true}};
  };
  w.data.fill = [](const point&, const array_set&) {};
  w.data.check = [](const point& p, const array_set& a) {
    image_checker checker(static_cast<int>(p.get_int("size")), static_cast<int>(p.get_int("iterations")));
    return checker.check(a.get<std::int32_t>("image"));
  };
  w.variants = {
      variant_spec::make<mandelbrot_serial>("serial", variant_kind::serial, "plain loop over rows and columns"),
      variant_spec::make<mandelbrot_threads>("threads", variant_kind::threads,
                                             "dynamic scheduling: rows taken one at a time from a shared counter by a "
                                             "persistent team of threads"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  auto lesson = cuda::variant<cuda_lesson<mandelbrot_run>>(
      "cuda-lesson", "pageable image copied to a fresh device buffer, rendered and copied back every repetition");
  lesson.work = [](const point& p) {
    work_model m = work(p);
    m.host_to_device_bytes = m.bytes_written; // the lesson copies its (empty) image in too
    m.device_to_host_bytes = m.bytes_written;
    return m;
  };
  auto resident = cuda::variant<cuda_resident<mandelbrot_run, mandelbrot_kernel::lesson>>(
      "cuda", "device-resident image; one thread per pixel in 8 x 8 thread blocks");
  auto tuned = cuda::variant<cuda_resident<mandelbrot_run, mandelbrot_kernel::tuned>>(
      "cuda-tuned", "kernel tuned for the FP64 pipe, the same escape counts: 2xy + cy as one FMA of x*y (exact), "
                    "the escape test once per 16 iterations with a replay of the escaping block, 16 x 16 blocks");
  auto cardioid = cuda::variant<cuda_resident<mandelbrot_run, mandelbrot_kernel::cardioid>>(
      "cuda-cardioid", "algorithmic change, not kernel tuning: cuda-tuned plus a test that marks pixels inside the "
                       "main cardioid or period-2 bulb as members without iterating");
  cardioid.work = [](const point& p) { // only the iterations it runs
    work_model m = work(p);
    const int size = static_cast<int>(p.get_int("size")), iterations = static_cast<int>(p.get_int("iterations"));
    m.flops *= iterations_per_pixel(size, iterations, true) / iterations_per_pixel(size, iterations);
    return m;
  };
  for (auto* v : {&lesson, &resident, &tuned, &cardioid}) w.variants.push_back(std::move(*v));
#endif
  return w;
}

} // namespace
} // namespace speedlab::plugins::mandelbrot

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::mandelbrot::describe)
