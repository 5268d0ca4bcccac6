// Lesson 4: transcendental elementwise functions, the Numba lessons' Gaussian PDF ufunc and
// polar distance (sin, cos, hypot), in float32 and float64. Enough arithmetic per byte that
// the GPU pays off sooner than for lesson 1, and float64 shows the cost of the wrong dtype.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "transcendental_kernels.hpp"
#include "transcendental_problem.hpp"
#include "worker_team.hpp"

#if SPEEDLAB_PLUGIN_HAS_CUDA
#include <speedlab/cuda.hpp>
#endif

namespace speedlab::plugins::transcendental {
namespace {

struct params {
  func_kind func;
  std::size_t n;
  explicit params(const point& p)
      : func(parse_func(p.get_text("func"))), n(static_cast<std::size_t>(p.get_int("n"))) {}
};

// Elements [lo, hi) on the host: the plain loop every host variant runs.
template <class T>
void evaluate(func_kind f, const inputs<T>& in, T* out, std::size_t lo, std::size_t hi) {
  if (f == func_kind::gauss) {
    const T* x = in.x.data();
    for (std::size_t i = lo; i < hi; ++i) out[i] = gaussian_pdf(x[i]);
  } else {
    const T *r1 = in.rho1.data(), *t1 = in.theta1.data(), *r2 = in.rho2.data(), *t2 = in.theta2.data();
    for (std::size_t i = lo; i < hi; ++i) out[i] = polar_distance(r1[i], t1[i], r2[i], t2[i]);
  }
}

template <class T>
class serial_run final : public variant_run {
public:
  serial_run(const point& p, const run_context&) : m_p(p) {}
  void setup() override {
    fill_inputs(m_p.func, m_p.n, m_in);
    m_out.assign(m_p.n, std::numeric_limits<T>::quiet_NaN()); // until computed
  }
  void compute() override { evaluate(m_p.func, m_in, m_out.data(), 0, m_p.n); }
  validation validate() override { return check(m_p.func, m_p.n, m_out.data(), m_in); }

private:
  params m_p;
  inputs<T> m_in;
  std::vector<T> m_out;
};

// Chunks handed out to a team of threads started once in setup (a repetition at the
// default size is a fraction of a millisecond: thread start-up would dominate it).
template <class T>
class threads_run final : public variant_run {
public:
  threads_run(const point& p, const run_context& ctx) : m_p(p), m_threads(ctx.threads) {}
  void setup() override {
    fill_inputs(m_p.func, m_p.n, m_in);
    m_out.assign(m_p.n, std::numeric_limits<T>::quiet_NaN()); // until computed
    m_team = std::make_unique<parallel::worker_team>(m_threads);
  }
  void compute() override {
    // About 16 chunks per thread: late or preempted threads just take fewer of them.
    const std::size_t grain = std::max<std::size_t>(1024, m_p.n / (16 * m_team->size()));
    T* out = m_out.data();
    m_team->run(m_p.n, grain, [&](std::size_t, std::size_t lo, std::size_t hi) { evaluate(m_p.func, m_in, out, lo, hi); });
  }
  validation validate() override { return check(m_p.func, m_p.n, m_out.data(), m_in); }
  void teardown() override { m_team.reset(); }

private:
  params m_p;
  int m_threads;
  inputs<T> m_in;
  std::vector<T> m_out;
  std::unique_ptr<parallel::worker_team> m_team;
};

#if SPEEDLAB_PLUGIN_HAS_CUDA
using speedlab::cuda::device_buffer;
using speedlab::cuda::pinned_buffer;

template <class T>
struct device_arrays {
  device_buffer<T> x, rho1, theta1, rho2, theta2, out;
  void upload(const params& p, const inputs<T>& in) {
    auto put = [&](device_buffer<T>& d, const std::vector<T>& h) {
      d = device_buffer<T>(p.n);
      SPEEDLAB_CUDA_CHECK(cudaMemcpy(d.get(), h.data(), d.bytes(), cudaMemcpyHostToDevice));
    };
    if (p.func == func_kind::gauss) {
      put(x, in.x);
    } else {
      put(rho1, in.rho1);
      put(theta1, in.theta1);
      put(rho2, in.rho2);
      put(theta2, in.theta2);
    }
    out = device_buffer<T>(p.n);
  }
  void launch(const params& p, bool lesson_kernel) const {
    if (p.func == func_kind::gauss) launch_gauss(x.get(), out.get(), p.n, lesson_kernel);
    else launch_polar(rho1.get(), theta1.get(), rho2.get(), theta2.get(), out.get(), p.n, lesson_kernel);
  }
};

// As the lessons did it (a Numba ufunc called on host arrays): pageable host arrays,
// device arrays allocated and filled on every call, the result copied back, one thread
// per element.
template <class T>
class cuda_lesson_run final : public variant_run {
public:
  cuda_lesson_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    fill_inputs(m_p.func, m_p.n, m_in);
    m_out.assign(m_p.n, std::numeric_limits<T>::quiet_NaN()); // until computed
  }
  void transfer_in() override {
    m_dev.upload(m_p, m_in);
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    m_dev.launch(m_p, true);
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void transfer_out() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_out.data(), m_dev.out.get(), m_dev.out.bytes(), cudaMemcpyDeviceToHost));
    m_dev = {};
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override { return check(m_p.func, m_p.n, m_out.data(), m_in); }

private:
  params m_p;
  int m_device;
  inputs<T> m_in;
  std::vector<T> m_out;
  device_arrays<T> m_dev;
};

