// What a whole profiled program did (`speedlab profile -- PROGRAM`): each process's time
// split over its lifetime, kernels by name, the program's own NVTX ranges, streams, GPU idle
// gaps and what the host was inside meanwhile, allocations and synchronous pageable copies,
// and the findings of the rules (rules.hpp: a process's point with its activity).
//
//   std::vector<analysis::process_summary> summaries;
//   for (auto& p : processes) summaries.push_back(analysis::summarize_process(p)); // one at a time
//   analysis::program_analysis a = analysis::analyze_program(std::move(summaries), facts, device);
//
// summarize_process keeps only tables and counts, never the records, so a program of many
// large processes is analysed with one process's trace in memory at a time. Each process is
// also a point (process_point): one repetition, its lifetime, so the run reporters and the
// trace exporters show it unchanged.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/activity.hpp"
#include "analysis/analysis.hpp"
#include "analysis/critical_path.hpp"
#include "analysis/rank_analysis.hpp"
#include "analysis/trace_summary.hpp"
#include "model/profile.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

// Facts about the profiled program as a whole (the profile command knows them).
struct program_facts {
  std::vector<std::string> command_line; // argv of PROGRAM
  std::string started_at;                // ISO-8601 UTC
  std::string hostname, speedlab_version;
  double wall_s = 0;
  std::optional<int> exit_code;          // PROGRAM's (128+N when killed by signal N)
  std::vector<std::string> notes;        // another CUPTI client present, ...
};

struct program_options {
  double gap_min_ns = 100e3;            // GPU idle shorter than this is no gap (100 us)
  std::set<std::string> disabled_rules; // program rules and point rules, by name
};

struct program_kernel {
  std::string name;
  std::size_t launches = 0, processes = 0;
  double total_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0;
  std::array<std::int32_t, 3> grid{1, 1, 1}, block{1, 1, 1}; // of the longest launch
  double share = 0;                     // of all kernel time in the program
};

struct program_range {
  std::string domain, name;
  std::size_t count = 0, kernels = 0;   // kernels: launches that started inside
  double total_ns = 0;                  // sum of the ranges' durations
  double gpu_ns = 0;                    // GPU busy (kernels, copies, memsets) inside them
  // What the ranges launched, whenever the GPU ran it (the GPU runs behind the host: work
  // launched in a range often runs after it ends): the kernels, copies and memsets whose call
  // started while a range was open, on any thread, by correlation id; their summed duration.
  std::size_t launched_kernels = 0;
  double launched_gpu_ns = 0;
  // Launch calls recorded in sampled windows only (profile::launch_calls_sampled): how many of
  // the `count` ranges lay wholly inside a window (every launch call in them was recorded);
  // the launched figures are theirs scaled by count / launched_measured, estimates, and
  // unknown when it is 0. Absent when every launch call was recorded.
  std::optional<std::size_t> launched_measured;
};

// The CUDA API time a split was given for the launch calls outside the sampled windows,
// moved there from host code (analysis/sampled_split.hpp): the launch calls' share of the
// windows' time neither GPU busy nor waiting, applied to that time outside them; a bootstrap
// 95% interval over the windows.
struct split_estimate {
  std::size_t windows = 0;          // windows inside the split's span
  std::size_t unrecorded_calls = 0; // launch calls not in the trace (distinct correlation ids)
  double launch_share = 0;          // the classifying thread's launch calls / (CUDA API + host code) in the windows
  double moved_ns = 0, low_ns = 0, high_ns = 0;
};

// A process whose launch calls were recorded in sampled windows only (the stream's
// launch_windows, launch_mode::sampled): the windows, and the kernels whose
// launch call is in the trace against all, the fraction by which launch-call counts and
// times are scaled up to all launches.
struct launch_sampling {
  std::size_t windows = 0;
  double covered_ns = 0; // the windows' time inside the process's window
  std::size_t kernels = 0, kernels_with_call = 0;
  std::size_t launch_calls = 0;                                  // recorded (inside the windows)
  // Recorded launch calls that started farther than outside_margin_ns from every window: the
  // windows' own claim, checked (a switch that took effect late, or a call recorded by a path
  // the windows do not switch). A call a few microseconds before a window is the switch's edge.
  std::size_t launch_calls_outside = 0;
  static constexpr std::uint64_t outside_margin_ns = 1'000'000;
  // Kernels whose correlation id named a recorded one-kernel launch call that an earlier kernel
  // already took: a stale id (the kernels launched while the capture switch had every callback
  // off appear to carry an earlier call's), dropped before any kernel is matched to its call,
  // so they are not among kernels_with_call.
  std::size_t kernels_sharing_a_call = 0;
  std::size_t range_instances = 0, range_instances_measured = 0; // NVTX ranges, those wholly inside a window
  // The lifetime split's and the steady state's CUDA API time for the launch calls outside the windows.
  split_estimate api_lifetime, api_steady;
  // The factor launch-call counts and times were multiplied by: kernels / kernels_with_call.
  double scale() const { return kernels_with_call > 0 ? double(kernels) / double(kernels_with_call) : 1.0; }
};

