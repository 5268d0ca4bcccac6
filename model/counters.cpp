#include "model/counters.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "model/json_support.hpp"
#include "model/statistics.hpp"
#include "model/strings.hpp"

namespace speedlab::counters {

const std::vector<pipe_metric>& pipe_metrics() {
  static const std::vector<pipe_metric> pipes{
      {"sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", "FMA (FP32)"},
      {"sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", "ALU (integer, logic)"},
      {"sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", "FP64"},
      {"sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "XU (special functions)"},
      {"sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "LSU (loads, stores)"},
      {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "Tensor"},
  };
  return pipes;
}

const std::vector<unit_load>& bound_units() {
  // Nsight Compute's names: SOL "DRAM Throughput", "L2 Cache Throughput", "L1/TEX Cache
  // Throughput"; ComputeWorkloadAnalysis "Issue Slots Busy" and its pipe utilization (% of
  // peak instructions executed).
  static const std::vector<unit_load> units = [] {
    std::vector<unit_load> u{{"DRAM", true, 0, metric::dram_throughput},
                             {"L2", true, 0, metric::l2_throughput},
                             {"L1/shared", true, 0, metric::l1_throughput}};
    for (const auto& p : pipe_metrics()) {
      std::string name = p.pipe;
      name = name.substr(0, name.find(" (")) + " pipe";
      u.push_back({name, name == "LSU pipe", 0, p.metric});
    }
    u.push_back({"issue slots", false, 0, metric::issue_active});
    return u;
  }();
  return units;
}

std::vector<std::string> bound_metrics() {
  std::vector<std::string> m;
  for (const auto& u : bound_units()) m.push_back(u.metric);
  return m;
}

std::vector<unit_load> unit_loads(const std::map<std::string, double>& metrics) {
  std::vector<unit_load> out;
  for (const auto& u : bound_units())
    if (auto it = metrics.find(u.metric); it != metrics.end()) {
      out.push_back(u);
      out.back().pct = it->second;
    }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pct > b.pct; });
  return out;
}

std::string demangled_name(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : name;
}

namespace {

std::vector<std::string> default_set() {
  using namespace metric;
  std::vector<std::string> m{duration, dram_read, dram_write, warps_active, ffma, fadd, fmul, dfma, dadd, dmul};
  for (auto& b : bound_metrics()) m.push_back(std::move(b));
  return m;
}

} // namespace

std::vector<std::string> metric_set(const std::string& name) {
  using namespace metric;
  if (name == "dram") return {metric::duration, metric::dram_read, metric::dram_write};
  if (name == "default") return default_set();
  if (name == "full") {
    auto m = default_set();
    for (const char* x : {hfma, hadd, hmul, l2_bytes, l2_hit_rate, l1_bytes, ld_sectors, ld_requests, st_sectors, st_requests,
                          sm_throughput, memory_throughput})
      m.emplace_back(x);
    return m;
  }
  // A list of metric names: what has a dot and no spaces is taken as one.
  if (name.find('.') != std::string::npos) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= name.size()) {
      const std::size_t comma = std::min(name.find(',', start), name.size());
      std::string m = trim(name.substr(start, comma - start));
      if (m.empty() || m.find(' ') != std::string::npos || m.find('.') == std::string::npos)
        throw std::invalid_argument("metric list '" + name + "': '" + m + "' is not a metric name (e.g. dram__bytes_read.sum)");
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(std::move(m));
      start = comma + 1;
    }
    return out;
  }
  throw std::invalid_argument("unknown metric set '" + name +
                              "' (valid: dram, default, full, or a comma-separated list of metric names)");
}

namespace {

std::optional<double> get(const std::map<std::string, double>& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// FMA counts as two operations; the sum is absent only when none of the three was read.
std::optional<double> flops_of(const std::map<std::string, double>& m, const char* fma, const char* add,
                               const char* mul) {
  const auto f = get(m, fma), a = get(m, add), u = get(m, mul);
  if (!f && !a && !u) return std::nullopt;
  return 2 * f.value_or(0) + a.value_or(0) + u.value_or(0);
}

std::optional<double> ratio(std::optional<double> num, std::optional<double> den) {
  if (!num || !den || !(*den > 0)) return std::nullopt;
  return *num / *den;
}

} // namespace

std::optional<double> counter_figures::dram_bytes() const {
  if (!dram_read_bytes && !dram_write_bytes) return std::nullopt;
  return dram_read_bytes.value_or(0) + dram_write_bytes.value_or(0);
}

bool counter_figures::fp64_dominant() const { return flops_fp64.value_or(0) > flops_fp32.value_or(0); }

std::optional<double> counter_figures::flops() const { return fp64_dominant() ? flops_fp64 : flops_fp32; }

counter_figures derive(const std::map<std::string, double>& m) {
  using namespace metric;
  counter_figures f;
  f.duration_ns = get(m, duration);
  f.dram_read_bytes = get(m, dram_read);
  f.dram_write_bytes = get(m, dram_write);
  f.l2_bytes = get(m, l2_bytes);
  f.l1_bytes = get(m, l1_bytes);
  f.flops_fp32 = flops_of(m, ffma, fadd, fmul);
  f.flops_fp64 = flops_of(m, dfma, dadd, dmul);
  f.flops_fp16 = flops_of(m, hfma, hadd, hmul);
  f.load_sectors_per_request = ratio(get(m, ld_sectors), get(m, ld_requests));
  f.store_sectors_per_request = ratio(get(m, st_sectors), get(m, st_requests));
  if (auto w = get(m, warps_active)) f.achieved_occupancy = *w / 100;
  f.sm_throughput_pct = get(m, sm_throughput);
  f.memory_throughput_pct = get(m, memory_throughput);
  f.dram_throughput_pct = get(m, dram_throughput);
  f.l2_hit_rate_pct = get(m, l2_hit_rate);
  f.issue_active_pct = get(m, issue_active);
  for (const auto& p : pipe_metrics())
    if (auto v = get(m, p.metric); v && (!f.busiest_pipe_pct || *v > *f.busiest_pipe_pct)) {
      f.busiest_pipe_pct = v;
      f.busiest_pipe = p.pipe;
    }
  f.units = unit_loads(m);
  return f;
}

std::vector<kernel_counters> per_distinct_kernel(const std::vector<kernel_counters>& launches) {
  using key = std::tuple<std::string, std::vector<std::uint32_t>, std::vector<std::uint32_t>>;
  std::vector<key> order;
  std::map<key, std::vector<const kernel_counters*>> groups;
  for (const auto& k : launches) {
    key id{k.kernel, k.grid, k.block};
    auto& g = groups[id];
    if (g.empty()) order.push_back(id);
    g.push_back(&k);
  }
  std::vector<kernel_counters> out;
  for (const auto& id : order) {
    const auto& g = groups[id];
    kernel_counters k = *g.front();
    for (auto& [name, value] : k.metrics) {
      std::vector<double> v;
      for (const auto* l : g)
        if (auto it = l->metrics.find(name); it != l->metrics.end()) v.push_back(it->second);
      value = stats::quantile(std::move(v), 0.5);
    }
    out.push_back(std::move(k));
  }
  return out;
}

SPEEDLAB_JSON_FIELDS(unit_load, unit, memory, pct, metric)
SPEEDLAB_JSON_FIELDS(kernel_counters, kernel, launch, grid, block, metrics)
SPEEDLAB_JSON_FIELDS(counter_pass, metric_set, metrics, chip, passes, per_kernel_limit, launches, skipped,
                     dropped_ranges, pass_wall_ns, setup_wall_ns, replay, kernels)

} // namespace speedlab::counters
