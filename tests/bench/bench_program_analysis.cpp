// Benchmark (not a test): the analysis of a synthetic profiled program of N activity records
// spread over P processes, from the stream files on disk to the program's findings, with the
// wall and CPU time and the peak resident memory. scripts/bench_profile_analysis.sh builds
// and runs it.
//
//   speedlab_bench_program_analysis write DIR [--records N] [--processes P] [--json]
//   speedlab_bench_program_analysis analyze DIR [--whole]
//
// write: P streams (profile::stream_writer, as the injection library writes them) of N/P
// records each, one records chunk per 20000 loop steps (220000 records), binary chunks or
// with --json the JSON chunks of stream format 1. analyze: analysis::analyze_stream_folder
// (each stream read one chunk at a time into its summary); with --whole the way a profile
// folder was analysed before streaming: every process read whole (read_stream_folder), then
// analyze_program over the traces in memory.
//
// Each step of the synthetic loop: an NVTX range, four launches and their kernels (names of
// realistic length, shared by all steps), an async pinned copy and its call, and every 100
// steps a synchronize: 11 records per step.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/program_stream.hpp"
#include "model/profile_stream.hpp"

using namespace speedlab;

namespace {

constexpr std::uint64_t records_per_step = 11;
constexpr std::uint64_t steps_per_chunk = 20000;

// The synthetic loop, chunk by chunk: each call gives the next `steps` steps.
class loop_writer {
public:
  explicit loop_writer(std::uint32_t pid) : m_pid(pid) {}

  trace::device_trace next(std::uint64_t steps) {
    static const std::string names[4] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, float*)",
        "ampere_sgemm_128x64_tn", "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)"};
    trace::device_trace t;
    t.backend = "cupti";
    t.process = m_pid;
    t.kernels.reserve(4 * steps);
    t.api_calls.reserve(5 * steps + steps / 100 + 1);
    t.memcpys.reserve(steps);
    t.ranges.reserve(steps);
    for (std::uint64_t s = 0; s < steps; ++s, ++m_step) {
      const std::uint64_t step_start = m_now;
      for (int k = 0; k < 4; ++k) {
        trace::api_record a;
        a.start = m_now;
        a.end = m_now + 4000;
        a.thread = a.process = m_pid;
        a.correlation = m_corr;
        a.name = "cudaLaunchKernel_v7000";
        t.api_calls.push_back(std::move(a));
        trace::kernel_record kr;
        kr.start = m_now + 5000;
        kr.end = m_now + 5000 + 3000 + 2000 * static_cast<std::uint64_t>(k);
        kr.correlation = m_corr++;
        kr.stream = 7;
        kr.name = names[k];
        kr.grid = {1024, 1, 1};
        kr.block = {256, 1, 1};
        t.kernels.push_back(std::move(kr));
        m_now += 6000;
      }
      trace::api_record a;
      a.start = m_now;
      a.end = m_now + 3000;
      a.thread = a.process = m_pid;
      a.correlation = m_corr;
      a.name = "cudaMemcpyAsync_v3020";
      t.api_calls.push_back(std::move(a));
      trace::memcpy_record m;
      m.start = m_now + 20000;
      m.end = m_now + 30000;
      m.correlation = m_corr++;
      m.bytes = 1 << 20;
      m.copy_kind = trace::copy_htod;
      m.src_kind = trace::mem_pinned;
      m.dst_kind = trace::mem_device;
      m.async = true;
      t.memcpys.push_back(m);
      m_now += 40000;
      if (m_step % 100 == 99) {
        trace::api_record y;
        y.start = m_now;
        y.end = m_now + 200000;
        y.thread = y.process = m_pid;
        y.correlation = m_corr++;
        y.name = "cudaStreamSynchronize_v3020";
        t.api_calls.push_back(std::move(y));
        m_now += 200000;
      }
      t.ranges.push_back({step_start, m_now, m_pid, m_pid, "", "train_step"});
    }
    return t;
  }
  std::uint64_t now() const { return m_now; }

private:
  std::uint32_t m_pid;
  std::uint64_t m_now = 1000000, m_step = 0;
  std::uint32_t m_corr = 1;
};

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
}