struct program_stream {
  std::uint32_t pid = 0, device = 0, stream = 0;
  std::size_t kernels = 0, copies = 0, memsets = 0;
  double kernel_ns = 0, copy_ns = 0, memset_ns = 0;
};

// A process: its activity over its lifetime (analysis/activity.hpp, what the rules read
// beside its trace summary) and what the program's tables show.
struct process_summary : activity_summary {
  profile::process_info info;
  std::string label;                  // "pid 1234 (python3 train.py)"
  std::uint64_t window_start = 0, window_end = 0;
  std::size_t records = 0;
  trace_summary trace;
  std::vector<program_range> ranges;
  std::vector<program_stream> streams;
  std::string backend, note;          // of the trace
  // Hardware counters of its first launches (`speedlab profile --metrics`): its contexts'
  // passes in one, the kernels of all of them.
  std::optional<counters::counter_pass> counters;
  // Source lines of its kernels (`speedlab profile --source`): its contexts' passes in one.
  std::optional<source::source_pass> source;
  // Launch calls recorded in sampled windows only; absent when every launch call was recorded.
  std::optional<launch_sampling> sampling;
  // Its records as the critical path walks them (absent without GPU work, or when the
  // process came from a summary file); shared: a summary is copied into the analysis.
  std::shared_ptr<const path_records> path;
};

// A process whose CUDA calls carry Python stacks: its header has the capture's "python" tag.
bool is_python_process(const profile::process_info& info);
// Its stacks, frames and calls as the capture recorded them (nullopt: none recorded).
std::optional<python_input> python_input_of(const profile::process_profile& p);

process_summary summarize_process(const profile::process_profile& p, const program_options& options = {});
// A trace's activity as a profiled process's would be: its windows as one, from the first's
// start to the last's end (analyze() with analysis_options::activity_from_traces).
activity_summary summarize_activity(trace::device_trace trace, const program_options& options = {});

// "pid 1234": the id of a process's point.
std::string process_point_id(std::uint32_t pid);
// The process as a point of the run model: one repetition over its lifetime.
point_result process_point(const process_summary& p);

struct program_analysis {
  program_facts facts;
  std::vector<process_summary> processes; // by start time
  std::vector<point_result> points;       // process_point of each process that used CUDA
  time_split split;                       // summed over the processes that used CUDA
  copy_stats h2d, d2h, other_copies;      // summed likewise: counts, bytes, pageable/pinned
  std::vector<program_kernel> kernels;    // by total time, longest first
  std::vector<program_range> ranges;      // by domain and name, longest total first
  std::vector<program_stream> streams;    // by pid, device, stream
  std::size_t records = 0;
  analysis_result result;                 // findings (program and point rules), what-ifs, notes
  // Two or more processes that used CUDA under a launcher's rank variable: the ranks side by
  // side (analysis/rank_analysis.hpp); their findings are in result too.
  std::optional<rank_analysis> ranks;
  // The critical path of each step (analysis/critical_path.hpp): of the ranks when compared,
  // else of the one process that used CUDA.
  critical_path path;
  // The lines of the program's Python code, merged over its processes (ranks merge likewise).
  python_lines python;
};

program_analysis analyze_program(std::vector<process_summary> processes, program_facts facts,
                                 const device_model& device, const program_options& options = {});
program_analysis analyze_program(const std::vector<profile::process_profile>& processes, program_facts facts,
                                 const device_model& device, const program_options& options = {});
// The same from summaries made one process at a time (summarize_process, summarize_rank),
// so a folder of many large streams is analysed without holding them all: ranks are those
// summaries of processes under a launcher's rank variable (two or more are compared).
program_analysis analyze_program(std::vector<process_summary> processes, std::vector<rank_summary> ranks,
                                 program_facts facts, const device_model& device, const program_options& options = {});

// results.json's and summary.json's launch_sampling (one codec, rank_summary_file.cpp).
void to_json(nlohmann::json& j, const launch_sampling& x);
void from_json(const nlohmann::json& j, launch_sampling& x);
void to_json(nlohmann::json& j, const program_facts& f);
void from_json(const nlohmann::json& j, program_facts& f);
// The program's tables and processes (the findings are in result, as for a run).
void to_json(nlohmann::json& j, const program_analysis& a);

} // namespace speedlab::analysis
