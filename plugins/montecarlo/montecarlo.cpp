// Lesson 3: Monte Carlo estimation (PyShop): E[||x||^2] for x uniform on [0,1]^N with the
// estimator's variance, and Monte Carlo pi. Every variant draws the same numbers (Philox,
// one seed). The GPU pair of the lesson: points generated on the host and copied in
// (cuda-lesson, cuda-hostrng) vs drawn on the device where they are used (cuda).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "montecarlo_kernels.hpp"
#include "montecarlo_problem.hpp"
#include "parallel.hpp"
#include "worker_team.hpp"

#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda.hpp>
#endif

namespace speedlab::plugins::montecarlo {
namespace {

// What differs between the two problems; the variants below are written once for both.
struct moment_problem {
  struct params {
    int dims;
    std::size_t points;
    explicit params(const point& p)
        : dims(static_cast<int>(p.get_int("N"))), points(static_cast<std::size_t>(p.get_int("M"))) {}
  };
  using partial = moment_sums;
  using device_result = double;
  static partial not_computed() { return {NAN, NAN}; }
  [[maybe_unused]] static constexpr std::size_t result_count = moment_result_size; // the CUDA variants' only

  static std::size_t loop_size(const params& p) { return p.points; }
  static partial range(const params& p, std::size_t lo, std::size_t hi) { return moment_range(p.dims, lo, hi); }
  static void merge(partial& into, const partial& part) {
    into.sum += part.sum;
    into.sum_sq += part.sum_sq;
  }
  static validation check(const params& p, const partial& s) {
    const moment_estimate e = estimate_from_sums(s.sum, s.sum_sq, p.points);
    return check_moment(p.dims, p.points, e.estimate, e.variance);
  }
  static validation check_device(const params& p, const device_result* r) {
    return check_moment(p.dims, p.points, r[2], r[3]);
  }

  static std::size_t point_floats(const params& p) { return p.points * static_cast<std::size_t>(p.dims); }
  static void fill_points(float* pts, const params& p) { fill_moment_points(pts, p.dims, p.points); }
  static void launch_philox(const params& p, scratch s, device_result* r) { launch_moment_philox(p.dims, p.points, s, r); }
  static void launch_philox_tuned(const params& p, scratch s, device_result* r) {
    launch_moment_philox_tuned(p.dims, p.points, s, r);
  }
  static void launch_xoshiro(const params& p, scratch s, device_result* r) { launch_moment_xoshiro(p.dims, p.points, s, r); }
  static void launch_points(const float* pts, const params& p, scratch s, device_result* r) {
    launch_moment_points(pts, p.dims, p.points, s, r);
  }
};

struct pi_problem {
  struct params {
    std::size_t samples;
    explicit params(const point& p) : samples(static_cast<std::size_t>(p.get_int("M"))) {}
  };
  using partial = std::uint64_t;
  using device_result = unsigned long long;
  static partial not_computed() { return 0; }
  [[maybe_unused]] static constexpr std::size_t result_count = 1;

  static std::size_t loop_size(const params& p) { return pi_pairs(p.samples); }
  static partial range(const params& p, std::size_t lo, std::size_t hi) { return pi_range(p.samples, lo, hi); }
  static void merge(partial& into, const partial& part) { into += part; }
  static validation check(const params& p, const partial& hits) { return check_pi(p.samples, hits); }
  static validation check_device(const params& p, const device_result* r) { return check_pi(p.samples, r[0]); }

