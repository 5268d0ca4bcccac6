// speedlab plugin SDK: the one header a workload plugin includes.
//
// Language and dependencies: C++17 or later (plain .cpp files and .cu files compiled by
// nvcc alike); only the C++ standard library. No Boost, no CUDA: CUDA helpers are in
// <speedlab/cuda.hpp>. Build plugins with CMake: find_package(speedlab) and
// speedlab_add_plugin(NAME SOURCES ... [CUDA_SOURCES ...]) set the file name, symbol
// visibility, CUDA flags and link the shared CUDA runtime (CUDA::cudart), which speedlab
// itself uses: one runtime per process, so CUPTI sees every call. docs/plugin-guide.md is the
// author's guide; `speedlab new NAME [--cuda]` writes a ready project.
//
// A plugin describes one problem (a *workload*), its typed parameters, its work model and
// its *variants* (serial, threads, cuda). speedlab loads the plugin, runs the variants over
// the requested parameter points, times every phase itself (and wraps each in an NVTX range
// of domain "speedlab"), validates the results and reports.
//
// Usage (a complete plugin):
//
//   #include <speedlab/plugin.hpp>
//
//   namespace {
//   class scale_serial final : public speedlab::variant_run {
//   public:
//     explicit scale_serial(const speedlab::point& p) : m_n(p.get_int("n")) {}
//     void setup() override { m_x.assign(m_n, 1.0f); m_y.resize(m_n); }
//     void compute() override { for (std::size_t i = 0; i < m_n; ++i) m_y[i] = 2 * m_x[i]; }
//     speedlab::validation validate() override {
//       for (float v : m_y) if (v != 2.0f) return speedlab::validation::fail("y != 2x");
//       return speedlab::validation::pass();
//     }
//   private:
//     std::size_t m_n; std::vector<float> m_x, m_y;
//   };
//
//   speedlab::workload_info describe() {
//     speedlab::workload_info w{"scale", "y = 2x over n floats"};
//     w.parameters = {speedlab::param_spec::integer("n", "elements", 1 << 20, "2^10..2^24").as_size_axis()};
//     w.work = [](const speedlab::point& p) {
//       const double n = double(p.get_int("n"));
//       speedlab::work_model m;          // C++17: no designated initializers in .cu files
//       m.bytes_read = 4 * n; m.bytes_written = 4 * n; m.flops = n;
//       return m;
//     };
//     w.variants = {speedlab::variant_spec::make<scale_serial>("serial", speedlab::variant_kind::serial,
//                                                                "plain loop")};
//     return w;
//   }
//   } // namespace
//
//   SPEEDLAB_REGISTER_WORKLOAD(describe)
//
// The contract a variant keeps:
// - Phases are called in this order for one parameter point, in the process that measures
//   it (a child of speedlab unless --no-isolate):
//     constructor, setup, then per repetition transfer_in, compute, transfer_out; validate
//     after the first and after the last measured repetition; teardown; destructor.
//   Warm-up repetitions run the same three phases first and are not kept.
// - Timed: one repetition (transfer_in + compute + transfer_out) is what speedlab times,
//   and the time split (kernel, copies, sync, host) covers exactly that window. Not timed,
//   and outside the split: constructor, setup, validate, teardown. A cudaMemcpy inside
//   validate() (to bring a result back to check it) costs nothing in the report.
// - A phase returns only when its work is complete: CUDA variants synchronize
//   (cudaDeviceSynchronize or a stream sync) before returning, so the host clock is honest.
// - Failures are reported by throwing (std::exception); speedlab records the message.
// - validate() compares against an independent reference; it is never timed.
//
// A workload may also describe its inputs and its check apart from any variant
// (workload_info::data, below): then variants written outside C++ (Python, run by
// speedlab's bridge) get the same inputs and the same validation as the C++ ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <speedlab/variant_kind.hpp> // variant_kind: serial, threads, cuda

// The ABI version of this SDK. speedlab refuses a plugin built against another value,
// because the types below cross the shared-library boundary by layout. 3: size axes,
// constraints and the example flag. 4: workload_data (the inputs and outputs Python
// variants share).
#define SPEEDLAB_PLUGIN_ABI_VERSION 4

