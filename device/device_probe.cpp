#include "device/device_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <cctype>
#include <cstdlib>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include <speedlab/config.hpp>
#include <speedlab/gpu_availability.hpp>

#include "device/host_info.hpp"
#include "model/device_keys.hpp"

#if SPEEDLAB_HAS_CUDA
#include <cuda_runtime.h>
#include <speedlab/cuda.hpp>
#endif

namespace speedlab::device {

using speedlab::ceiling;

int fp32_lanes_per_sm(int major, int minor) {
  if (major <= 6) return major == 6 && minor == 0 ? 64 : 128;
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  return 128; // sm_90, sm_100, sm_120: 128 FP32 lanes per SM
}

double fp64_ratio(int major, int minor) {
  if (minor == 0 && (major == 6 || major == 7 || major == 8 || major == 9 || major == 10)) return 0.5;
  if (major == 7 && minor == 5) return 1.0 / 32;
  return 1.0 / 64;
}

namespace {

#if SPEEDLAB_HAS_CUDA
std::string uuid_text(const cudaUUID_t& u) {
  std::string hex;
  bool nonzero = false;
  for (int i = 0; i < 16; ++i) {
    const auto b = static_cast<unsigned char>(u.bytes[i]);
    nonzero = nonzero || b != 0;
    hex += fmt::format("{:02x}", b);
    if (i == 3 || i == 5 || i == 7 || i == 9) hex += '-';
  }
  return nonzero ? "GPU-" + hex : std::string();
}

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

void probe_gpu(int dev, speedlab::device_model& m) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    m.properties["gpu_unavailable"] = std::string("cudaGetDeviceProperties failed: ") + cudaGetErrorString(cudaGetLastError());
    return;
  }
  // CUDA 13 removed clockRate and memoryClockRate from cudaDeviceProp: use attributes.
  const int clock_khz = attribute(cudaDevAttrClockRate, dev);
  const int mem_khz = attribute(cudaDevAttrMemoryClockRate, dev);
  const int bus_bits = p.memoryBusWidth;
  const int lanes = fp32_lanes_per_sm(p.major, p.minor);
  const double ratio = fp64_ratio(p.major, p.minor);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);

  m.gpu_name = p.name;
  auto& pr = m.properties;
  pr["device_index"] = std::to_string(dev);
  pr[keys::prop_compute_capability] = fmt::format("{}.{}", p.major, p.minor);
  pr["uuid"] = uuid_text(p.uuid);
  pr["pci_bus_id"] = fmt::format("{:04x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  pr["clock_khz"] = std::to_string(clock_khz);
  pr["memory_clock_khz"] = std::to_string(mem_khz);
  pr["memory_bus_bits"] = std::to_string(bus_bits);
  pr["global_memory_bytes"] = std::to_string(p.totalGlobalMem);
  pr["l2_bytes"] = std::to_string(p.l2CacheSize);
  pr[keys::prop_regs_per_sm] = std::to_string(p.regsPerMultiprocessor);
  pr[keys::prop_regs_per_block] = std::to_string(p.regsPerBlock);
  pr[keys::prop_max_threads_per_sm] = std::to_string(p.maxThreadsPerMultiProcessor);
  pr[keys::prop_max_blocks_per_sm] = std::to_string(p.maxBlocksPerMultiProcessor);
  pr[keys::prop_smem_per_sm] = std::to_string(p.sharedMemPerMultiprocessor);
  pr[keys::prop_smem_per_block_optin] = std::to_string(p.sharedMemPerBlockOptin);
  pr[keys::prop_reserved_smem_per_block] = std::to_string(p.reservedSharedMemPerBlock);
  pr[keys::prop_warp_size] = std::to_string(p.warpSize);
  pr["async_engines"] = std::to_string(p.asyncEngineCount);
  pr["ecc"] = p.ECCEnabled ? "on" : "off";
  pr["fp32_lanes_per_sm"] = std::to_string(lanes);
  pr["driver_version"] = fmt::format("{}.{}", driver / 1000, (driver % 1000) / 10);
  pr["runtime_version"] = fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10);

  const std::string props = "cudaGetDeviceProperties/cudaDeviceGetAttribute";
  m.gpu[keys::sm_count] = ceiling{static_cast<double>(p.multiProcessorCount), "count", false, props};
  if (mem_khz > 0 && bus_bits > 0)
    m.gpu[keys::dram_bw] = ceiling{2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9, "GB/s", false,
                                   fmt::format("estimate: memory clock {} MHz x {} bit bus x 2 (double data rate)",
                                               mem_khz / 1000, bus_bits)};
  if (clock_khz > 0) {
    const double fp32 = static_cast<double>(p.multiProcessorCount) * lanes * 2.0 * clock_khz * 1e3 / 1e9;
    m.gpu[keys::fp32_peak] = ceiling{fp32, "GFLOP/s", false,
                                     fmt::format("estimate: {} SMs x {} FP32 lanes x 2 (FMA) x {} MHz",
                                                 p.multiProcessorCount, lanes, clock_khz / 1000)};
    m.gpu[keys::fp64_peak] = ceiling{fp32 * ratio, "GFLOP/s", false,
                                     fmt::format("estimate: FP32 peak x {} (FP64:FP32 ratio of sm_{}{})", ratio,
                                                 p.major, p.minor)};
    // L1: 128 bytes per clock per SM (the L1/TEX data path width on sm_70 and later).
    m.gpu[keys::l1_bw] = ceiling{static_cast<double>(p.multiProcessorCount) * 128.0 * clock_khz * 1e3 / 1e9, "GB/s",
                                 false,
                                 fmt::format("estimate: {} SMs x 128 B per clock x {} MHz", p.multiProcessorCount,
                                             clock_khz / 1000)};
  }
}
#endif

} // namespace