// Device-resident: inputs copied once in setup; a repetition is the tuned kernel alone.
template <class T>
class cuda_run final : public variant_run {
public:
  cuda_run(const point& p, const run_context& ctx) : m_p(p), m_device(ctx.device) {}
  void setup() override {
    SPEEDLAB_CUDA_CHECK(cudaSetDevice(m_device));
    fill_inputs(m_p.func, m_p.n, m_in); // kept for validation
    m_dev.upload(m_p, m_in);
    SPEEDLAB_CUDA_CHECK(cudaMemset(m_dev.out.get(), 0xff, m_dev.out.bytes())); // NaN until computed
    m_out = pinned_buffer<T>(m_p.n);
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void compute() override {
    m_dev.launch(m_p, false);
    SPEEDLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  validation validate() override {
    SPEEDLAB_CUDA_CHECK(cudaMemcpy(m_out.get(), m_dev.out.get(), m_dev.out.bytes(), cudaMemcpyDeviceToHost));
    return check(m_p.func, m_p.n, m_out.get(), m_in);
  }
  void teardown() override {
    m_dev = {};
    m_out = {};
  }

private:
  params m_p;
  int m_device;
  inputs<T> m_in;
  device_arrays<T> m_dev;
  pinned_buffer<T> m_out;
};
#endif

// One variant name, two element types: the dtype parameter picks the instantiation.
template <template <class> class Run>
variant_spec typed(std::string name, variant_kind kind, std::string description) {
  variant_spec v;
  v.name = std::move(name);
  v.kind = kind;
  v.description = std::move(description);
  v.create = [](const point& p, const run_context& c) -> std::unique_ptr<variant_run> {
    if (p.get_text("dtype") == "float64") return std::make_unique<Run<double>>(p, c);
    return std::make_unique<Run<float>>(p, c);
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  if (kind == variant_kind::cuda) v.unavailable_reason = &cuda::unavailable_reason;
#endif
  return v;
}

// Each exp, sin, cos and hypot counts as one operation.
work_model base_work(const point& p) {
  const params q(p);
  const double n = static_cast<double>(q.n);
  const bool fp64 = p.get_text("dtype") == "float64";
  const double size = fp64 ? 8 : 4;
  const bool gauss = q.func == func_kind::gauss;
  return work_model{.bytes_read = (gauss ? 1 : 4) * size * n,
                    .bytes_written = size * n,
                    .flops = (gauss ? 6 : 11) * n, // gauss: sub, 3 mul, exp, mul; polar: 2 sin, 2 cos, 4 mul, 2 sub, hypot
                    .items = n,
                    .fp64 = fp64};
}

// The Python variants' arrays (workload_data): only the inputs of the function exist.
template <class T>
T* input_or_null(const array_set& a, const char* name) {
  return a.has(name) ? a.get<T>(name) : nullptr;
}
template <class T>
void fill_arrays(const params& q, const array_set& a) {
  fill_inputs<T>(q.func, q.n, input_or_null<T>(a, "x"), input_or_null<T>(a, "rho1"), input_or_null<T>(a, "theta1"),
                 input_or_null<T>(a, "rho2"), input_or_null<T>(a, "theta2"));
}
template <class T>
validation check_arrays(const params& q, const array_set& a) {
  return check<T>(q.func, q.n, a.get<T>("out"), input_or_null<T>(a, "x"), input_or_null<T>(a, "rho1"),
                  input_or_null<T>(a, "theta1"), input_or_null<T>(a, "rho2"), input_or_null<T>(a, "theta2"));
}

workload_info describe() {
  workload_info w{"transcendental", "elementwise Gaussian PDF or polar distance (sin, cos, hypot) over n elements"};
  w.lesson = "lesson 4: Numba ufuncs gaussian_pdf and polar_distance (ContinuumIO/Carpentries), float32 vs float64";
  w.parameters = {
      param_spec::text("func", "function", "gauss", {"gauss", "hypot"}),
      param_spec::text("dtype", "element type", "float32", {"float32", "float64"}),
      param_spec::integer("n", "elements", 1000000, "1e3:1e8:10", 1, 2147483648.0).as_size_axis(),
  };
  w.work = base_work;
  w.data.arrays = [](const point& p) {
    const params q(p);
    const element_type t = p.get_text("dtype") == "float64" ? element_type::f64 : element_type::f32;
    std::vector<array_spec> a;
    for (const char* name : q.func == func_kind::gauss ? std::vector<const char*>{"x"}
                                                       : std::vector<const char*>{"rho1", "theta1", "rho2", "theta2"})
      a.push_back({name, t, {q.n}});
    a.push_back({"out", t, {q.n}, true});
    return a;
  };
  w.data.fill = [](const point& p, const array_set& a) {
    if (p.get_text("dtype") == "float64") fill_arrays<double>(params(p), a);
    else fill_arrays<float>(params(p), a);
  };
  w.data.check = [](const point& p, const array_set& a) {
    return p.get_text("dtype") == "float64" ? check_arrays<double>(params(p), a) : check_arrays<float>(params(p), a);
  };
  w.variants = {
      typed<serial_run>("serial", variant_kind::serial, "plain loop (libm)"),
      typed<threads_run>("threads", variant_kind::threads,
                         "chunks of elements shared out to a persistent team of threads"),
  };
#if SPEEDLAB_PLUGIN_HAS_CUDA
  auto lesson = typed<cuda_lesson_run>(
      "cuda-lesson", variant_kind::cuda,
      "as the lessons' ufunc on host arrays: cudaMalloc + copy in and out every call, one thread per element");
  lesson.work = copied_every_repetition(base_work);
  auto resident = typed<cuda_run>("cuda", variant_kind::cuda,
                                  "device-resident data; 16-byte loads, grid-stride kernel filling every SM");
  for (variant_spec* v : {&lesson, &resident}) w.variants.push_back(std::move(*v));
#endif
  return w;
}

} // namespace
} // namespace speedlab::plugins::transcendental

SPEEDLAB_REGISTER_WORKLOAD(speedlab::plugins::transcendental::describe)
