// Lesson 2: reductions, mean(a) and dot(a, b) over n float32 elements with double
// accumulators. On the GPU the lessons contrast global atomics (every thread adds into one
// address) with a shared-memory tree; both read the data once, only one is fast.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "reduction_problem.hpp"
#include "worker_team.hpp"

#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda.hpp>
#include "reduction_kernels.hpp"
#endif

namespace speedlab::plugins::reduction {
namespace {

struct params {
  op_kind op;
  std::size_t n;
  explicit params(const point& p)
      : op(parse_op(p.get_text("op"))), n(static_cast<std::size_t>(p.get_int("n"))) {}
  bool dot() const { return op == op_kind::dot; }
  double scale() const { return op == op_kind::mean ? 1.0 / static_cast<double>(n) : 1.0; }
};

// Host inputs: b only for dot.
struct host_inputs {
  std::vector<float> a, b;
  void fill(const params& p) {
    a.resize(p.n);
    b.resize(p.dot() ? p.n : 0);
    fill_inputs(p.op, a.data(), p.dot() ? b.data() : nullptr, p.n);
  }
};

double sum_range(const params& p, const float* a, const float* b, std::size_t lo, std::size_t hi) {
  double acc = 0;
  if (p.dot())
    for (std::size_t i = lo; i < hi; ++i) acc += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  else
    for (std::size_t i = lo; i < hi; ++i) acc += static_cast<double>(a[i]);
  return acc;
}

class serial_run final : public variant_run {
public:
  explicit serial_run(const point& p) : m_p(p) {}
  void setup() override { m_in.fill(m_p); }
  void compute() override { m_result = sum_range(m_p, m_in.a.data(), m_in.b.data(), 0, m_p.n) * m_p.scale(); }
  validation validate() override { return check(m_p.op, m_p.n, m_result); }

private:
  params m_p;
  host_inputs m_in;
  double m_result = std::numeric_limits<double>::quiet_NaN(); // until computed
};

// About 4 contiguous chunks per thread, shared out to a team of threads started once in
// setup; one padded partial per chunk (no false sharing), merged in chunk order, so the
// result does not depend on the schedule.
class threads_run final : public variant_run {
public:
  threads_run(const point& p, const run_context& ctx) : m_p(p), m_threads(std::max(1, ctx.threads)) {}
  void setup() override {
    m_in.fill(m_p);
    const std::size_t target = 4 * static_cast<std::size_t>(m_threads);
    m_grain = ((m_p.n + target - 1) / target + 15) / 16 * 16; // 64-byte multiple: chunks aligned as element 0
    m_partials.resize((m_p.n + m_grain - 1) / m_grain);
    m_team = std::make_unique<parallel::worker_team>(m_threads);
  }
  void compute() override {
    m_team->run(m_p.n, m_grain, [this](std::size_t chunk, std::size_t lo, std::size_t hi) {
      m_partials[chunk].sum = sum_range(m_p, m_in.a.data(), m_in.b.data(), lo, hi);
    });
    double total = 0;
    for (const partial& q : m_partials) total += q.sum;
    m_result = total * m_p.scale();
  }
  validation validate() override { return check(m_p.op, m_p.n, m_result); }
  void teardown() override { m_team.reset(); }

private:
  struct alignas(64) partial {
    double sum = 0;
  };
  params m_p;
  int m_threads;
  std::size_t m_grain = 1;
  host_inputs m_in;
  std::vector<partial> m_partials;
  std::unique_ptr<parallel::worker_team> m_team;
  double m_result = std::numeric_limits<double>::quiet_NaN(); // until computed
};

#if SPEEDLAB_PLUGIN_HAS_CUDA
using speedlab::cuda::device_buffer;
using speedlab::cuda::pinned_buffer;

struct device_tree {
  device_buffer<double> partials, result;
  device_buffer<unsigned> counter;
  void allocate() {
    partials = device_buffer<double>(tree_max_blocks());
    result = device_buffer<double>(1);
    counter = device_buffer<unsigned>(1);
    SPEEDLAB_CUDA_CHECK(cudaMemset(counter.get(), 0, sizeof(unsigned)));
    SPEEDLAB_CUDA_CHECK(cudaMemset(result.get(), 0xff, sizeof(double))); // NaN until computed
  }
  tree_scratch scratch() const { return {partials.get(), counter.get(), result.get()}; }
};

// As the lessons did it: pageable host arrays, device arrays allocated and filled on every
// call, the result copied back and the device arrays freed.
class cuda_lesson_run final : public variant_run {
public:
  cuda_lesson_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    m_in.fill(m_p);
  }
  void transfer_in() override {
    m_da = device_buffer<float>(m_p.n);
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_da.get(), m_in.a.data(), m_da.bytes(), cudaMemcpyHostToDevice));
    if (m_p.dot()) {
      m_db = device_buffer<float>(m_p.n);
      SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_db.get(), m_in.b.data(), m_db.bytes(), cudaMemcpyHostToDevice));
    }
    m_tree.allocate();
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    launch_tree(m_p.op, m_da.get(), m_db.get(), m_p.n, m_p.scale(), m_tree.scratch());
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void transfer_out() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(&m_result, m_tree.result.get(), sizeof(double), cudaMemcpyDeviceToHost));
    m_da = {};
    m_db = {};
    m_tree = {};
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override { return check(m_p.op, m_p.n, m_result); }

