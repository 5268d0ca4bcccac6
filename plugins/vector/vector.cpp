// Lesson 1: c = a + b and c = a * b over n float32 elements. The lessons' point: with one
// flop per 12 bytes the GPU only wins when the data already lives there; copying it in and
// out on every call (as the Python lessons did) costs far more than the kernel.
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "vector_problem.hpp"
#include "worker_team.hpp"

#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda_event_timer.hpp>
#include <speedlab/cuda.hpp>
#include "vector_kernels.hpp"
#endif

namespace speedlab::plugins::vector {
namespace {

struct params {
  op_kind op;
  std::size_t n;
  explicit params(const point& p)
      : op(parse_op(p.get_text("op"))), n(static_cast<std::size_t>(p.get_int("n"))) {}
};

class serial_run final : public variant_run {
public:
  explicit serial_run(const point& p) : m_p(p) {}
  void setup() override {
    m_a.resize(m_p.n);
    m_b.resize(m_p.n);
    m_c.assign(m_p.n, std::numeric_limits<float>::quiet_NaN()); // a skipped compute cannot validate
    fill_inputs(m_p.op, m_a.data(), m_b.data(), m_p.n);
  }
  void compute() override {
    const float* a = m_a.data();
    const float* b = m_b.data();
    float* c = m_c.data();
    if (m_p.op == op_kind::add)
      for (std::size_t i = 0; i < m_p.n; ++i) c[i] = a[i] + b[i];
    else
      for (std::size_t i = 0; i < m_p.n; ++i) c[i] = a[i] * b[i];
  }
  validation validate() override { return check(m_p.op, m_c.data(), m_p.n); }

private:
  params m_p;
  std::vector<float> m_a, m_b, m_c;
};

class threads_run final : public variant_run {
public:
  threads_run(const point& p, const run_context& ctx) : m_p(p), m_threads(ctx.threads) {}
  void setup() override {
    m_a.resize(m_p.n);
    m_b.resize(m_p.n);
    m_c.assign(m_p.n, std::numeric_limits<float>::quiet_NaN()); // a skipped compute cannot validate
    fill_inputs(m_p.op, m_a.data(), m_b.data(), m_p.n);
    m_team = std::make_unique<parallel::worker_team>(m_threads);
    const std::size_t target = 4 * m_team->size();
    m_grain = ((m_p.n + target - 1) / target + 15) / 16 * 16; // 64-byte multiple: chunks aligned as element 0
  }
  // Contiguous chunks, about 4 per thread, on a team started once in setup: each chunk
  // streams its own part of a, b and c.
  void compute() override {
    const float* a = m_a.data();
    const float* b = m_b.data();
    float* c = m_c.data();
    const op_kind op = m_p.op;
    m_team->run(m_p.n, m_grain, [=](std::size_t, std::size_t lo, std::size_t hi) {
      if (op == op_kind::add)
        for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
      else
        for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] * b[i];
    });
  }
  validation validate() override { return check(m_p.op, m_c.data(), m_p.n); }
  void teardown() override { m_team.reset(); }

private:
  params m_p;
  int m_threads;
  std::size_t m_grain = 16;
  std::vector<float> m_a, m_b, m_c;
  std::unique_ptr<parallel::worker_team> m_team;
};

#if SPEEDLAB_PLUGIN_HAS_CUDA
using speedlab::cuda::device_buffer;
using speedlab::cuda::pinned_buffer;

// As the lessons did it: pageable host arrays, device arrays allocated and filled on every
// call, the result copied back and the device arrays freed. With self_timing, cudaEvents
// around the launch time the kernel too (a lesson's own check).
class cuda_lesson_run final : public variant_run {
public:
  cuda_lesson_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device), m_ctx(ctx) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    if (m_ctx.self_timing) m_timer.emplace();
    m_a.resize(m_p.n);
    m_b.resize(m_p.n);
    m_c.assign(m_p.n, std::numeric_limits<float>::quiet_NaN()); // a skipped compute cannot validate
    fill_inputs(m_p.op, m_a.data(), m_b.data(), m_p.n);
  }
  void transfer_in() override {
    m_da = device_buffer<float>(m_p.n);
    m_db = device_buffer<float>(m_p.n);
    m_dc = device_buffer<float>(m_p.n);
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_da.get(), m_a.data(), m_da.bytes(), cudaMemcpyHostToDevice));
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_db.get(), m_b.data(), m_db.bytes(), cudaMemcpyHostToDevice));
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    if (m_timer) m_timer->start();
    launch_naive(m_p.op, m_da.get(), m_db.get(), m_dc.get(), m_p.n);
    if (m_timer) m_timer->stop();
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
    if (m_timer) report_timing(m_ctx, m_timer->gated() ? "kernel" : "kernel+launch", m_timer->elapsed_ns());
  }
  void transfer_out() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_c.data(), m_dc.get(), m_dc.bytes(), cudaMemcpyDeviceToHost));
    m_da = {};
    m_db = {};
    m_dc = {};
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override { return check(m_p.op, m_c.data(), m_p.n); }
  void teardown() override { m_timer.reset(); }

