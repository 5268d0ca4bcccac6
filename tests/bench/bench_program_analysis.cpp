// Benchmark (not a test): analyses a synthetic profiled program of N activity records and
// prints the analysis time and the peak resident memory. The records are spread over P
// processes, generated one at a time and summarized (analysis::summarize_process) before the
// next exists, as a profile of several processes is read; with P = 1 the whole trace is in
// memory at once. scripts/bench_profile_analysis.sh builds and runs it.
//
//   speedlab_bench_program_analysis [--records N] [--processes P]
//
// Each step of the synthetic loop: an NVTX range, four launches and their kernels (names of
// realistic length, shared by all steps), an async pinned copy and its call, and every 100
// steps a synchronize: 11 records per step.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/program_analysis.hpp"

using namespace speedlab;

namespace {

constexpr std::uint64_t records_per_step = 11;

profile::process_profile synthesize(std::uint32_t pid, std::uint64_t records) {
  static const std::string names[4] = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, float*)",
      "ampere_sgemm_128x64_tn", "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)",
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)"};
  profile::process_profile p;
  p.process.pid = pid;
  p.process.command_line = {"python3", "train.py"};
  p.process.used_cuda = true;
  const std::uint64_t steps = records / records_per_step;
  auto& t = p.trace;
  t.process = pid;
  t.kernels.reserve(4 * steps);
  t.api_calls.reserve(5 * steps + steps / 100);
  t.memcpys.reserve(steps);
  t.ranges.reserve(steps);
  std::uint32_t corr = 1;
  std::uint64_t now = 1000000;
  for (std::uint64_t s = 0; s < steps; ++s) {
    const std::uint64_t step_start = now;
    for (int k = 0; k < 4; ++k) {
      trace::api_record a;
      a.start = now;
      a.end = now + 4000;
      a.thread = a.process = pid;
      a.correlation = corr;
      a.name = "cudaLaunchKernel_v7000";
      t.api_calls.push_back(a);
      trace::kernel_record kr;
      kr.start = now + 5000;
      kr.end = now + 5000 + 3000 + 2000 * static_cast<std::uint64_t>(k);
      kr.correlation = corr++;
      kr.stream = 7;
      kr.name = names[k];
      kr.grid = {1024, 1, 1};
      kr.block = {256, 1, 1};
      t.kernels.push_back(std::move(kr));
      now += 6000;
    }
    trace::api_record a;
    a.start = now;
    a.end = now + 3000;
    a.thread = a.process = pid;
    a.correlation = corr;
    a.name = "cudaMemcpyAsync_v3020";
    t.api_calls.push_back(a);
    trace::memcpy_record m;
    m.start = now + 20000;
    m.end = now + 30000;
    m.correlation = corr++;
    m.bytes = 1 << 20;
    m.copy_kind = trace::copy_htod;
    m.src_kind = trace::mem_pinned;
    m.dst_kind = trace::mem_device;
    m.async = true;
    t.memcpys.push_back(m);
    now += 40000;
    if (s % 100 == 99) {
      trace::api_record y;
      y.start = now;
      y.end = now + 200000;
      y.thread = y.process = pid;
      y.correlation = corr++;
      y.name = "cudaStreamSynchronize_v3020";
      t.api_calls.push_back(y);
      now += 200000;
    }
    t.ranges.push_back({step_start, now, pid, pid, "", "train_step"});
  }
  p.process.start_ns = 0;
  p.process.end_ns = now + 1000000;
  t.repetitions = {{0, p.process.end_ns, 0, 0}};
  return p;
}

// CPU seconds (user + system) of this process so far: on a shared machine, the wall time
// of an analysis depends on the others; its CPU time does not.
double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
}

} // namespace

int main(int argc, char** argv) {
  std::uint64_t records = 10'000'000, processes = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--records")) records = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--processes")) processes = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: %s [--records N] [--processes P]\n", argv[0]);
      return 2;
    }
  }
  if (processes == 0 || records < processes * records_per_step) {
    std::fprintf(stderr, "need at least %llu records per process\n", static_cast<unsigned long long>(records_per_step));
    return 2;
  }
  using clock = std::chrono::steady_clock;
  double generate_s = 0, analyze_s = 0, analyze_cpu_s = 0;
  std::uint64_t total = 0;
  double trace_rss = 0; // peak with the first process's records in memory, before its analysis
  std::vector<analysis::process_summary> summaries;
  for (std::uint64_t i = 0; i < processes; ++i) {
    auto t0 = clock::now();
    const auto p = synthesize(static_cast<std::uint32_t>(1000 + i), records / processes);
    auto t1 = clock::now();
    if (i == 0) trace_rss = peak_rss_mib();
    const double c1 = cpu_s();
    summaries.push_back(analysis::summarize_process(p));
    analyze_cpu_s += cpu_s() - c1;
    auto t2 = clock::now();
    total += summaries.back().records;
    generate_s += std::chrono::duration<double>(t1 - t0).count();
    analyze_s += std::chrono::duration<double>(t2 - t1).count();
  }
  const auto t3 = clock::now();
  const double c3 = cpu_s();
  const auto a = analysis::analyze_program(std::move(summaries), {}, {});
  analyze_s += std::chrono::duration<double>(clock::now() - t3).count();
  analyze_cpu_s += cpu_s() - c3;
  std::printf("records %llu in %llu process(es)\ngenerate_s %.2f\nanalyze_s %.2f\nanalyze_cpu_s %.2f\ntrace_rss_mib %.0f\npeak_rss_mib %.0f\n"
              "kernels %zu ranges %zu findings %zu gaps %zu\n",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(processes), generate_s, analyze_s,
              analyze_cpu_s, trace_rss, peak_rss_mib(), a.kernels.size(), a.ranges.size(), a.result.findings.size(),
              a.processes.empty() ? std::size_t{0} : a.processes[0].gaps.count);
  return 0;
}