#if defined(SPEEDLAB_SDK_ABI_EXPECTED) && SPEEDLAB_SDK_ABI_EXPECTED != SPEEDLAB_PLUGIN_ABI_VERSION
#error "speedlab: these SDK headers and the speedlab CMake package come from different installs"
#endif

namespace speedlab {

inline constexpr int plugin_abi_version = SPEEDLAB_PLUGIN_ABI_VERSION;

enum class param_type { integer, real, text };

// One declared parameter. `default_value` is used when the suite says nothing;
// `default_sweep` (speedlab's sweep syntax, e.g. "2^10..2^28") is the range worth
// exploring: `speedlab list` shows it, and a suite or `--param name=2^10..2^28` runs it.
// `size_axis`: the parameter sizes the problem (n, rows, cols, ...). The analysis fits cost
// against each size axis with the other parameters fixed (and, with several axes, against
// their product) and finds crossovers along each; reports sort points by it. A workload
// with no declared axis falls back to the first of n, size, M, samples, elements.
struct param_spec {
  std::string name;
  std::string description;
  param_type type = param_type::integer;
  std::string default_value;
  std::string default_sweep;
  std::vector<std::string> choices; // for text parameters: the allowed values
  std::optional<double> min_value;  // inclusive bounds checked before any run
  std::optional<double> max_value;
  bool size_axis = false;

  // Marks this parameter as a size axis: param_spec::integer("rows", ...).as_size_axis().
  param_spec as_size_axis() const {
    param_spec copy = *this;
    copy.size_axis = true;
    return copy;
  }

