// Hardware counters of kernel launches, as the counters backend (profilers/counters) reads
// them with the CUPTI range profiler: the metric names (Nsight Compute's), the named metric
// sets, what one counters pass recorded, and the figures derived from raw metric values
// (FLOPs from instruction counts, sectors per request, the busiest pipe). No CUDA here:
// analysis and the tests evaluate recorded values without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace speedlab::counters {

// Metric names (the strings cuptiProfilerHostConfigAddMetrics and ncu --metrics take).
namespace metric {
inline constexpr const char* duration = "gpu__time_duration.sum";                 // ns
inline constexpr const char* dram_read = "dram__bytes_read.sum";                   // bytes
inline constexpr const char* dram_write = "dram__bytes_write.sum";                 // bytes
inline constexpr const char* warps_active = "sm__warps_active.avg.pct_of_peak_sustained_active"; // %
inline constexpr const char* ffma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr const char* fadd = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr const char* fmul = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr const char* dfma = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr const char* dadd = "sm__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr const char* dmul = "sm__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr const char* hfma = "sm__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr const char* hadd = "sm__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr const char* hmul = "sm__sass_thread_inst_executed_op_hmul_pred_on.sum";
// The fuller set.
inline constexpr const char* l2_bytes = "lts__t_bytes.sum";
inline constexpr const char* l2_hit_rate = "lts__t_sector_hit_rate.pct";
inline constexpr const char* l1_bytes = "l1tex__t_bytes.sum";
inline constexpr const char* ld_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* ld_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* st_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char* st_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char* sm_throughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* memory_throughput = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* dram_throughput = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* issue_active = "sm__inst_issued.avg.pct_of_peak_sustained_active";
// The units of Nsight Compute's speed-of-light breakdown the bound reads (the pipes are in
// pipe_metrics()).
inline constexpr const char* l2_throughput = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* l1_throughput = "l1tex__throughput.avg.pct_of_peak_sustained_active";
} // namespace metric

// One pipe's utilization metric and the name a reader knows it by.
struct pipe_metric {
  const char* metric;
  const char* pipe;
};
// The pipes the fuller set reads (% of peak while the SM is active).
const std::vector<pipe_metric>& pipe_metrics();

// One unit of the bound: a memory level, an SM pipe or the issue slots, and how busy the
// counters found it (% of its peak, as Nsight Compute's speed-of-light breakdown and pipe
// utilization chart give it).
struct unit_load {
  std::string unit;   // "DRAM", "L2", "L1/shared", "ALU pipe", ..., "issue slots"
  bool memory = false; // a memory level or the load/store pipe: a busiest one means memory-bound
  double pct = 0;
  std::string metric; // the metric it was read from
};
// The units the bound reads and their metrics, memory levels first.
const std::vector<unit_load>& bound_units();
// The metrics the bound needs (in the default set): the throughput of each unit.
std::vector<std::string> bound_metrics();
// Every unit the metrics read, busiest first (ties: the order of bound_units()); empty when
// none was read (a metric set without utilization metrics).
std::vector<unit_load> unit_loads(const std::map<std::string, double>& metrics);

// A kernel's name as a person reads it: demangled (`softmax_naive_kernel(float const*, ...)`
// for `_Z...`), the name itself when it is not a mangled C++ name.
std::string demangled_name(const std::string& name);

// Named metric sets: "dram" (duration, DRAM bytes read and written: the cheapest),
// "default" (those, achieved occupancy, FP32/FP64 instruction counts and the throughput of
// each unit of the bound: DRAM, L2, L1, the pipes, issue), "full" (adds FP16, L2/L1 traffic,
// sectors per request, the SM and memory throughput summaries). Each metric that needs its
// own pass costs one more replay of every profiled kernel (counter_pass::passes).
// The metrics of a set; a comma-separated list of metric names is its own set.
// Throws std::invalid_argument naming the valid sets for an unknown name.
std::vector<std::string> metric_set(const std::string& name);

// One profiled kernel launch: the range CUPTI measured.
struct kernel_counters {
  std::string kernel;                    // the range's name (the kernel function)
  std::uint64_t launch = 0;              // index among the launches of the counters pass
  std::vector<std::uint32_t> grid, block; // x, y, z; empty when the launch was not seen
  std::map<std::string, double> metrics;  // metric name -> value as CUPTI evaluated it
};

// What one counters pass of a point recorded.
struct counter_pass {
  static constexpr const char* section_key = "counters"; // its section of a point (result_sections.hpp)
  std::string metric_set;                // as chosen ("default", "full" or a list)
  std::vector<std::string> metrics;
  std::string chip;                      // e.g. GH100
  std::size_t passes = 0;                // replays of each kernel the set needs
  std::size_t per_kernel_limit = 0;      // K: launches profiled per (kernel, grid, block)
  std::size_t launches = 0;              // kernel launches seen in the pass
  std::size_t skipped = 0;               // launches beyond K, not profiled
  std::size_t dropped_ranges = 0;        // ranges CUPTI could not store
  double pass_wall_ns = 0;               // the pass's wall time, replays included
  double setup_wall_ns = 0;              // configuring the range profiler before the pass
  std::string replay = "kernel";         // CUPTI's replay mode
  std::vector<kernel_counters> kernels;
};

// Figures derived from one kernel's metric values; absent where a metric was not read.
struct counter_figures {
  std::optional<double> duration_ns, dram_read_bytes, dram_write_bytes, l2_bytes, l1_bytes;
  std::optional<double> flops_fp32, flops_fp64, flops_fp16; // an FMA counts twice
  std::optional<double> load_sectors_per_request, store_sectors_per_request;
  std::optional<double> achieved_occupancy;                 // 0..1 (active warps / max)
  std::optional<double> sm_throughput_pct, memory_throughput_pct, dram_throughput_pct;
  std::optional<double> l2_hit_rate_pct, issue_active_pct;
  std::string busiest_pipe;                                 // empty without pipe metrics
  std::optional<double> busiest_pipe_pct;
  std::vector<unit_load> units; // the bound's units read, busiest first (unit_loads)

  // The busiest unit: the kernel's bound by the counters; null without utilization metrics.
  const unit_load* bound() const { return units.empty() ? nullptr : &units.front(); }

  std::optional<double> dram_bytes() const;
  // FP64 when the kernel did more FP64 than FP32 work.
  bool fp64_dominant() const;
  std::optional<double> flops() const; // of the dominant precision
};

counter_figures derive(const std::map<std::string, double>& metrics);

// One figure per distinct (kernel, grid, block): the median of each metric over the
// profiled launches of that key, in first-launch order.
std::vector<kernel_counters> per_distinct_kernel(const std::vector<kernel_counters>& launches);

void to_json(nlohmann::json& j, const unit_load& u);
void from_json(const nlohmann::json& j, unit_load& u);
void to_json(nlohmann::json& j, const kernel_counters& k);
void from_json(const nlohmann::json& j, kernel_counters& k);
void to_json(nlohmann::json& j, const counter_pass& p);
void from_json(const nlohmann::json& j, counter_pass& p);

} // namespace speedlab::counters
