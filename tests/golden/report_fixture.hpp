// A small, realistic-looking report_input built in code for the reporter tests and the
// golden files. The numbers are SYNTHETIC (chosen to resemble a vector-add and a histogram
// sweep on an H100-class machine), not measurements: never quote them as results.
// Replace with a recorded run from tests/fixtures once real GPU data lands.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"
#include "model/statistics.hpp"
#include "model/trace.hpp"
#include "reports/reporter.hpp"

namespace speedlab::test_fixture {

struct report_fixture {
  run_info run;
  std::vector<point_result> points;
  analysis::analysis_result analysis;
  std::map<std::string, trace::device_trace> traces; // by point id

  reports::report_input input() const {
    return reports::report_input{run, points, analysis, [this](const point_result& p) -> std::optional<trace::device_trace> {
                                   auto it = traces.find(p.id);
                                   if (it == traces.end()) return std::nullopt;
                                   return it->second;
                                 }};
  }
};

namespace detail {

inline std::vector<double> samples_around(double median, int count = 11, double spread = 0.01) {
  std::vector<double> s;
  for (int k = 0; k < count; ++k) {
    const int offset = (k * 7) % count - count / 2; // deterministic shuffle of -5..5
    s.push_back(median * (1.0 + spread * offset));
  }
  return s;
}

inline point_result make_point(const std::string& workload, const std::string& variant, const std::string& kind,
                               std::map<std::string, std::string> params, double median_ns, double spread = 0.01) {
  point_result p;
  p.workload = workload;
  p.variant = variant;
  p.kind = parse_variant_kind(kind);
  p.params = std::move(params);
  p.id = workload + "/" + variant + "/" + p.params_key();
  p.threads = kind == "threads" ? 16 : 1;
  p.samples_ns = samples_around(median_ns, 11, spread);
  p.wall = stats::summarize(p.samples_ns);
  p.warmup_runs = 2;
  p.stop_reason = "relative CI below 2%";
  p.first_validation = {true, true, "", 0};
  p.last_validation = {true, true, "", 0};
  p.cpu_utilization = kind == "threads" ? 11.5 : 0.98;
  p.profiler = kind == "cuda" ? "cupti" : "host";
  p.phase_median_ns = {{"setup", median_ns * 3}, {"compute", median_ns * 0.8}, {"validate", median_ns * 0.5}};
  p.started_unix_s = 1795176000.0;
  p.duration_s = median_ns * 13 / 1e9 + 0.01;
  return p;
}

inline time_split split(double kernel, double h2d, double d2h, double sync, double api, double host) {
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

inline void set_splits(point_result& p, const time_split& median) {
  p.split_median = median;
  time_split lo = median, hi = median;
  for (double time_split::*part : {&time_split::kernel, &time_split::h2d, &time_split::d2h, &time_split::sync,
                                   &time_split::api, &time_split::host, &time_split::wall_ns}) {
    lo.*part *= 0.98;
    hi.*part *= 1.02;
  }
  p.split_q1 = lo;
  p.split_q3 = hi;
  p.splits = {lo, median, hi};
}

// One measured repetition of a CUDA point: phases, API calls and the GPU work they cause.
struct trace_builder {
  trace::device_trace t;
  std::uint32_t corr = 1;
  std::uint32_t pid, tid;
  std::string prefix; // "<workload>/<variant> <params>"

  trace_builder(std::uint32_t process, std::string range_prefix) : pid(process), tid(process), prefix(std::move(range_prefix)) {
    t.backend = "cupti";
    t.process = process;
    t.buffer_bytes = 8u << 20;
  }
  void api(std::uint64_t s, std::uint64_t e, const std::string& name, std::uint32_t c, bool driver = false) {
    trace::api_record a;
    a.start = s;
    a.end = e;
    a.process = pid;
    a.thread = tid;
    a.correlation = c;
    a.name = name;
    a.driver = driver;
    t.api_calls.push_back(a);
  }
  void range(std::uint64_t s, std::uint64_t e, const std::string& domain, const std::string& name) {
    t.ranges.push_back(trace::range_record{s, e, pid, tid, domain, name});
  }
  void copy(std::uint64_t s, std::uint64_t e, std::uint8_t kind, std::uint8_t src, std::uint8_t dst, std::uint64_t bytes,
            std::uint32_t c) {
    trace::memcpy_record m;
    m.start = s;
    m.end = e;
    m.context = 1;
    m.stream = 7;
    m.correlation = c;
    m.bytes = bytes;
    m.copy_kind = kind;
    m.src_kind = src;
    m.dst_kind = dst;
    t.memcpys.push_back(m);
  }
  void kernel(std::uint64_t s, std::uint64_t e, const std::string& name, std::uint32_t c, std::int32_t grid,
              std::int32_t block) {
    trace::kernel_record k;
    k.start = s;
    k.end = e;
    k.context = 1;
    k.stream = 7;
    k.correlation = c;
    k.name = name;
    k.mangled_name = "_Z" + std::to_string(name.size()) + "kernel";
    k.grid = {grid, 1, 1};
    k.block = {block, 1, 1};
    k.registers_per_thread = 16;
    k.static_shared_bytes = 0;
    k.dynamic_shared_bytes = 0;
    t.kernels.push_back(k);
  }
};

// µs offsets from t to ns timestamps.
inline std::uint64_t at(std::uint64_t t, double us) { return t + static_cast<std::uint64_t>(us * 1000.0); }

inline trace::device_trace naive_trace(std::uint64_t t0, const std::string& prefix, const std::string& kernel_name,
                                       std::uint64_t n) {
  trace_builder b(4242, prefix);
  for (int rep = 0; rep < 3; ++rep) {
    const std::uint64_t s = at(t0, rep * 1000.0);
    b.t.repetitions.push_back({s, at(s, 950), at(s, 520), at(s, 560)});
    b.range(s, at(s, 520), "speedlab", prefix + ": transfer_in");
    b.range(at(s, 520), at(s, 560), "speedlab", prefix + ": compute");
    b.range(at(s, 560), at(s, 950), "speedlab", prefix + ": transfer_out");
    const std::uint32_t c1 = b.corr++, c2 = b.corr++, c3 = b.corr++, c4 = b.corr++, c5 = b.corr++, c6 = b.corr++;
    b.api(at(s, 5), at(s, 255), "cudaMemcpy_v3020", c1);
    b.copy(at(s, 15), at(s, 250), trace::copy_htod, trace::mem_pageable, trace::mem_device, 4 * n, c1);
    b.api(at(s, 260), at(s, 515), "cudaMemcpy_v3020", c2);
    b.copy(at(s, 270), at(s, 510), trace::copy_htod, trace::mem_pageable, trace::mem_device, 4 * n, c2);
    b.api(at(s, 522), at(s, 530), "cudaLaunchKernel_v7000", c3);
    b.api(at(s, 524), at(s, 529), "cuLaunchKernel", c4, true);
    b.kernel(at(s, 532), at(s, 545), kernel_name, c3, static_cast<std::int32_t>((n + 255) / 256), 256);
    b.api(at(s, 531), at(s, 548), "cudaDeviceSynchronize_v3020", c5);
    b.t.syncs.push_back(trace::sync_record{at(s, 531), at(s, 548), 1, 0xFFFFFFFFu, c5, 4});
    b.api(at(s, 562), at(s, 945), "cudaMemcpy_v3020", c6);
    b.copy(at(s, 570), at(s, 940), trace::copy_dtoh, trace::mem_device, trace::mem_pageable, 4 * n, c6);
  }
  b.t.overheads.push_back(trace::overhead_record{at(t0, 2960), at(t0, 2990), "buffer flush"});
  return b.t;
}

inline trace::device_trace resident_trace(std::uint64_t t0, const std::string& prefix, const std::string& kernel_name,
                                          std::uint64_t n, double kernel_us) {
  trace_builder b(4243, prefix);
  for (int rep = 0; rep < 3; ++rep) {
    const std::uint64_t s = at(t0, rep * 200.0);
    const double end = kernel_us + 20;
    b.t.repetitions.push_back({s, at(s, end), at(s, 1), at(s, end - 1)});
    b.range(s, at(s, 1), "speedlab", prefix + ": transfer_in");
    b.range(at(s, 1), at(s, end - 1), "speedlab", prefix + ": compute");
    b.range(at(s, end - 1), at(s, end), "speedlab", prefix + ": transfer_out");
    const std::uint32_t c1 = b.corr++, c2 = b.corr++;
    b.api(at(s, 2), at(s, 8), "cudaLaunchKernel_v7000", c1);
    b.kernel(at(s, 9), at(s, 9 + kernel_us), kernel_name, c1, static_cast<std::int32_t>((n + 255) / 256), 256);
    b.api(at(s, 8.5), at(s, 10 + kernel_us), "cudaStreamSynchronize_v3020", c2);
    b.t.syncs.push_back(trace::sync_record{at(s, 8.5), at(s, 10 + kernel_us), 1, 7, c2, 3});
  }
  return b.t;
}

inline trace::device_trace histogram_trace(std::uint64_t t0, const std::string& prefix) {
  trace_builder b(4244, prefix);
  for (int rep = 0; rep < 3; ++rep) {
    const std::uint64_t s = at(t0, rep * 1500.0);
    b.t.repetitions.push_back({s, at(s, 1200), at(s, 10), at(s, 1190)});
    b.range(s, at(s, 10), "speedlab", prefix + ": transfer_in");
    b.range(at(s, 10), at(s, 1190), "speedlab", prefix + ": compute");
    b.range(at(s, 1190), at(s, 1200), "speedlab", prefix + ": transfer_out");
    const std::uint32_t c1 = b.corr++, c2 = b.corr++, c3 = b.corr++, c4 = b.corr++;
    b.api(at(s, 11), at(s, 15), "cudaMemsetAsync_v3020", c1);
    trace::memset_record m;
    m.start = at(s, 16);
    m.end = at(s, 17);
    m.context = 1;
    m.stream = 7;
    m.correlation = c1;
    m.bytes = 40;
    m.value = 0;
    m.memory_kind = trace::mem_device;
    b.t.memsets.push_back(m);
    b.api(at(s, 18), at(s, 24), "cudaLaunchKernel_v7000", c2);
    b.kernel(at(s, 25), at(s, 1170), "void histogram_atomic<10>(float const*, unsigned int*, unsigned long)", c2, 528, 256);
    b.api(at(s, 1175), at(s, 1185), "cudaMemcpyAsync_v3020", c3);
    b.copy(at(s, 1176), at(s, 1178), trace::copy_dtoh, trace::mem_device, trace::mem_pinned, 40, c3);
    b.api(at(s, 1186), at(s, 1189), "cudaStreamSynchronize_v3020", c4);
    b.t.syncs.push_back(trace::sync_record{at(s, 1186), at(s, 1189), 1, 7, c4, 3});
  }
  return b.t;
}

} // namespace detail

// hostile = true puts markup and quotes into names, parameters, messages and the kernel
// name (`<script>alert(1)</script>`) to test escaping.
inline report_fixture make_report_fixture(bool hostile = false) {
  using namespace detail;
  report_fixture f;
  f.run.speedlab_version = "0.1.0";
  f.run.started_at = "2026-11-20T12:00:00Z";
  f.run.hostname = "devbox";
  f.run.cpu_model = "Example 16-core CPU @ 3.0GHz";
  f.run.cpu_cores = 16;
  f.run.gpu_name = "NVIDIA H100 80GB HBM3";
  f.run.command_line = "speedlab run --suite lessons.yaml --out out/";
  f.run.suite = "lessons.yaml";
  f.run.wall_s = 42.5;
  f.run.profilers = {"host", "cupti"};
  f.run.notes = {"synthetic fixture data: not a measurement"};

  const std::string kernel = hostile ? "<script>alert(1)</script>"
                                     : "void vector_add_kernel<float>(float const*, float const*, float*, int)";
  const std::string naive = hostile ? "cuda_<b>naive</b>" : "cuda_naive";

  // vector_add: serial, threads, CUDA with pageable copies, CUDA with device-resident data.
  struct row {
    const char* variant;
    const char* kind;
    double t1k, t1m, t16m;
  };
  const row rows[] = {{"serial", "serial", 900, 0.9e6, 15e6},
                      {"threads", "threads", 12e3, 0.2e6, 3e6},
                      {"cuda_naive", "cuda", 45e3, 0.95e6, 12e6},
                      {"cuda_resident", "cuda", 8e3, 30e3, 100e3}};
  const std::uint64_t sizes[] = {1024, 1048576, 16777216};
  for (const auto& r : rows) {
    for (int i = 0; i < 3; ++i) {
      const double t = i == 0 ? r.t1k : i == 1 ? r.t1m : r.t16m;
      const std::string variant = std::string(r.variant) == "cuda_naive" ? naive : r.variant;
      auto p = make_point("vector_add", variant, r.kind, {{"n", std::to_string(sizes[i])}}, t,
                          std::string(r.variant) == "threads" && i == 0 ? 0.03 : 0.01);
      const double n = static_cast<double>(sizes[i]);
      p.work.bytes_read = 8 * n;
      p.work.bytes_written = 4 * n;
      p.work.flops = n;
      p.work.items = n;
      if (std::string(r.variant) == "cuda_naive") {
        p.work.host_to_device_bytes = 8 * n;
        p.work.device_to_host_bytes = 4 * n;
        set_splits(p, split(t * 0.02, t * 0.55, t * 0.30, t * 0.03, t * 0.04, t * 0.06));
      } else if (std::string(r.variant) == "cuda_resident") {
        set_splits(p, split(t * 0.70, 0, 0, t * 0.12, t * 0.10, t * 0.08));
      }
      f.points.push_back(p);
    }
  }
  // histogram: a valid atomic kernel, a deliberately racy one (expected invalid) and a crash.
  auto hs = make_point("histogram", "serial", "serial", {{"bins", "10"}, {"samples", "16777216"}}, 30e6);
  hs.work.bytes_read = 4 * 16777216.0;
  hs.work.items = 16777216;
  f.points.push_back(hs);
  auto ha = make_point("histogram", "cuda_atomic", "cuda", {{"bins", "10"}, {"samples", "16777216"}}, 1.2e6);
  ha.work = hs.work;
  set_splits(ha, split(1.2e6 * 0.95, 0, 1.2e6 * 0.002, 1.2e6 * 0.01, 1.2e6 * 0.018, 1.2e6 * 0.02));
  f.points.push_back(ha);
  auto hr = make_point("histogram", "cuda_racy", "cuda", {{"bins", "10"}, {"samples", "16777216"}}, 0.4e6);
  hr.status = point_status::invalid;
  hr.expected_invalid = true;
  hr.reason = "validation failed: bin counts differ from serial";
  hr.last_validation = {true, false, "bin 3: 1201 counted, 1677216 expected", 1.0};
  hr.work = hs.work;
  f.points.push_back(hr);
  auto hc = make_point("histogram", "cuda_shared", "cuda",
                       {{"bins", hostile ? "10\"><img src=x onerror=alert(2)>" : "10"}, {"samples", "16777216"}}, 0);
  hc.status = point_status::crashed;
  hc.reason = hostile ? "signal 11 <SIGSEGV> & \"core\"" : "signal 11 (SIGSEGV) during compute";
  hc.samples_ns.clear();
  hc.wall = summary_stats{};
  hc.first_validation = {};
  hc.last_validation = {};
  hc.profiler_messages = {"child exited before the profiler flushed its buffers"};
  f.points.push_back(hc);

  auto find = [&f](const std::string& variant, const std::string& n) -> point_result& {
    for (auto& p : f.points)
      if (p.variant == variant && (n.empty() || (p.params.count("n") && p.params.at("n") == n))) return p;
    throw std::logic_error("fixture point missing");
  };
  // Traces and profiler facts for three CUDA points.
  const std::uint64_t t0 = 1'000'000'000'000ull;
  auto& pn = find(naive, "1048576");
  pn.trace_file = "traces/vector_add-cuda_naive-n_1048576.json";
  pn.profiler_messages = {"CUPTI activity buffers: 2 of 8 MiB used"};
  f.traces[pn.id] = naive_trace(t0, "vector_add/" + naive + " n=1048576", kernel, 1048576);
  auto& pr = find("cuda_resident", "16777216");
  pr.trace_file = "traces/vector_add-cuda_resident-n_16777216.json";
  pr.dropped_records = 12;
  pr.profiler_messages = {"CUPTI dropped 12 activity records (buffer full)"};
  f.traces[pr.id] = resident_trace(t0 + 1'000'000'000ull, "vector_add/cuda_resident n=16777216", kernel, 16777216, 70);
  f.traces[pr.id].dropped_records = 12;
  auto& pa = find("cuda_atomic", "");
  pa.trace_file = "traces/histogram-cuda_atomic.json";
  f.traces[pa.id] = histogram_trace(t0 + 2'000'000'000ull, "histogram/cuda_atomic bins=10,samples=16777216");

  // The analysis (what analysis/ would conclude from these numbers).
  auto& a = f.analysis;
  a.device.gpu_name = "NVIDIA H100 80GB HBM3";
  a.device.gpu["dram_bw"] = {3000, "GB/s", true, "calibrate 2026-11-20"};
  a.device.gpu["h2d_pageable_bw"] = {10, "GB/s", true, "calibrate 2026-11-20"};
  a.device.gpu["d2h_pageable_bw"] = {19, "GB/s", true, "calibrate 2026-11-20"};
  a.device.gpu["fp32_peak"] = {51000, "GFLOP/s", false, "cudaGetDeviceProperties"};
  a.device.gpu["launch_latency"] = {4.5, "us", true, "calibrate 2026-11-20"};
  a.device.gpu["sm_count"] = {132, "", false, "cudaGetDeviceProperties"};
  a.device.host["memory_bw"] = {100, "GB/s", true, "calibrate 2026-11-20"};
  a.device.host["fp32_peak"] = {1500, "GFLOP/s", false, "estimate: cores x clock x SIMD width"};
  a.device.host["cores"] = {16, "cores", true, "std::thread::hardware_concurrency"};
  a.device.properties = {{"compute_capability", "9.0"},
                         {"clock_khz", "1980000"},
                         {"memory_clock_khz", "2619000"},
                         {"memory_bus_bits", "5120"},
                         {"global_memory_bytes", "85045379072"},
                         {"l2_bytes", "52428800"},
                         {"pci_bus_id", "0000:18:00.0"},
                         {"uuid", "GPU-00000000-0000-0000-0000-000000000000"},
                         {"max_threads_per_sm", "2048"},
                         {"driver_version", "580.159"},
                         {"runtime_version", "13.0"}};
  auto place = [&a](const point_result& p, const std::string& kernel_name, const std::string& processor,
                    double roof_gbps, double roof_gflops, double time_ns) {
    analysis::roofline_point r;
    r.point_id = p.id;
    r.workload = p.workload;
    r.variant = p.variant;
    r.kernel = kernel_name;
    r.processor = processor;
    r.time_ns = time_ns;
    r.achieved_gbps = p.work.bytes() / time_ns;
    r.achieved_gflops = p.work.flops / time_ns;
    r.intensity = p.work.bytes() > 0 ? p.work.flops / p.work.bytes() : 0;
    r.roof_gbps = roof_gbps;
    r.roof_gflops = roof_gflops;
    const double ridge = roof_gflops / roof_gbps;
    r.bound = r.intensity < ridge ? "memory" : "compute";
    r.percent_of_bound = r.bound == "memory" ? 100 * r.achieved_gbps / roof_gbps : 100 * r.achieved_gflops / roof_gflops;
    r.roof_measured = r.bound == "memory";
    r.roof_source = r.bound == "memory" ? "calibrate 2026-11-20" : "cudaGetDeviceProperties";
    a.roofline.push_back(r);
  };
  for (const auto& p : f.points) {
    if (!p.valid() || p.work.bytes() == 0) continue;
    if (p.kind == variant_kind::cuda) {
      const double t = p.split_median ? p.split_median->kernel : p.wall.median;
      place(p, "", "gpu", 3000, 51000, t);
      if (p.workload == "vector_add" && p.params.at("n") == "16777216") place(p, kernel, "gpu", 3000, 51000, t);
    } else {
      place(p, "", "cpu", 100, 1500, p.wall.median * 0.8);
    }
  }
  for (const auto& p : f.points) {
    if (!p.valid() || p.variant == "serial") continue;
    const point_result* base = nullptr;
    for (const auto& b : f.points)
      if (b.workload == p.workload && b.variant == "serial" && b.params_key(true) == p.params_key(true) &&
          b.size_value() == p.size_value())
        base = &b;
    if (!base) continue;
    analysis::speedup s;
    s.workload = p.workload;
    s.params_key = p.params_key();
    s.variant = p.variant;
    s.baseline = "serial";
    s.ratio = base->wall.median / p.wall.median;
    s.ci_low = s.ratio * 0.97;
    s.ci_high = s.ratio * 1.03;
    s.verdict = s.ci_low > 1 ? verdict::faster : s.ci_high < 1 ? verdict::slower : verdict::same;
    if (p.variant == "threads" && p.params.at("n") == "1024") s.verdict = verdict::unclear, s.ci_high = s.ratio * 1.4;
    s.method = "bootstrap";
    s.point_id = p.id;
    s.baseline_point_id = base->id;
    a.speedups.push_back(s);
  }
  analysis::finding tb;
  tb.rule = "transfer-bound";
  tb.title = "Host-device copies take 85% of " + naive + " at n=16777216";
  tb.severity = severity::critical;
  tb.point_id = find(naive, "16777216").id;
  tb.workload = "vector_add";
  tb.variant = naive;
  tb.threshold = "copies > 50% of the repetition's wall time";
  tb.evidence = {{"h2d share", "55.0%"}, {"d2h share", "30.0%"}, {"kernel share", "2.0%"},
                 {"h2d bandwidth", "16.3 GB/s (pageable)"}};
  tb.explanation = "The data is copied in and out on every call from pageable host memory, so the "
                   "copies, not the kernel, set the time.";
  tb.next_experiment = "Compare with cuda_resident (data kept on the device) and with pinned host buffers.";
  tb.estimated_gain = 6.7;
  a.findings.push_back(tb);
  analysis::finding nz;
  nz.rule = "noisy-measurement";
  nz.title = "threads at n=1024: the 95% CI of the median is 24% wide";
  nz.severity = severity::warning;
  nz.point_id = find("threads", "1024").id;
  nz.workload = "vector_add";
  nz.variant = "threads";
  nz.threshold = "relative CI half-width > 5%";
  nz.evidence = {{"relative CI half-width", "12.0%"}, {"samples", "11"}};
  nz.explanation = "Thread start-up dominates at this size and varies from run to run.";
  nz.next_experiment = "Raise the minimum repetitions or pin threads (OMP_PROC_BIND-style affinity).";
  nz.estimated_gain = 1;
  a.findings.push_back(nz);
  analysis::finding ei;
  ei.rule = "expected-invalid";
  ei.title = "cuda_racy is wrong on purpose: its histogram loses updates";
  ei.severity = severity::info;
  ei.point_id = hr.id;
  ei.workload = "histogram";
  ei.variant = "cuda_racy";
  ei.threshold = "exact match with serial";
  ei.evidence = {{"validation", hostile ? "<i>bin 3</i> & more" : "bin 3: 1201 counted, 1677216 expected"}};
  ei.explanation = "Non-atomic increments race; validation catches it as the lesson intends.";
  ei.next_experiment = "None: the variant exists to show the race.";
  ei.estimated_gain = 1;
  a.findings.push_back(ei);

  analysis::cost_fit fit;
  fit.workload = "vector_add";
  fit.size_param = "n";
  fit.basis = "total";
  fit.params_key = "";
  fit.size_min = 1024;
  fit.size_max = 16777216;
  fit.points = 3;
  fit.variant = "serial";
  fit.fixed_ns = 20;
  fit.per_unit_ns = 0.894;
  fit.r2 = 0.9999;
  a.fits.push_back(fit);
  fit.variant = naive;
  fit.fixed_ns = 41000;
  fit.per_unit_ns = 0.713;
  fit.r2 = 0.998;
  a.fits.push_back(fit);
  fit.variant = "cuda_resident";
  fit.fixed_ns = 8000;
  fit.per_unit_ns = 0.0037;
  fit.r2 = 0.97;
  a.fits.push_back(fit);

  analysis::crossover x;
  x.workload = "vector_add";
  x.baseline = "serial";
  x.size_param = "n";
  x.with_transfers = true;
  x.variant = "cuda_resident";
  x.size = 9000;
  x.size_low = 7000;
  x.size_high = 12000;
  x.in_range = true;
  x.method = "bracket+fit";
  x.note = "faster from n of about 9000";
  a.crossovers.push_back(x);
  x.variant = naive;
  x.size = 226000;
  x.size_low = 180000;
  x.size_high = 300000;
  x.note = "faster from n of about 226000 (copies included)";
  a.crossovers.push_back(x);
  x.variant = "threads";
  x.size = 15000;
  x.size_low = 9000;
  x.size_high = 30000;
  x.note = "thread start-up pays off from n of about 15000";
  a.crossovers.push_back(x);

  analysis::what_if w;
  w.point_id = find(naive, "16777216").id;
  w.workload = "vector_add";
  w.variant = naive;
  w.scenario = "copies take no time";
  w.measured_ns = 12e6;
  w.projected_ns = 1.8e6;
  w.max_speedup = 6.67;
  w.arithmetic = "12.0 ms - (6.60 ms h2d + 3.60 ms d2h) = 1.80 ms; 12.0 / 1.80 = 6.67x";
  a.what_ifs.push_back(w);
  a.notes = {"fp32_peak of the GPU is an estimate from device properties, not a measurement"};
  return f;
}

} // namespace speedlab::test_fixture
