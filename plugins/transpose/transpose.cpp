// Lesson 7: transpose of an n x n int32 matrix holding arange(n * n); bandwidth 8 n^2 / t.
// The variants show cache blocking on the host, the copy cost (cuda-lesson) and strided vs
// shared-memory-tiled writes (cuda-naive vs cuda).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "parallel.hpp"
#include "worker_team.hpp"
#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda.hpp>

#include "cuda_variants.hpp"
#include "transpose_cuda.hpp"
#endif

namespace speedlab::plugins::transpose {
namespace {

inline constexpr std::size_t block = 32; // host tile: 32 x 32 int32 = 4 KiB each side

// out rows [row_begin, row_end) of out = in^T, in 32 x 32 tiles so both matrices are walked
// a cache line at a time.
void transpose_rows(const std::int32_t* in, std::int32_t* out, std::size_t n, std::size_t row_begin,
                    std::size_t row_end) {
  for (std::size_t rb = row_begin; rb < row_end; rb += block) {
    const std::size_t re = std::min(rb + block, row_end);
    for (std::size_t cb = 0; cb < n; cb += block) {
      const std::size_t ce = std::min(cb + block, n);
      for (std::size_t r = rb; r < re; ++r)
        for (std::size_t c = cb; c < ce; ++c) out[r * n + c] = in[c * n + r];
    }
  }
}

// Exact: out[r][c] must be the arange value of in[c][r], c * n + r (no reference needed).
validation check_transposed(const std::int32_t* out, std::size_t n) {
  std::size_t wrong = 0, first = 0;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c)
      if (out[r * n + c] != static_cast<std::int32_t>(c * n + r) && wrong++ == 0) first = r * n + c;
  if (wrong != 0)
    return validation::fail(std::to_string(wrong) + " of " + std::to_string(n * n) +
                                " elements wrong; first at (" + std::to_string(first / n) + ", " +
                                std::to_string(first % n) + "): " + std::to_string(out[first]) + ", expected " +
                                std::to_string((first % n) * n + first / n),
                            static_cast<double>(wrong));
  return validation::pass("all " + std::to_string(n * n) + " elements equal the transposed arange");
}

void fill_arange(std::int32_t* in, std::size_t count) {
  parallel::for_static(parallel::default_threads(), count, [&](std::size_t, std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) in[i] = static_cast<std::int32_t>(i);
  });
}

class transpose_run : public variant_run {
protected:
  explicit transpose_run(const point& p) : m_n(static_cast<std::size_t>(p.get_int("size"))) {
    if (m_n < 1 || m_n > 32768) throw std::invalid_argument("transpose: size must be in 1..32768");
  }

  void make_inputs() {
    m_in.resize(m_n * m_n);
    m_out.assign(m_n * m_n, -1);
    fill_arange(m_in.data(), m_in.size());
  }

  validation check(const std::vector<std::int32_t>& out) const { return check_transposed(out.data(), m_n); }

#if SPEEDLAB_PLUGIN_HAS_CUDA
  // The CUDA variants' steps (cuda_variants.hpp).
  using gpu = gpu_transpose;
  static constexpr gpu_kernel lesson_kernel = gpu_kernel::tiled;
  std::unique_ptr<gpu> make_gpu(int device, gpu_kernel) const {
    return std::make_unique<gpu>(device, static_cast<int>(m_n));
  }
  void upload(gpu& g) const { g.upload(m_in.data()); }
  static void launch(gpu& g, gpu_kernel k) { g.transpose(k); }
  void download(gpu& g) { g.download(m_out.data()); }
  validation check_result() const { return check(m_out); }
#endif

  std::size_t m_n;
  std::vector<std::int32_t> m_in, m_out;
};

class transpose_serial final : public transpose_run {
public:
  explicit transpose_serial(const point& p) : transpose_run(p) {}
  void setup() override { make_inputs(); }
  void compute() override { transpose_rows(m_in.data(), m_out.data(), m_n, 0, m_n); }
  validation validate() override { return check(m_out); }
};

// Contiguous bands of output rows (about 4 per thread, whole tiles) shared out to a team of
// threads started once in setup, the same tiled loop as serial.
class transpose_threads final : public transpose_run {
public:
  transpose_threads(const point& p, const run_context& c) : transpose_run(p), m_threads(std::max(1, c.threads)) {}
  void setup() override {
    make_inputs();
    const std::size_t target = 4 * static_cast<std::size_t>(m_threads);
    m_grain = ((m_n + target - 1) / target + block - 1) / block * block;
    m_team = std::make_unique<parallel::worker_team>(m_threads);
  }
  void compute() override {
    m_team->run(m_n, m_grain, [&](std::size_t, std::size_t begin, std::size_t end) {
      transpose_rows(m_in.data(), m_out.data(), m_n, begin, end);
    });
  }
  validation validate() override { return check(m_out); }
  void teardown() override { m_team.reset(); }

private:
  int m_threads;
  std::size_t m_grain = block;
  std::unique_ptr<parallel::worker_team> m_team;
};

work_model work(const point& p) {
  const double n2 = double(p.get_int("size")) * double(p.get_int("size"));
  return work_model{.bytes_read = 4 * n2, .bytes_written = 4 * n2, .items = n2};
}

workload_info describe() {
  workload_info w{"transpose", "transpose of an n x n int32 matrix (arange); bandwidth 8 n^2 / t"};
  w.lesson = "lesson 7: matrix transpose (coalescing, 32x33 shared-memory tile, bank conflicts)";
  w.parameters = {
      param_spec::integer("size", "matrix side n (n x n int32)", 4096, "512,1000,2048,4096,4097,8192,16384", 1, 32768).as_size_axis()};
  w.work = work;
  w.data.arrays = [](const point& p) {
    const auto n = static_cast<std::size_t>(p.get_int("size"));
    return std::vector<array_spec>{{"a", element_type::i32, {n, n}}, {"out", element_type::i32, {n, n}, true}};
  };
  w.data.fill = [](const point&, const array_set& a) { fill_arange(a.get<std::int32_t>("a"), a.count("a")); };
  w.data.check = [](const point& p, const array_set& a) {
    return check_transposed(a.get<std::int32_t>("out"), static_cast<std::size_t>(p.get_int("size")));
  };
  w.variants = {
      variant_spec::make<transpose_serial>("serial", variant_kind::serial, "loop over 32 x 32 tiles"),
      variant_spec::make<transpose_threads>("threads", variant_kind::threads,
                                            "contiguous bands of output rows (about 4 per thread) on a persistent "
                                            "team of threads, 32 x 32 tiles"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  auto lesson = cuda::variant<cuda_lesson<transpose_run>>(
      "cuda-lesson", "tiled kernel; pageable buffers, cudaMalloc and copies in and out every repetition");
  lesson.work = copied_every_repetition(work);
  auto tiled = cuda::variant<cuda_resident<transpose_run, gpu_kernel::tiled>>(
      "cuda", "device-resident; 32x32 tile through shared memory padded to 32x33");
  auto naive = cuda::variant<cuda_resident<transpose_run, gpu_kernel::naive>>(
      "cuda-naive", "device-resident; coalesced reads, writes strided by n");
  for (auto* v : {&lesson, &tiled, &naive}) w.variants.push_back(std::move(*v));
#endif
  return w;
}

} // namespace
} // namespace speedlab::plugins::transpose

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::transpose::describe)