int usage(const char* self) {
  std::fprintf(stderr,
               "usage: %s write DIR [--records N] [--processes P] [--json]\n"
               "       %s analyze DIR [--whole]\n",
               self, self);
  return 2;
}

int write_streams(const std::filesystem::path& dir, std::uint64_t records, std::uint64_t processes, bool json) {
  if (processes == 0 || records < processes * records_per_step) {
    std::fprintf(stderr, "need at least %llu records per process\n", static_cast<unsigned long long>(records_per_step));
    return 2;
  }
  std::filesystem::create_directories(dir);
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t bytes = 0, written = 0;
  for (std::uint64_t i = 0; i < processes; ++i) {
    const auto pid = static_cast<std::uint32_t>(1000 + i);
    std::string error;
    auto w = profile::stream_writer::create(dir / profile::stream_file_name("bench", pid), error);
    if (!w) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    profile::process_info info;
    info.pid = pid;
    info.parent_pid = 1;
    info.host = "bench";
    info.command_line = {"python3", "train.py"};
    info.start_ns = 0;
    nlohmann::json header = profile::header_json(info, 0, 500, "speedlab_bench_program_analysis");
    if (json) header["format"] = 1;
    bool ok = w->write(profile::chunk_type::header, header);
    loop_writer loop(pid);
    for (std::uint64_t left = records / processes / records_per_step; left > 0 && ok;) {
      const std::uint64_t steps = std::min(left, steps_per_chunk);
      left -= steps;
      const trace::device_trace batch = loop.next(steps);
      written += batch.kernels.size() + batch.api_calls.size() + batch.memcpys.size() + batch.ranges.size();
      ok = json ? w->write(profile::chunk_type::records, profile::records_json(loop.now(), batch))
                : w->write_bytes(profile::chunk_type::records_binary, profile::records_binary(loop.now(), batch));
    }
    ok = ok && w->write(profile::chunk_type::close, profile::close_json(loop.now() + 1000000, "exit", 0));
    if (!ok) {
      std::fprintf(stderr, "cannot write the stream of pid %u\n", pid);
      return 1;
    }
    bytes += w->bytes_written();
  }
  std::printf("wrote %llu records in %llu process(es), %s chunks, %.1f MiB, in %.2f s\n",
              static_cast<unsigned long long>(written), static_cast<unsigned long long>(processes),
              json ? "JSON" : "binary", static_cast<double>(bytes) / 1048576.0,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

int analyze(const std::filesystem::path& dir, bool whole) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_s();
  analysis::program_analysis a;
  std::vector<std::string> messages;
  if (whole) {
    profile::folder_read read = profile::read_stream_folder(dir);
    messages = std::move(read.messages);
    a = analysis::analyze_program(read.processes, {}, {});
  } else {
    a = analysis::analyze_stream_folder(dir, {}, {}, {}, &messages);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_s() - c0;
  for (const auto& m : messages) std::fprintf(stderr, "message: %s\n", m.c_str());
  std::printf("records %zu in %zu process(es) (%s)\nanalyze_s %.2f\nanalyze_cpu_s %.2f\npeak_rss_mib %.0f\n"
              "kernels %zu ranges %zu findings %zu gaps %zu kernel_ns %.0f\n",
              a.records, a.processes.size(), whole ? "whole traces" : "streamed", wall, cpu, peak_rss_mib(),
              a.kernels.size(), a.ranges.size(), a.result.findings.size(),
              a.processes.empty() ? std::size_t{0} : a.processes[0].gaps.count, a.split.kernel);
  return messages.empty() ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage(argv[0]);
  const std::string mode = argv[1];
  const std::filesystem::path dir = argv[2];
  std::uint64_t records = 10'000'000, processes = 1;
  bool json = false, whole = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--records" && i + 1 < argc) records = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--processes" && i + 1 < argc) processes = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--json") json = true;
    else if (arg == "--whole") whole = true;
    else return usage(argv[0]);
  }
  try {
    if (mode == "write") return write_streams(dir, records, processes, json);
    if (mode == "analyze") return analyze(dir, whole);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return usage(argv[0]);
}