  static std::size_t point_floats(const params& p) { return 2 * p.samples; }
  static void fill_points(float* xy, const params& p) { fill_pi_points(xy, p.samples); }
  static void launch_philox(const params& p, scratch s, device_result* r) { launch_pi_philox(p.samples, s, r); }
  static void launch_philox_tuned(const params& p, scratch s, device_result* r) { launch_pi_philox_tuned(p.samples, s, r); }
  static void launch_xoshiro(const params& p, scratch s, device_result* r) { launch_pi_xoshiro(p.samples, s, r); }
  static void launch_points(const float* xy, const params& p, scratch s, device_result* r) {
    launch_pi_points(xy, p.samples, s, r);
  }
};

template <class P>
class serial_run final : public variant_run {
public:
  explicit serial_run(const point& p) : m_p(p) {}
  void compute() override { m_result = P::range(m_p, 0, P::loop_size(m_p)); }
  validation validate() override { return P::check(m_p, m_result); }

private:
  typename P::params m_p;
  typename P::partial m_result = P::not_computed();
};

// Chunks of points shared out to a team of threads started once in setup (pi at the
// default size is a few milliseconds on 16 cores: starting threads per call would show).
// Each chunk's sums are private to the thread computing it, kept in their own slot and
// merged in chunk order, so the result does not depend on the schedule or thread count.
template <class P>
class threads_run final : public variant_run {
public:
  threads_run(const point& p, const run_context& ctx) : m_p(p), m_threads(std::max(1, ctx.threads)) {}
  void setup() override {
    const std::size_t n = P::loop_size(m_p);
    m_grain = std::max<std::size_t>(4096, (n + max_chunks - 1) / max_chunks);
    m_chunks.resize((n + m_grain - 1) / m_grain);
    m_team = std::make_unique<parallel::worker_team>(m_threads);
  }
  void compute() override {
    m_team->run(P::loop_size(m_p), m_grain, [this](std::size_t chunk, std::size_t lo, std::size_t hi) {
      m_chunks[chunk] = P::range(m_p, lo, hi);
    });
    m_result = {};
    for (const auto& c : m_chunks) P::merge(m_result, c);
  }
  validation validate() override { return P::check(m_p, m_result); }
  void teardown() override { m_team.reset(); }

private:
  static constexpr std::size_t max_chunks = 1 << 16;
  typename P::params m_p;
  int m_threads;
  std::size_t m_grain = 1;
  std::vector<typename P::partial> m_chunks;
  std::unique_ptr<parallel::worker_team> m_team;
  typename P::partial m_result = P::not_computed();
};

#if SPEEDLAB_PLUGIN_HAS_CUDA
using speedlab::cuda::device_buffer;
using speedlab::cuda::pinned_buffer;

// Block partials, the ticket counter and the result, on the device.
template <class P>
struct device_state {
  device_buffer<unsigned char> partials;
  device_buffer<unsigned> counter;
  device_buffer<typename P::device_result> result;
  void allocate() {
    partials = device_buffer<unsigned char>(max_blocks() * partial_bytes);
    counter = device_buffer<unsigned>(1);
    result = device_buffer<typename P::device_result>(P::result_count);
    SPEEDLAB_CUDA_CHECK(cudaMemset(counter.get(), 0, sizeof(unsigned)));
    SPEEDLAB_CUDA_CHECK(cudaMemset(result.get(), 0xff, result.bytes())); // invalid until computed
  }
  scratch get() const { return {partials.get(), counter.get()}; }
};

// As the lesson did it: points generated on the host (numpy's rand(M, N)) in pageable
// memory, copied into freshly allocated device memory every call, the result copied back.
template <class P>
class cuda_lesson_run final : public variant_run {
public:
  cuda_lesson_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    check_point_bytes("cuda-lesson", 4.0 * static_cast<double>(P::point_floats(m_p)));
    m_points.resize(P::point_floats(m_p));
    P::fill_points(m_points.data(), m_p);
  }
  void transfer_in() override {
    m_dpoints = device_buffer<float>(m_points.size());
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_dpoints.get(), m_points.data(), m_dpoints.bytes(), cudaMemcpyHostToDevice));
    m_state.allocate();
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    P::launch_points(m_dpoints.get(), m_p, m_state.get(), m_state.result.get());
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void transfer_out() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_result, m_state.result.get(), m_state.result.bytes(), cudaMemcpyDeviceToHost));
    m_dpoints = {};
    m_state = {};
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override { return P::check_device(m_p, m_result); }