private:
  params m_p;
  int m_device;
  host_inputs m_in;
  device_buffer<float> m_da, m_db;
  device_tree m_tree;
  double m_result = std::numeric_limits<double>::quiet_NaN(); // until computed
};

// Device-resident inputs, shared by the atomics and the tree variants.
class cuda_resident_base : public variant_run {
public:
  cuda_resident_base(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    host_inputs in;
    in.fill(m_p);
    m_da = device_buffer<float>(m_p.n);
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_da.get(), in.a.data(), m_da.bytes(), cudaMemcpyHostToDevice));
    if (m_p.dot()) {
      m_db = device_buffer<float>(m_p.n);
      SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_db.get(), in.b.data(), m_db.bytes(), cudaMemcpyHostToDevice));
    }
    m_out = pinned_buffer<double>(1);
    setup_scratch();
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_out.get(), result(), sizeof(double), cudaMemcpyDeviceToHost));
    return check(m_p.op, m_p.n, m_out[0]);
  }
  void teardown() override {
    m_da = {};
    m_db = {};
  }

protected:
  virtual void setup_scratch() = 0;
  virtual const double* result() const = 0;
  params m_p;
  int m_device;
  device_buffer<float> m_da, m_db;
  pinned_buffer<double> m_out;
};

class cuda_atomic_run final : public cuda_resident_base {
public:
  using cuda_resident_base::cuda_resident_base;
  void compute() override {
    launch_atomic(m_p.op, m_da.get(), m_db.get(), m_p.n, m_p.scale(), m_sum.get(), m_result.get());
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

private:
  void setup_scratch() override {
    m_sum = device_buffer<double>(1);
    m_result = device_buffer<double>(1);
    SPEEDLAB_CUDA_CHECK(cudaMemset(m_result.get(), 0xff, sizeof(double)));
  }
  const double* result() const override { return m_result.get(); }
  device_buffer<double> m_sum, m_result;
};

class cuda_tree_run final : public cuda_resident_base {
public:
  using cuda_resident_base::cuda_resident_base;
  void compute() override {
    launch_tree(m_p.op, m_da.get(), m_db.get(), m_p.n, m_p.scale(), m_tree.scratch());
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

private:
  void setup_scratch() override { m_tree.allocate(); }
  const double* result() const override { return m_tree.result.get(); }
  device_tree m_tree;
};
#endif

work_model base_work(const point& p) {
  const params q(p);
  const double n = static_cast<double>(q.n);
  return work_model{.bytes_read = (q.dot() ? 8 : 4) * n,
                    .bytes_written = 8,
                    .flops = (q.dot() ? 2 : 1) * n,
                    .items = n,
                    .fp64 = true}; // accumulation is double precision in every variant
}

workload_info describe() {
  workload_info w{"reduction", "mean(a) or dot(a, b) over n float32 elements, double accumulation"};
  w.lesson = "lesson 2: reductions (Numba/Carpentries dot product: shared-memory tree vs atomics)";
  w.parameters = {
      param_spec::text("op", "reduction", "mean", {"mean", "dot"}),
      param_spec::integer("n", "elements", std::int64_t{1} << 24, "2^10..2^28", 1, 2147483648.0).as_size_axis(),
  };
  w.work = base_work;
  // Python variants: b exists for dot only; the result is one double.
  w.data.arrays = [](const point& p) {
    const params q(p);
    std::vector<array_spec> a{{"a", element_type::f32, {q.n}}};
    if (q.dot()) a.push_back({"b", element_type::f32, {q.n}});
    a.push_back({"value", element_type::f64, {1}, true});
    return a;
  };
  w.data.fill = [](const point& p, const array_set& a) {
    const params q(p);
    fill_inputs(q.op, a.get<float>("a"), q.dot() ? a.get<float>("b") : nullptr, q.n);
  };
  w.data.check = [](const point& p, const array_set& a) {
    const params q(p);
    return check(q.op, q.n, a.get<double>("value")[0]);
  };
  w.variants = {
      variant_spec::make<serial_run>("serial", variant_kind::serial, "plain loop, double accumulator"),
      variant_spec::make<threads_run>("threads", variant_kind::threads,
                                      "about 4 contiguous chunks per thread on a persistent team of threads, "
                                      "padded per-chunk partials merged in order"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  auto lesson = cuda::variant<cuda_lesson_run>(
      "cuda-lesson",
      "as the lessons: pageable host arrays, cudaMalloc + copy in and out every call, tree kernel");
  lesson.work = copied_every_repetition(base_work);
  auto atomic = cuda::variant<cuda_atomic_run>(
      "cuda-atomic", "device-resident data; one global double atomicAdd per element");
  auto tree = cuda::variant<cuda_tree_run>(
      "cuda",
      "device-resident data; float4 grid-stride loads, warp-shuffle + shared-memory tree, last block finishes");
  for (variant_spec* v : {&lesson, &atomic, &tree}) w.variants.push_back(std::move(*v));
#endif
  return w;
}

} // namespace
} // namespace speedlab::plugins::reduction

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::reduction::describe)
