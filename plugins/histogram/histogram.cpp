// Lesson 5: histogram of N(0,1) samples over [-4, 4). The variants show private partial
// histograms (threads), global atomics vs shared-memory privatized bins (cuda-global vs
// cuda), the cost of copies (cuda-lesson) and a data race that validation must catch
// (cuda-racy).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "histogram_problem.hpp"
#include "parallel.hpp"
#include "philox.hpp"
#include "worker_team.hpp"
#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda.hpp>

#include "cuda_variants.hpp"
#include "histogram_cuda.hpp"
#endif

namespace speedlab::plugins::histogram {
namespace {

// Box-Muller on Philox words: sample 4k..4k+3 come from draw k, so every variant (and any
// thread count) sees the same samples. u1 is in (0, 1], so a few samples fall outside
// [-4, 4) and exercise the out-of-range path.
void fill_samples(float* x, std::size_t n) {
  const std::size_t draws = (n + 3) / 4;
  parallel::for_static(parallel::default_threads(), draws, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const rng::uint4x32 r = rng::draw4(rng::default_seed, sample_stream, k);
      for (std::size_t pair = 0; pair < 2; ++pair) {
        const double u1 = (static_cast<double>(r.v[2 * pair] >> 8) + 1.0) / 16777216.0;
        const double u2 = static_cast<double>(r.v[2 * pair + 1] >> 8) / 16777216.0;
        const double radius = std::sqrt(-2.0 * std::log(u1));
        const double angle = 2.0 * std::numbers::pi * u2;
        const std::size_t i = 4 * k + 2 * pair;
        if (i < n) x[i] = static_cast<float>(radius * std::cos(angle));
        if (i + 1 < n) x[i + 1] = static_cast<float>(radius * std::sin(angle));
      }
    }
  });
}

std::vector<float> make_samples(std::size_t n) {
  std::vector<float> x(n);
  fill_samples(x.data(), n);
  return x;
}

// The check every variant uses: an exact match with a serial count made here (never by the
// variant's code path), and counts that add up to the in-range samples. The reference is
// counted once and kept for the next check.
class count_checker {
public:
  explicit count_checker(int bins) : m_bins(bins), m_scale(bin_scale(bins)) {}
  validation check(const float* samples, std::size_t n, const std::uint32_t* counts) {
    if (!m_reference) {
      reference r;
      r.counts.assign(static_cast<std::size_t>(m_bins), 0);
      for (std::size_t i = 0; i < n; ++i) {
        const float x = samples[i];
        if (x >= range_lo && x < range_hi) ++r.in_range;
        const int b = bin_of(x, m_bins, m_scale);
        if (b >= 0) ++r.counts[static_cast<std::size_t>(b)];
      }
      m_reference = std::move(r);
    }
    std::uint64_t total = 0, differing = 0, worst = 0;
    std::size_t first_bad = 0;
    for (std::size_t b = 0; b < static_cast<std::size_t>(m_bins); ++b) {
      total += counts[b];
      const std::uint64_t want = m_reference->counts[b];
      const std::uint64_t diff = counts[b] > want ? counts[b] - want : want - counts[b];
      if (diff != 0 && differing++ == 0) first_bad = b;
      worst = std::max(worst, diff);
    }
    if (differing != 0)
      return validation::fail(
          std::to_string(differing) + " of " + std::to_string(m_bins) + " bins differ from the serial count (bin " +
              std::to_string(first_bad) + ": " + std::to_string(counts[first_bad]) + " vs " +
              std::to_string(m_reference->counts[first_bad]) + "); counts sum to " + std::to_string(total) + " of " +
              std::to_string(m_reference->in_range) + " in-range samples",
          static_cast<double>(worst));
    if (total != m_reference->in_range)
      return validation::fail("counts sum to " + std::to_string(total) + ", expected " +
                              std::to_string(m_reference->in_range) + " in-range samples");
    return validation::pass("all " + std::to_string(m_bins) + " bins equal the serial count; sum " +
                            std::to_string(total) + " = in-range samples (" + std::to_string(n - total) +
                            " outside [-4, 4))");
  }

private:
  int m_bins;
  float m_scale;
  struct reference {
    std::vector<std::uint64_t> counts;
    std::uint64_t in_range = 0;
  };
  std::optional<reference> m_reference;
};

// Shared state of the variants.
class histogram_run : public variant_run {
protected:
  explicit histogram_run(const point& p)
      : m_n(static_cast<std::size_t>(p.get_int("n"))), m_bins(static_cast<int>(p.get_int("bins"))),
        m_scale(bin_scale(m_bins)) {
    if (m_n < 1) throw std::invalid_argument("histogram: n must be >= 1");
    if (m_bins < 1 || m_bins > 8192) throw std::invalid_argument("histogram: bins must be in 1..8192");
  }

  void make_inputs() {
    m_samples = make_samples(m_n);
    m_counts.assign(static_cast<std::size_t>(m_bins), 0);
  }

  validation check(const std::vector<std::uint32_t>& counts) {
    return m_checker.check(m_samples.data(), m_n, counts.data());
  }

#if SPEEDLAB_PLUGIN_HAS_CUDA
  // The CUDA variants' steps (cuda_variants.hpp).
  using gpu = gpu_histogram;
  static constexpr gpu_kernel lesson_kernel = gpu_kernel::privatized;
  std::unique_ptr<gpu> make_gpu(int device, gpu_kernel) const { return std::make_unique<gpu>(device, m_n, m_bins); }
  void upload(gpu& g) const { g.upload(m_samples.data()); }
  static void launch(gpu& g, gpu_kernel k) { g.count(k); }
  void download(gpu& g) { g.download(m_counts.data()); }
  validation check_result() { return check(m_counts); }
#endif