private:
  typename P::params m_p;
  int m_device;
  std::vector<float> m_points;
  device_buffer<float> m_dpoints;
  device_state<P> m_state;
  typename P::device_result m_result[P::result_count] = {};
};

// The naive half of the pair: host-generated points in pinned memory, copied in on every
// repetition (at full bus speed), device buffers allocated once.
template <class P>
class cuda_hostrng_run final : public variant_run {
public:
  cuda_hostrng_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    check_point_bytes("cuda-hostrng", 4.0 * static_cast<double>(P::point_floats(m_p)));
    m_points = pinned_buffer<float>(P::point_floats(m_p));
    P::fill_points(m_points.get(), m_p);
    m_dpoints = device_buffer<float>(m_points.size());
    m_state.allocate();
    m_out = pinned_buffer<typename P::device_result>(P::result_count);
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void transfer_in() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_dpoints.get(), m_points.get(), m_points.bytes(), cudaMemcpyHostToDevice));
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    P::launch_points(m_dpoints.get(), m_p, m_state.get(), m_state.result.get());
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_out.get(), m_state.result.get(), m_state.result.bytes(), cudaMemcpyDeviceToHost));
    return P::check_device(m_p, m_out.get());
  }
  void teardown() override {
    m_dpoints = {};
    m_points = {};
    m_state = {};
  }

private:
  typename P::params m_p;
  int m_device;
  pinned_buffer<float> m_points;
  device_buffer<float> m_dpoints;
  device_state<P> m_state;
  pinned_buffer<typename P::device_result> m_out;
};

// The optimized half: each thread draws its points with Philox where they are used; nothing
// crosses the bus, one launch per repetition. Launch: the kernel (P::launch_philox for the
// lesson's cuda variant; the tuned kernels of issue 14 for cuda-tuned and cuda-fast).
template <class P, void (*Launch)(const typename P::params&, scratch, typename P::device_result*) = &P::launch_philox>
class cuda_run final : public variant_run {
public:
  cuda_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    m_state.allocate();
    m_out = pinned_buffer<typename P::device_result>(P::result_count);
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    Launch(m_p, m_state.get(), m_state.result.get());
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_out.get(), m_state.result.get(), m_state.result.bytes(), cudaMemcpyDeviceToHost));
    return P::check_device(m_p, m_out.get());
  }
  void teardown() override { m_state = {}; }

private:
  typename P::params m_p;
  int m_device;
  device_state<P> m_state;
  pinned_buffer<typename P::device_result> m_out;
};
#endif

// Work per repetition. Philox integer work is not counted as flops; items are points.
work_model moment_work(const point& p) {
  const moment_problem::params q(p);
  const double m = static_cast<double>(q.points);
  // N fused multiply-adds per point for f, then f added to two double sums (one FMA).
  return work_model{.flops = m * (2.0 * q.dims + 3), .items = m};
}
work_model pi_work(const point& p) {
  const double m = static_cast<double>(pi_problem::params(p).samples);
  return work_model{.flops = 3 * m, .items = m};
}