std::string gpu_unavailable_reason() {
  // The plugins' classifier (<speedlab/gpu_availability.hpp>): run, list, profile and the
  // reports name the same cause the CUDA variants' skip reasons name.
#if SPEEDLAB_HAS_CUDA
  return speedlab::cuda::unavailable_reason();
#else
  speedlab::gpu::facts f;
  f.cuda_built = false;
  return speedlab::gpu::classify(f).reason;
#endif
}

int gpu_count() {
#if SPEEDLAB_HAS_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

void probe_host(speedlab::device_model& m) {
  const cpu_facts cpu = read_cpuinfo();
  const unsigned logical = std::thread::hardware_concurrency();
  const int physical = cpu.physical_cores > 0 ? cpu.physical_cores : static_cast<int>(logical);
  m.properties["cpu_model"] = cpu.model;
  m.properties["hostname"] = host_name();
  m.properties["cpu_mhz"] = fmt::format("{:.0f}", cpu.mhz);
  m.properties["cpu_simd"] = cpu.simd;
  if (const std::size_t llc = llc_bytes()) m.properties[keys::prop_llc_bytes] = std::to_string(llc);
  if (logical > 0) m.host[keys::cores] = ceiling{double(logical), "cores", false, "std::thread::hardware_concurrency"};
  if (physical > 0) m.host[keys::physical_cores] = ceiling{double(physical), "cores", false, "/proc/cpuinfo core ids"};
  if (physical > 0 && cpu.mhz > 0) {
    // Two FMA units per core is the common case on current x86 server cores.
    const double fp32 = physical * cpu.mhz * 1e6 * cpu.fp32_lanes * 2 * 2 / 1e9;
    m.host[keys::fp32_peak] = ceiling{fp32, "GFLOP/s", false,
                                      fmt::format("estimate: {} cores x {:.0f} MHz x {} FP32 lanes ({}) x 2 FMA units x 2",
                                                  physical, cpu.mhz, cpu.fp32_lanes, cpu.simd)};
    m.host[keys::fp64_peak] = ceiling{fp32 / 2, "GFLOP/s", false, "estimate: half the FP32 peak (half the lanes)"};
  }
}

speedlab::device_model probe_model(int device) {
  speedlab::device_model m;
  probe_host(m);
  const std::string why = gpu_unavailable_reason();
  if (!why.empty()) {
    m.properties["gpu_unavailable"] = why;
  } else {
#if SPEEDLAB_HAS_CUDA
    probe_gpu(device, m);
#else
    (void)device;
#endif
  }
  m.properties["cache_key"] = cache_key(m);
  return m;
}

std::string cache_key(const speedlab::device_model& m) {
  auto prop = [&](const char* k) {
    auto it = m.properties.find(k);
    return it == m.properties.end() ? std::string() : it->second;
  };
  std::string key;
  if (!m.gpu_name.empty()) key = !prop("uuid").empty() ? "gpu-" + prop("uuid") : "gpu-" + m.gpu_name + "-" + prop("pci_bus_id");
  else key = "host-" + (prop("hostname").empty() ? host_name() : prop("hostname"));
  for (char& c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return key;
}

} // namespace speedlab::device