private:
  params m_p;
  int m_device;
  run_context m_ctx;
  std::vector<float> m_a, m_b, m_c;
  device_buffer<float> m_da, m_db, m_dc;
  std::optional<speedlab::cuda::event_timer> m_timer; // last: released before the buffers are freed
};

// Device-resident: inputs copied once in setup, each repetition is the tuned kernel alone.
class cuda_run final : public variant_run {
public:
  cuda_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device), m_ctx(ctx) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    if (m_ctx.self_timing) m_timer.emplace();
    m_da = device_buffer<float>(m_p.n);
    m_db = device_buffer<float>(m_p.n);
    m_dc = device_buffer<float>(m_p.n);
    m_out = pinned_buffer<float>(m_p.n);
    {
      pinned_buffer<float> b(m_p.n); // m_out holds a until it is copied in
      fill_inputs(m_p.op, m_out.get(), b.get(), m_p.n);
      SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_da.get(), m_out.get(), m_da.bytes(), cudaMemcpyHostToDevice));
      SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_db.get(), b.get(), m_db.bytes(), cudaMemcpyHostToDevice));
    }
    // NaN until computed, so a missing compute cannot validate.
    SPEEDLAB_CUDA_CHECK(cudaMemset(m_dc.get(), 0xff, m_dc.bytes()));
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    if (m_timer) m_timer->start();
    launch_tuned(m_p.op, m_da.get(), m_db.get(), m_dc.get(), m_p.n);
    if (m_timer) m_timer->stop();
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
    if (m_timer) report_timing(m_ctx, m_timer->gated() ? "kernel" : "kernel+launch", m_timer->elapsed_ns());
  }
  validation validate() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_out.get(), m_dc.get(), m_dc.bytes(), cudaMemcpyDeviceToHost));
    return check(m_p.op, m_out.get(), m_p.n);
  }
  void teardown() override {
    m_timer.reset();
    m_da = {};
    m_db = {};
    m_dc = {};
    m_out = {};
  }

private:
  params m_p;
  int m_device;
  run_context m_ctx;
  device_buffer<float> m_da, m_db, m_dc;
  pinned_buffer<float> m_out;
  std::optional<speedlab::cuda::event_timer> m_timer; // last: released before the buffers are freed
};
#endif

work_model base_work(const point& p) {
  const double n = static_cast<double>(p.get_int("n"));
  return work_model{.bytes_read = 8 * n, .bytes_written = 4 * n, .flops = n, .items = n};
}

workload_info describe() {
  workload_info w{"vector", "c = a + b or c = a * b over n float32 elements"};
  w.lesson = "lesson 1: elementwise add (Numba ufuncs, ContinuumIO/Carpentries) and multiply (PyShop PyCUDA)";
  w.parameters = {
      param_spec::text("op", "elementwise operation", "mul", {"add", "mul"}),
      param_spec::integer("n", "elements", std::int64_t{1} << 24, "2^10..2^28", 1, 2147483648.0).as_size_axis(),
  };
  w.work = base_work;
  w.data.arrays = [](const point& p) {
    const std::size_t n = params(p).n;
    return std::vector<array_spec>{{"a", element_type::f32, {n}}, {"b", element_type::f32, {n}},
                                   {"c", element_type::f32, {n}, true}};
  };
  w.data.fill = [](const point& p, const array_set& a) {
    fill_inputs(params(p).op, a.get<float>("a"), a.get<float>("b"), a.count("a"));
  };
  w.data.check = [](const point& p, const array_set& a) { return check(params(p).op, a.get<float>("c"), a.count("c")); };
  w.variants = {
      variant_spec::make<serial_run>("serial", variant_kind::serial, "plain loop"),
      variant_spec::make<threads_run>("threads", variant_kind::threads,
                                      "contiguous chunks (about 4 per thread) on a persistent team of threads"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  auto lesson = cuda::variant<cuda_lesson_run>(
      "cuda-lesson",
      "as the lessons: pageable host arrays, cudaMalloc + copy in and out every call, one thread per element");
  lesson.work = copied_every_repetition(base_work);
  auto resident = cuda::variant<cuda_run>(
      "cuda", "device-resident data; float4 grid-stride kernel filling every SM");
  for (variant_spec* v : {&lesson, &resident}) w.variants.push_back(std::move(*v));
#endif
  return w;
}

} // namespace
} // namespace speedlab::plugins::vector

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::vector::describe)