  std::size_t m_n;
  int m_bins;
  float m_scale;
  std::vector<float> m_samples;
  std::vector<std::uint32_t> m_counts;

private:
  count_checker m_checker{m_bins};
};

class histogram_serial final : public histogram_run {
public:
  explicit histogram_serial(const point& p) : histogram_run(p) {}
  void setup() override { make_inputs(); }
  void compute() override {
    std::fill(m_counts.begin(), m_counts.end(), 0u);
    for (std::size_t i = 0; i < m_n; ++i) {
      const int b = bin_of(m_samples[i], m_bins, m_scale);
      if (b >= 0) ++m_counts[static_cast<std::size_t>(b)];
    }
  }
  validation validate() override { return check(m_counts); }
};

// About 4 contiguous chunks per thread, shared out to a team of threads started once in
// setup; each chunk counts into its own histogram (rows padded to a cache line apart),
// merged in chunk order: no atomics, no sharing. Few chunks per thread keep the per-chunk
// bins and the merge small.
class histogram_threads final : public histogram_run {
public:
  histogram_threads(const point& p, const run_context& c) : histogram_run(p), m_threads(std::max(1, c.threads)) {}
  void setup() override {
    make_inputs();
    const std::size_t target = 4 * static_cast<std::size_t>(m_threads);
    m_grain = (m_n + target - 1) / target;
    m_chunks = (m_n + m_grain - 1) / m_grain;
    m_stride = (static_cast<std::size_t>(m_bins) + 15) / 16 * 16 + 16;
    m_partials.assign(m_stride * m_chunks, 0);
    m_team = std::make_unique<parallel::worker_team>(m_threads);
  }
  void compute() override {
    m_team->run(m_n, m_grain, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
      std::uint32_t* mine = m_partials.data() + chunk * m_stride;
      std::fill(mine, mine + m_bins, 0u);
      for (std::size_t i = begin; i < end; ++i) {
        const int b = bin_of(m_samples[i], m_bins, m_scale);
        if (b >= 0) ++mine[b];
      }
    });
    std::copy(m_partials.begin(), m_partials.begin() + m_bins, m_counts.begin());
    for (std::size_t c = 1; c < m_chunks; ++c) {
      const std::uint32_t* part = m_partials.data() + c * m_stride;
      for (std::size_t b = 0; b < static_cast<std::size_t>(m_bins); ++b) m_counts[b] += part[b];
    }
  }
  validation validate() override { return check(m_counts); }
  void teardown() override { m_team.reset(); }

private:
  int m_threads;
  std::size_t m_grain = 1, m_chunks = 0, m_stride = 0;
  std::vector<std::uint32_t> m_partials;
  std::unique_ptr<parallel::worker_team> m_team;
};

work_model work(const point& p) {
  const double n = static_cast<double>(p.get_int("n"));
  const double bins = static_cast<double>(p.get_int("bins"));
  return work_model{.bytes_read = 4 * n, .bytes_written = 4 * bins, .items = n};
}

workload_info describe() {
  workload_info w{"histogram", "histogram of N(0,1) float32 samples over [-4, 4)"};
  w.lesson = "lesson 5: histogram (atomics, shared-memory privatization, races)";
  w.parameters = {
      param_spec::integer("n", "samples (Box-Muller on Philox, made in setup)", 1 << 24, "1e4:1e8:10", 1, 2147483647.0).as_size_axis(),
      param_spec::integer("bins", "equal bins over [-4, 4)", 10, "10,64,512,4096", 1, 4096),
  };
  w.work = work;
  w.data.arrays = [](const point& p) {
    return std::vector<array_spec>{{"x", element_type::f32, {static_cast<std::size_t>(p.get_int("n"))}},
                                   {"counts", element_type::u32, {static_cast<std::size_t>(p.get_int("bins"))}, true}};
  };
  w.data.fill = [](const point&, const array_set& a) { fill_samples(a.get<float>("x"), a.count("x")); };
  w.data.check = [](const point& p, const array_set& a) {
    count_checker checker(static_cast<int>(p.get_int("bins")));
    return checker.check(a.get<float>("x"), a.count("x"), a.get<std::uint32_t>("counts"));
  };
  w.variants = {
      variant_spec::make<histogram_serial>("serial", variant_kind::serial, "plain loop over the samples"),
      variant_spec::make<histogram_threads>("threads", variant_kind::threads,
                                            "about 4 contiguous chunks per thread on a persistent team of "
                                            "threads, one private histogram per chunk, merged in order"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  auto lesson = cuda::variant<cuda_lesson<histogram_run>>(
      "cuda-lesson", "privatized kernel; pageable buffers, cudaMalloc and copies in and out every repetition");
  lesson.work = copied_every_repetition(work);
  auto resident = cuda::variant<cuda_resident<histogram_run, gpu_kernel::privatized>>(
      "cuda", "device-resident samples; per-thread (<= 11 bins) or per-warp shared-memory bins, 16-byte loads, one "
              "atomic per bin per block");
  auto global = cuda::variant<cuda_resident<histogram_run, gpu_kernel::global_atomics>>(
      "cuda-global", "device-resident samples; one global atomicAdd per sample (the lesson's kernel)");
  auto racy = cuda::variant<cuda_resident<histogram_run, gpu_kernel::racy>>(
      "cuda-racy", "WRONG ON PURPOSE: shared-memory bins incremented without atomics; concurrent increments are lost");
  racy.expected_invalid = true;
  for (auto* v : {&lesson, &resident, &global, &racy}) w.variants.push_back(std::move(*v));
#endif
  return w;
}

} // namespace
} // namespace speedlab::plugins::histogram

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::histogram::describe)