  static param_spec integer(std::string name, std::string description, std::int64_t def,
                            std::string sweep = {}, std::optional<double> min = 1,
                            std::optional<double> max = std::nullopt) {
    return {std::move(name), std::move(description), param_type::integer, std::to_string(def),
            std::move(sweep), {}, min, max, false};
  }
  static param_spec real(std::string name, std::string description, double def,
                         std::string sweep = {}, std::optional<double> min = std::nullopt,
                         std::optional<double> max = std::nullopt) {
    return {std::move(name), std::move(description), param_type::real, format_real(def),
            std::move(sweep), {}, min, max, false};
  }
  static param_spec text(std::string name, std::string description, std::string def,
                         std::vector<std::string> choices) {
    return {std::move(name), std::move(description), param_type::text, std::move(def), {},
            std::move(choices), std::nullopt, std::nullopt, false};
  }

private:
  static std::string format_real(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

// The parameter values of one measured point, already checked against the specs.
class point {
public:
  point() = default;
  explicit point(std::map<std::string, std::string> values) : m_values(std::move(values)) {}

  const std::string& get_text(const std::string& name) const {
    auto it = m_values.find(name);
    if (it == m_values.end()) throw std::out_of_range("speedlab: no parameter '" + name + "'");
    return it->second;
  }
  std::int64_t get_int(const std::string& name) const {
    return static_cast<std::int64_t>(std::stod(get_text(name)));
  }
  double get_real(const std::string& name) const { return std::stod(get_text(name)); }
  bool has(const std::string& name) const { return m_values.count(name) != 0; }
  const std::map<std::string, std::string>& values() const { return m_values; }

private:
  std::map<std::string, std::string> m_values;
};

// What one repetition must do at the least, for throughput and roofline placement.
// Bytes count each input read once and each output written once through the memory of
// the processor that computes; host<->device bytes are what a repetition copies.
// Declare the problem's minimum in workload_info::work, the same for every variant, so
// their throughputs compare. A variant that knowingly moves more (reads a halo twice, copies
// its inputs every repetition) keeps the minimum for bytes_read/bytes_written/flops and
// overrides only what it adds that the minimum lacks, in variant_spec::work (host<->device
// bytes, typically): its distance from the roof then shows what the extra traffic costs.
struct work_model {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;            // floating-point operations (0 if the problem is not FP-bound)
  double items = 0;            // problem elements (for items/s where flops mean little)
  double host_to_device_bytes = 0;
  double device_to_host_bytes = 0;
  bool fp64 = false;           // arithmetic is double precision (selects the FP64 roof)
};

// The work of a variant that copies its inputs to the device and its outputs back in every
// repetition (cudaMalloc + cudaMemcpy per call, as many lessons do): the same minimum as
// `base`, plus bytes_read host->device and bytes_written device->host. For variant_spec::work.
inline std::function<work_model(const point&)> copied_every_repetition(std::function<work_model(const point&)> base) {
  return [base = std::move(base)](const point& p) {
    work_model m = base(p);
    m.host_to_device_bytes = m.bytes_read;
    m.device_to_host_bytes = m.bytes_written;
    return m;
  };
}

// The outcome of validate(). Tolerances are the plugin's: compare floating-point results
// with a relative error bound that the arithmetic justifies (a sum of n floats in another
// order differs by about n * 2^-24 relative), report the largest error seen in max_error,
// and say in the message what was compared and the bound ("max rel err 3e-7 <= 1e-5").
struct validation {
  bool ok = false;
  std::string message;      // what was checked and what was found
  double max_error = 0;     // largest error seen, in the check's own unit

  static validation pass(std::string message = "ok", double max_error = 0) {
    return {true, std::move(message), max_error};
  }
  static validation fail(std::string message, double max_error = 0) {
    return {false, std::move(message), max_error};
  }
};

// Facts a variant may use: how many host threads it should use, which device, and hooks
// to mark ranges of its own on speedlab's timeline (see scoped_range).
struct run_context {
  int threads = 1;
  int device = 0;
  void (*range_push)(const char* name) = nullptr; // set by speedlab; null: ranges are no-ops
  void (*range_pop)() = nullptr;
  // The user asked for the variant's own timings (`self_timing: true`): a variant that can
  // time its work itself (cudaEvents around its kernel, say) does so and reports each
  // repetition's figure through report_timing; speedlab shows it beside what its profiler
  // measured for the same work. Off by default: the timers cost a little every repetition.
  bool self_timing = false;
  void (*timing_sink)(const char* name, double ns) = nullptr;
};

// Reports a time the variant measured itself in the current repetition, under a name the
// report compares with the profiler: "kernel" (kernel time), "h2d", "d2h" (copies); any
// other name is shown as it is. Call it once per name per repetition, from any phase.
inline void report_timing(const run_context& context, const char* name, double nanoseconds) {
  if (context.timing_sink) context.timing_sink(name, nanoseconds);
}

// A range of the plugin's own inside a phase ("copy tile", "final reduction"). speedlab
// records it as an NVTX range of its executable, so it shows in speedlab's trace and under
// `nsys profile` alike (a plugin's direct NVTX calls reach nsys, but not speedlab's trace).
//   speedlab::scoped_range r(m_context, "pack inputs");
class scoped_range {
public:
  scoped_range(const run_context& context, const char* name) : m_pop(context.range_pop) {
    if (context.range_push) context.range_push(name);
  }
  ~scoped_range() {
    if (m_pop) m_pop();
  }
  scoped_range(const scoped_range&) = delete;
  scoped_range& operator=(const scoped_range&) = delete;

private:
  void (*m_pop)();
};

// One variant's run at one parameter point. speedlab constructs it in the process that
// measures it, calls the phases, and destroys it.
class variant_run {
public:
  virtual ~variant_run() = default;
  virtual void setup() {}
  virtual void transfer_in() {}
  virtual void compute() = 0;
  virtual void transfer_out() {}
  virtual validation validate() = 0;
  virtual void teardown() {}
};

using variant_factory =
    std::function<std::unique_ptr<variant_run>(const point&, const run_context&)>;

struct variant_spec {
  std::string name;
  std::string language = "c++"; // "python" for the bridge's variants (python_variants.hpp)
  variant_kind kind = variant_kind::serial;
  std::string description;
  variant_factory create;
  // Empty when the variant can run here, else the reason it cannot (no CUDA device, ...).
  // Called by `speedlab list` in the speedlab process and before each point in the process
  // that measures it; it may call the CUDA runtime (cudaGetDeviceCount: speedlab::cuda::
  // unavailable_reason in <speedlab/cuda.hpp>) but must not launch work or throw.
  std::function<std::string()> unavailable_reason;
  // Overrides the workload's work model (a variant that copies more, say). Optional.
  std::function<work_model(const point&)> work;
  // Marks a variant that is wrong on purpose (the racy histogram): validation must flag it.
  bool expected_invalid = false;

  template <class Run>
  static variant_spec make(std::string name, variant_kind kind, std::string description) {
    variant_spec v;
    v.name = std::move(name);
    v.kind = kind;
    v.description = std::move(description);
    v.create = [](const point& p, const run_context& c) -> std::unique_ptr<variant_run> {
      if constexpr (std::is_constructible_v<Run, const point&, const run_context&>)
        return std::make_unique<Run>(p, c);
      else
        return std::make_unique<Run>(p);
    };
    return v;
  }
};

// A limit between parameters that no single parameter's bounds express (rows x cols at most
// 2^28). speedlab checks every constraint when it plans the points, before any run, and
// refuses the suite with the message, naming the point. check returns "" when the point is
// allowed, else why not.
struct constraint {
  std::string description; // shown by `speedlab list`
  std::function<std::string(const point&)> check;

  // The product of integer parameters `names` at most `limit`.
  static constraint product_at_most(std::vector<std::string> names, double limit) {
    std::string text;
    for (const auto& n : names) text += (text.empty() ? "" : " x ") + n;
    text += " <= " + std::to_string(static_cast<long long>(limit));
    constraint c;
    c.description = text;
    c.check = [names, limit, text](const point& p) -> std::string {
      double product = 1;
      for (const auto& n : names) product *= static_cast<double>(p.get_int(n));
      if (product <= limit) return {};
      return "needs " + text + " (the product is " + std::to_string(static_cast<long long>(product)) + ")";
    };
    return c;
  }
};

// ---- A workload's data apart from its variants ----------------------------------------
// The inputs a point's variants read and the outputs they write, as named arrays, with the
// functions that fill the inputs and check the outputs. speedlab allocates the arrays
// (in memory it shares with a Python process), calls fill, lets the variant compute, and
// calls check: the same inputs and the same tolerances as the C++ variants'.
//
//   w.data.arrays = [](const point& p) {
//     const std::size_t n = p.get_int("n");
//     return std::vector<array_spec>{{"x", element_type::f32, {n}}, {"y", element_type::f32, {n}, true}};
//   };
//   w.data.fill = [](const point& p, const array_set& a) { fill_x(a.get<float>("x"), a.count("x")); };
//   w.data.check = [](const point& p, const array_set& a) { return check_y(a.get<const float>("y"), ...); };

enum class element_type { f32, f64, i32, u32, i64, u64 };

// NumPy's name of the type ("float32"), which is also how the bridge writes it.
inline const char* to_string(element_type t) {
  switch (t) {
  case element_type::f32: return "float32";
  case element_type::f64: return "float64";
  case element_type::i32: return "int32";
  case element_type::u32: return "uint32";
  case element_type::i64: return "int64";
  case element_type::u64: return "uint64";
  }
  return "unknown";
}

inline std::size_t element_size(element_type t) {
  return t == element_type::f32 || t == element_type::i32 || t == element_type::u32 ? 4 : 8;
}

template <class T>
constexpr std::optional<element_type> element_type_of() {
  using U = std::remove_const_t<T>;
  if constexpr (std::is_same_v<U, float>) return element_type::f32;
  else if constexpr (std::is_same_v<U, double>) return element_type::f64;
  else if constexpr (std::is_same_v<U, std::int32_t>) return element_type::i32;
  else if constexpr (std::is_same_v<U, std::uint32_t>) return element_type::u32;
  else if constexpr (std::is_same_v<U, std::int64_t>) return element_type::i64;
  else if constexpr (std::is_same_v<U, std::uint64_t>) return element_type::u64;
  else return std::nullopt;
}

struct array_spec {
  std::string name;
  element_type type = element_type::f32;
  std::vector<std::size_t> shape; // C order; {1} for a scalar result
  bool output = false;            // written by the variant; every other array is an input

  std::size_t count() const {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
  }
  std::size_t bytes() const { return count() * element_size(type); }
};

// The arrays of one point, by name, in memory speedlab owns. get<T> checks the name and
// the element type, so a fill or check that asks for the wrong one fails with a message.
class array_set {
public:
  void add(array_spec spec, void* data) { m_arrays.push_back({std::move(spec), data}); }

  template <class T>
  T* get(const std::string& name) const {
    const entry& e = find(name);
    if (element_type_of<T>() != e.spec.type)
      throw std::invalid_argument("speedlab: array '" + name + "' holds " + to_string(e.spec.type));
    return static_cast<T*>(e.data);
  }
  std::size_t count(const std::string& name) const { return find(name).spec.count(); }
  bool has(const std::string& name) const {
    for (const auto& e : m_arrays)
      if (e.spec.name == name) return true;
    return false;
  }

private:
  struct entry {
    array_spec spec;
    void* data;
  };
  const entry& find(const std::string& name) const {
    for (const auto& e : m_arrays)
      if (e.spec.name == name) return e;
    throw std::out_of_range("speedlab: no array '" + name + "'");
  }
  std::vector<entry> m_arrays;
};

struct workload_data {
  std::function<std::vector<array_spec>(const point&)> arrays; // every input and output
  std::function<void(const point&, const array_set&)> fill;    // writes the inputs
  std::function<validation(const point&, const array_set&)> check; // reads inputs and outputs
  bool available() const { return arrays && fill && check; }
};

struct workload_info {
  std::string name;
  std::string description;
  std::vector<param_spec> parameters;
  std::vector<variant_spec> variants;
  std::function<work_model(const point&)> work;
  std::string lesson; // where the problem comes from, shown in reports
  std::vector<constraint> constraints;
  bool example = false; // an example for plugin authors: `speedlab list` marks it so
  workload_data data; // optional: lets variants outside C++ (Python) run on the same inputs

  workload_info() = default;
  workload_info(std::string n, std::string d) : name(std::move(n)), description(std::move(d)) {}
};

// What a plugin exports: a list, so one library may hold several workloads.
using describe_function = std::vector<workload_info>();

} // namespace speedlab

// Registration: exports the ABI version and the describe function as two data symbols,
// each holding the address of a function (the layout Boost.DLL's import_alias reads; no
// Boost header is needed here), and a third, speedlab_build_flags, saying how this file was
// compiled (an extra symbol rather than an ABI change: plugins built before it simply lack
// it, and speedlab reads "unknown"). Use once per plugin library; FN returns a
// workload_info or a std::vector of them.
namespace speedlab::detail {
inline std::vector<workload_info> as_list(workload_info w) { return {std::move(w)}; }
inline std::vector<workload_info> as_list(std::vector<workload_info> w) { return w; }

// How the file that registers the workloads was compiled: bit 0 with optimization
// (__OPTIMIZE__, any -O above -O0), bit 1 with NDEBUG, bit 2 always (recorded). speedlab warns
// when a plugin is not optimized: its timings, and every speedup over them, mislead. A
// namespace-scope constexpr has internal linkage, so each file keeps its own value.
constexpr int build_flags_of_this_file = 4
#if defined(__OPTIMIZE__)
                                         | 1
#endif
#if defined(NDEBUG)
                                         | 2
#endif
    ;
} // namespace speedlab::detail

#define SPEEDLAB_REGISTER_WORKLOAD(FN)                                                          \
  namespace speedlab_plugin_export {                                                            \
  inline std::vector<::speedlab::workload_info> speedlab_describe_impl() {                      \
    return ::speedlab::detail::as_list(FN());                                                   \
  }                                                                                             \
  inline int speedlab_abi_impl() { return SPEEDLAB_PLUGIN_ABI_VERSION; }                        \
  inline int speedlab_build_flags_impl() { return ::speedlab::detail::build_flags_of_this_file; } \
  }                                                                                             \
  extern "C" __attribute__((visibility("default"))) const void* speedlab_describe;              \
  extern "C" __attribute__((visibility("default"))) const void* speedlab_abi_version;           \
  extern "C" __attribute__((visibility("default"))) const void* speedlab_build_flags;           \
  const void* speedlab_describe =                                                               \
      reinterpret_cast<const void*>(&speedlab_plugin_export::speedlab_describe_impl);           \
  const void* speedlab_abi_version = reinterpret_cast<const void*>(&speedlab_plugin_export::speedlab_abi_impl); \
  const void* speedlab_build_flags =                                                            \
      reinterpret_cast<const void*>(&speedlab_plugin_export::speedlab_build_flags_impl);