template <class P>
std::vector<variant_spec> variants([[maybe_unused]] work_model (*base)(const point&)) { // base: CUDA variants only
  std::vector<variant_spec> v = {
      variant_spec::make<serial_run<P>>("serial", variant_kind::serial,
                                        "plain loop, Philox on the fly, double accumulators"),
      variant_spec::make<threads_run<P>>("threads", variant_kind::threads,
                                         "chunks of points on a persistent team of threads, per-chunk sums merged "
                                         "in order"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  // The copy-in variants read the host's points from device memory: 4 bytes a float.
  auto with_points = [base](bool lesson) {
    return [base, lesson](const point& p) {
      work_model m = base(p);
      const double bytes = 4.0 * static_cast<double>(P::point_floats(typename P::params(p)));
      m.bytes_read = bytes;
      m.host_to_device_bytes = bytes;
      if (lesson) m.device_to_host_bytes = static_cast<double>(sizeof(typename P::device_result) * P::result_count);
      return m;
    };
  };
  auto lesson = cuda::variant<cuda_lesson_run<P>>(
      "cuda-lesson",
      "as the lesson: host-generated points (pageable) copied into fresh device memory every call");
  lesson.work = with_points(true);
  auto hostrng = cuda::variant<cuda_hostrng_run<P>>(
      "cuda-hostrng", "host-generated points in pinned memory copied in every repetition");
  hostrng.work = with_points(false);
  auto ondevice = cuda::variant<cuda_run<P>>(
      "cuda",
      "on-device Philox per thread, private sums, warp-shuffle + shared-memory block reduction, one launch");
  auto tuned = cuda::variant<cuda_run<P, &P::launch_philox_tuned>>(
      "cuda-tuned", "cuda with less arithmetic per number (unit floats kept scaled by 2^24, exact): the same "
                    "Philox numbers, the same ||x||^2 per point and the same pi hits as cuda");
  auto fast = cuda::variant<cuda_run<P, &P::launch_xoshiro>>(
      "cuda-fast", "faster generator: xoshiro128+ per thread in registers (seeded from Philox by thread index; "
                   "different numbers from the other variants, results depend on the grid), 24-bit numbers, "
                   "integer squares; statistical check as every variant");
  for (variant_spec* s : {&lesson, &hostrng, &ondevice, &tuned, &fast}) v.push_back(std::move(*s));
#endif
  return v;
}

std::vector<workload_info> describe() {
  const auto samples = [](const char* what) {
    return param_spec::integer("M", what, 5120000, "512:5.12e8:10", 2, 1e11).as_size_axis();
  };
  workload_info moment{"montecarlo", "Monte Carlo estimate of E||x||^2 (= N/3) for x uniform on [0,1]^N, with "
                                     "the estimator's variance"};
  moment.lesson = "lesson 3: Monte Carlo moment estimation (PyShop, Sciences Po 2015)";
  moment.parameters = {param_spec::integer("N", "dimensions (the lesson uses 2, 8, 32)", 8, "2,8,32", 1, 1024),
                       samples("points")};
  moment.work = moment_work;
  moment.variants = variants<moment_problem>(moment_work);
  // Python variants read the host-generated points (numpy's rand(M, N) layout).
  moment.data.arrays = [](const point& p) {
    const moment_problem::params q(p);
    return std::vector<array_spec>{{"x", element_type::f32, {q.points, static_cast<std::size_t>(q.dims)}},
                                   {"estimate", element_type::f64, {1}, true},
                                   {"variance", element_type::f64, {1}, true}};
  };
  moment.data.fill = [](const point& p, const array_set& a) { moment_problem::fill_points(a.get<float>("x"), moment_problem::params(p)); };
  moment.data.check = [](const point& p, const array_set& a) {
    const moment_problem::params q(p);
    return check_moment(q.dims, q.points, a.get<double>("estimate")[0], a.get<double>("variance")[0]);
  };

  workload_info pi{"montecarlo_pi", "Monte Carlo pi: fraction of uniform points of the unit square inside the "
                                    "quarter circle"};
  pi.lesson = "lesson 3: Monte Carlo pi (per-thread random streams)";
  pi.parameters = {samples("samples")};
  pi.work = pi_work;
  pi.variants = variants<pi_problem>(pi_work);
  pi.data.arrays = [](const point& p) {
    const pi_problem::params q(p);
    return std::vector<array_spec>{{"xy", element_type::f32, {q.samples, 2}}, {"hits", element_type::u64, {1}, true}};
  };
  pi.data.fill = [](const point& p, const array_set& a) { pi_problem::fill_points(a.get<float>("xy"), pi_problem::params(p)); };
  pi.data.check = [](const point& p, const array_set& a) {
    return check_pi(pi_problem::params(p).samples, a.get<std::uint64_t>("hits")[0]);
  };
  return {std::move(moment), std::move(pi)};
}

} // namespace
} // namespace speedlab::plugins::montecarlo

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::montecarlo::describe)
