// Builders for synthetic analysis inputs: points with deterministic samples, time splits,
// trace records and device models with known ceilings.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/analyze.hpp"
#include "model/device_keys.hpp"
#include "model/results.hpp"
#include "model/statistics.hpp"
#include "model/trace.hpp"

namespace speedlab::analysis_test {

// n samples spread evenly over median x [1 - rel, 1 + rel] (deterministic, symmetric).
inline std::vector<double> spread(double median, double rel, int n = 21) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    const double u = n > 1 ? -1.0 + 2.0 * i / (n - 1) : 0.0;
    v.push_back(median * (1 + rel * u));
  }
  return v;
}

inline std::string make_id(const std::string& w, const std::string& v, const std::map<std::string, std::string>& params) {
  std::string id = w + "/" + v + "/";
  bool first = true;
  for (const auto& [k, x] : params) {
    id += (first ? "" : ",") + k + "=" + x;
    first = false;
  }
  return id;
}

inline point_result make_point(const std::string& workload, const std::string& variant, const std::string& kind,
                               std::map<std::string, std::string> params, std::vector<double> samples, int threads = 1) {
  point_result p;
  p.workload = workload;
  p.variant = variant;
  p.kind = kind.empty() ? std::nullopt : std::optional(parse_variant_kind(kind));
  p.params = std::move(params);
  p.id = make_id(workload, variant, p.params);
  p.threads = threads;
  p.samples_ns = std::move(samples);
  p.wall = stats::summarize(p.samples_ns);
  p.phase_median_ns["compute"] = p.wall.median;
  return p;
}

inline time_split make_split(double kernel, double h2d, double d2h, double sync = 0, double api = 0, double host = 0) {
  time_split s;
  s.kernel = kernel;
  s.h2d = h2d;
  s.d2h = d2h;
  s.sync = sync;
  s.api = api;
  s.host = host;
  s.wall_ns = kernel + h2d + d2h + sync + api + host;
  return s;
}

// A CUDA point whose samples and split agree (wall median = split wall).
inline point_result cuda_point(const std::string& workload, const std::string& variant,
                               std::map<std::string, std::string> params, const time_split& s, double rel = 0.01) {
  point_result p = make_point(workload, variant, "cuda", std::move(params), spread(s.wall_ns, rel));
  p.split_median = s;
  p.splits.assign(3, s);
  p.phase_median_ns["transfer_in"] = s.h2d;
  p.phase_median_ns["compute"] = s.kernel + s.sync;
  p.phase_median_ns["transfer_out"] = s.d2h;
  return p;
}

inline trace::kernel_record kernel(const std::string& name, std::uint64_t start, std::uint64_t end, int blocks,
                                   int threads, int regs = 32, int smem = 0) {
  trace::kernel_record k;
  k.name = name;
  k.start = start;
  k.end = end;
  k.grid = {blocks, 1, 1};
  k.block = {threads, 1, 1};
  k.registers_per_thread = regs;
  k.static_shared_bytes = smem;
  return k;
}

inline trace::memcpy_record copy(std::uint8_t kind, std::uint64_t start, std::uint64_t end, std::uint64_t bytes,
                                 std::uint8_t host_memory, bool async = false) {
  trace::memcpy_record m;
  m.copy_kind = kind;
  m.start = start;
  m.end = end;
  m.bytes = bytes;
  m.async = async;
  if (kind == trace::copy_htod) {
    m.src_kind = host_memory;
    m.dst_kind = trace::mem_device;
  } else {
    m.src_kind = trace::mem_device;
    m.dst_kind = host_memory;
  }
  return m;
}

inline analysis::ceiling c(double v, const char* unit, bool measured) {
  return {v, unit, measured, measured ? "test calibration" : "test estimate"};
}

// An H100-like model: 132 SMs, sm_90 limits, ceilings measured or estimated.
inline analysis::device_model h100(bool measured = true) {
  namespace k = keys;
  analysis::device_model d;
  d.gpu_name = "Test H100";
  d.gpu[k::dram_bw] = c(3000, "GB/s", measured);
  d.gpu[k::fp32_peak] = c(60000, "GFLOP/s", measured);
  d.gpu[k::fp64_peak] = c(30000, "GFLOP/s", measured);
  d.gpu[k::h2d_pinned_bw] = c(25, "GB/s", measured);
  d.gpu[k::h2d_pageable_bw] = c(10, "GB/s", measured);
  d.gpu[k::d2h_pinned_bw] = c(25, "GB/s", measured);
  d.gpu[k::d2h_pageable_bw] = c(20, "GB/s", measured);
  d.gpu[k::launch_latency] = c(5, "us", measured);
  d.gpu[k::sm_count] = c(132, "count", false);
  d.host[k::memory_bw] = c(100, "GB/s", measured);
  d.host[k::memory_bw_1thread] = c(15, "GB/s", measured);
  d.host[k::cores] = c(16, "cores", measured);
  d.host[k::physical_cores] = c(16, "cores", false);
  d.host[k::fp32_peak] = c(2000, "GFLOP/s", false);
  d.host[k::fp64_peak] = c(1000, "GFLOP/s", false);
  d.properties[k::prop_compute_capability] = "9.0";
  return d;
}

inline trace::repetition_window window(std::uint64_t start, std::uint64_t end, std::uint64_t transfer_in_end = 0,
                                       std::uint64_t compute_end = 0) {
  return {start, end, transfer_in_end, compute_end};
}

// Runs the whole analysis with traces looked up by point id.
inline analysis::analysis_result run(const std::vector<point_result>& points, const analysis::device_model& d,
                                     std::map<std::string, trace::device_trace> traces = {}) {
  return analysis::analyze(points, d, [traces = std::move(traces)](const point_result& p) -> std::optional<trace::device_trace> {
    auto it = traces.find(p.id);
    if (it == traces.end()) return std::nullopt;
    return it->second;
  });
}

inline std::vector<analysis::finding> findings_of(const analysis::analysis_result& r, const std::string& rule,
                                                  const std::string& point_id = {}) {
  std::vector<analysis::finding> out;
  for (const auto& f : r.findings)
    if (f.rule == rule && (point_id.empty() || f.point_id == point_id)) out.push_back(f);
  return out;
}

inline std::string evidence(const analysis::finding& f, const std::string& name) {
  for (const auto& e : f.evidence)
    if (e.name == name) return e.value;
  return {};
}

} // namespace speedlab::analysis_test
