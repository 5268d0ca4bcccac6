// The range profiler, as cupti_range_profiler.h and cupti_profiler_host.h document it:
// host object (metrics -> config image) per chip; per context Enable, counter data image,
// SetConfig(auto range, kernel replay), Start/Stop around the kernels, DecodeData, then
// evaluate each range on the host. Each CUPTI object has one owner that releases it.
#include "profilers/counters/counter_collector.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <tuple>

#include <dlfcn.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fmt/format.h>

#include "model/cuda_api.hpp"                  // is_collective_kernel
#include "profilers/cupti/cupti_records.hpp" // launch_callback_ids

namespace speedlab::profiling::counters_core {

std::string describe_cupti_result(int code) {
  switch (static_cast<CUptiResult>(code)) {
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    return "insufficient privileges: the driver restricts GPU performance counters to admin users "
           "(run as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0)";
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    return "virtualized GPU: this vGPU/passthrough setup does not expose performance counters";
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    return "virtualized GPU: counters are disabled for this VM (the host must enable profiling for the vGPU)";
  case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
  case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
  case CUPTI_ERROR_HARDWARE_BUSY:
    return "another profiler holds the GPU counters (e.g. Nsight Compute or Nsight Systems attached to this process)";
  case CUPTI_ERROR_NOT_SUPPORTED:
  case CUPTI_ERROR_INVALID_CHIP_NAME:
  case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    return "unsupported GPU: the CUPTI range profiler does not support this chip";
  case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED: return "unsupported GPU: counters are not available on a MIG instance";
  case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED: return "unsupported GPU: confidential computing is on";
  case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED: return "unsupported GPU: a CMP device";
  case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED: return "unsupported setup: WSL";
  case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED: return "unsupported setup: SLI";
  default: break;
  }
  const char* s = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(code), &s) == CUPTI_SUCCESS && s) return s;
  return fmt::format("CUPTI error {}", code);
}

namespace {

// The few driver calls the collector makes, found in the libcuda that CUDA already loaded
// (never linked: speedlab starts on machines without a driver).
struct driver_api {
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*ctx_push)(CUcontext) = nullptr;
  CUresult (*ctx_pop)(CUcontext*) = nullptr;
  bool ok() const { return ctx_get_current && ctx_get_device && ctx_synchronize; }
};

const driver_api& driver() {
  static const driver_api api = [] {
    driver_api a;
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) return a;
    a.ctx_get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxGetCurrent"));
    a.ctx_get_device = reinterpret_cast<CUresult (*)(CUdevice*)>(dlsym(lib, "cuCtxGetDevice"));
    a.ctx_synchronize = reinterpret_cast<CUresult (*)()>(dlsym(lib, "cuCtxSynchronize"));
    a.ctx_push = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(lib, "cuCtxPushCurrent_v2"));
    a.ctx_pop = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxPopCurrent_v2"));
    return a;
  }();
  return api;
}

// A CUPTI parameter struct, zeroed, with its size set.
template <class T>
T make_params(std::size_t size) {
  T p{};
  p.structSize = size;
  return p;
}

void need(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS)
    throw counters_unavailable(fmt::format("{} failed: {}", what, describe_cupti_result(static_cast<int>(r))));
}

// The profiler API is initialized once per process and left initialized (CUPTI allows it).
void initialize_profiler_once() {
  static const CUptiResult result = [] {
    auto p = make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    return cuptiProfilerInitialize(&p);
  }();
  need(result, "cuptiProfilerInitialize");
}

// Metrics into a host object's configuration, in one call or one call each.
CUptiResult add_metrics(CUpti_Profiler_Host_Object* host, const std::vector<std::string>& metrics) {
  std::vector<const char*> names;
  for (const auto& n : metrics) names.push_back(n.c_str());
  auto add = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  return cuptiProfilerHostConfigAddMetrics(&add);
}

CUpti_Profiler_Host_Object* host_initialize(const std::string& chip, const std::uint8_t* availability) {
  auto init = make_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability;
  if (CUptiResult r = cuptiProfilerHostInitialize(&init); r != CUPTI_SUCCESS)
    throw std::invalid_argument(fmt::format("chip '{}': {}", chip, describe_cupti_result(r)));
  return init.pHostObject;
}

void host_deinitialize(CUpti_Profiler_Host_Object* host) {
  auto p = make_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
}

// The host object: metrics -> config image, and evaluation of counter data.
class host_object {
public:
  // The whole set goes to CUPTI in one call: CUPTI packs the metrics of one call into as few
  // passes as the hardware allows, but never shares a pass between calls (one call per
  // metric made the default set 10 replays instead of 2 on GH100). `each` keeps the old
  // one-call-per-metric configuration, for the counters-sass check only.
  host_object(const std::string& chip, const std::vector<std::string>& metrics, const std::uint8_t* availability,
              bool each = false)
      : m_metrics(metrics) {
    m_host = host_initialize(chip, availability);
    try {
      configure(chip, availability, each);
    } catch (...) {
      host_deinitialize(m_host);
      throw;
    }
  }
  ~host_object() { host_deinitialize(m_host); }
  host_object(const host_object&) = delete;
  host_object& operator=(const host_object&) = delete;

  const std::vector<std::uint8_t>& config() const { return m_config; }
  std::size_t passes() const { return m_passes; }

  std::vector<double> evaluate(const std::vector<std::uint8_t>& data, std::size_t range) const {
    std::vector<const char*> names;
    for (const auto& n : m_metrics) names.push_back(n.c_str());
    std::vector<double> values(names.size(), 0.0);
    auto p = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    p.pHostObject = m_host;
    p.pCounterDataImage = data.data();
    p.counterDataImageSize = data.size();
    p.rangeIndex = range;
    p.ppMetricNames = names.data();
    p.numMetrics = names.size();
    p.pMetricValues = values.data();
    need(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues");
    return values;
  }

private:
  void configure(const std::string& chip, const std::uint8_t* availability, bool each) {
    if (each) {
      for (const auto& name : m_metrics)
        if (CUptiResult r = add_metrics(m_host, {name}); r != CUPTI_SUCCESS)
          throw std::invalid_argument(
              fmt::format("metric '{}' is not known for chip {} ({})", name, chip, describe_cupti_result(r)));
    } else if (CUptiResult r = add_metrics(m_host, m_metrics); r != CUPTI_SUCCESS) {
      // Name the metric at fault: each alone on a host object of its own.
      for (const auto& name : m_metrics) {
        CUpti_Profiler_Host_Object* alone = host_initialize(chip, availability);
        const CUptiResult one = add_metrics(alone, {name});
        host_deinitialize(alone);
        if (one != CUPTI_SUCCESS)
          throw std::invalid_argument(
              fmt::format("metric '{}' is not known for chip {} ({})", name, chip, describe_cupti_result(one)));
      }
      throw std::invalid_argument(fmt::format("the metrics cannot be read together on chip {} ({})", chip,
                                              describe_cupti_result(r)));
    }
    auto size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = m_host;
    need(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    m_config.resize(size.configImageSize);
    auto image = make_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = m_host;
    image.configImageSize = m_config.size();
    image.pConfigImage = m_config.data();
    need(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
    auto passes = make_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = m_config.size();
    passes.pConfigImage = m_config.data();
    need(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
    m_passes = passes.numOfPasses;
  }

private:
  std::vector<std::string> m_metrics;
  CUpti_Profiler_Host_Object* m_host = nullptr;
  std::vector<std::uint8_t> m_config;
  std::size_t m_passes = 0;
};

using launch_key = std::tuple<std::string, std::vector<std::uint32_t>, std::vector<std::uint32_t>>;

struct launch_seen {
  std::string kernel;
  std::vector<std::uint32_t> grid, block;
};

} // namespace

bool has_current_context() {
  const driver_api& drv = driver();
  CUcontext ctx = nullptr;
  return drv.ok() && drv.ctx_get_current(&ctx) == CUDA_SUCCESS && ctx;
}

std::size_t passes_for_chip(const std::string& chip, const std::vector<std::string>& metrics, bool each) {
  return host_object(chip, metrics, nullptr, each).passes();
}

struct counter_collector::impl {
  collector_options options;
  CUcontext context = nullptr;
  std::string chip;
  std::unique_ptr<host_object> host;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::vector<std::uint8_t> data; // the counter data image
  CUpti_SubscriberHandle subscriber{};
  bool subscribed = false;
  bool external = false; // launches come through on_api_callback (the owner's subscription)

  // Launch gate state: touched from launching threads (callbacks) and from start/stop.
  mutable std::mutex mutex;
  bool collecting = false;        // between start() and stop()
  bool profiling = false;         // the range profiler is started
  std::map<launch_key, std::size_t> seen;
  std::vector<launch_seen> profiled; // in launch order = range order
  std::size_t launches = 0, skipped = 0, dropped = 0;
  std::vector<std::string> messages;
  std::uint64_t pass_start_ns = 0, pass_end_ns = 0;
  std::size_t gate_errors = 0;
  CUptiResult start_error = CUPTI_SUCCESS; // the first cuptiRangeProfilerStart failed

  static std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  }

  CUptiResult profiler_start() {
    auto p = make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler;
    return cuptiRangeProfilerStart(&p);
  }
  CUptiResult profiler_stop() {
    auto p = make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler;
    return cuptiRangeProfilerStop(&p);
  }

  // Called at the entry of every kernel launch while collecting (under `mutex`): profile
  // it when its key has been seen fewer than K times, else make sure the profiler is off.
  void on_launch(launch_seen l) noexcept {
    try {
      std::lock_guard lock(mutex);
      if (!collecting) return;
      ++launches;
      std::size_t& n = seen[launch_key{l.kernel, l.grid, l.block}];
      // A collective (NCCL) waits for the other ranks: replaying it alone would hang.
      const bool want = n < options.per_kernel_limit && !trace::is_collective_kernel(l.kernel);
      ++n;
      if (want != profiling && !(want && start_error != CUPTI_SUCCESS)) {
        const CUptiResult r = want ? profiler_start() : profiler_stop();
        if (r == CUPTI_SUCCESS) profiling = want;
        // The first start is where the driver refuses counters (privileges, another
        // profiler, a busy GPU): no counters this pass, and no further tries.
        else if (want && profiled.empty()) start_error = r;
        else if (gate_errors++ == 0)
          messages.push_back(fmt::format("counters: switching the range profiler {} at a launch failed ({}); "
                                         "launches beyond K may be profiled",
                                         want ? "on" : "off", describe_cupti_result(r)));
      }
      if (profiling) profiled.push_back(std::move(l));
      else ++skipped;
    } catch (...) {
      // never out of a CUPTI callback
    }
  }
};

namespace {

std::vector<std::uint32_t> dims(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }

// Runtime launches carry the kernel's grid in their parameters; the driver launch beneath
// a runtime launch is skipped (depth), so each launch is seen once.
thread_local int t_runtime_depth = 0;

void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept {
  auto* self = static_cast<counter_collector::impl*>(userdata);
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (!self || !cb) return;
  const bool enter = cb->callbackSite == CUPTI_API_ENTER;
  launch_seen l;
  l.kernel = cb->symbolName ? cb->symbolName : "";
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (!enter) {
      if (t_runtime_depth > 0) --t_runtime_depth;
      return;
    }
    ++t_runtime_depth;
    switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    // CUDA 13's <<<>>> entry point (__cudaLaunchKernel) takes (kernel, grid, block, args,
    // shared, stream): the same layout as cudaLaunchKernel's parameters.
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000: {
      const auto* p = static_cast<const cudaLaunchKernel_v7000_params*>(cb->functionParams);
      if (p) {
        l.grid = dims(p->gridDim.x, p->gridDim.y, p->gridDim.z);
        l.block = dims(p->blockDim.x, p->blockDim.y, p->blockDim.z);
      }
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto* p = static_cast<const cudaLaunchKernelExC_v11060_params*>(cb->functionParams);
      if (p && p->config) {
        l.grid = dims(p->config->gridDim.x, p->config->gridDim.y, p->config->gridDim.z);
        l.block = dims(p->config->blockDim.x, p->config->blockDim.y, p->config->blockDim.z);
      }
      break;
    }
    default: break;
    }
    self->on_launch(std::move(l));
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !enter || t_runtime_depth > 0) return;
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
    const auto* p = static_cast<const cuLaunchKernel_params*>(cb->functionParams);
    if (p) {
      l.grid = dims(p->gridDimX, p->gridDimY, p->gridDimZ);
      l.block = dims(p->blockDimX, p->blockDimY, p->blockDimZ);
    }
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    const auto* p = static_cast<const cuLaunchKernelEx_params*>(cb->functionParams);
    if (p && p->config) {
      l.grid = dims(p->config->gridDimX, p->config->gridDimY, p->config->gridDimZ);
      l.block = dims(p->config->blockDimX, p->config->blockDimY, p->config->blockDimZ);
    }
    break;
  }
  default: return;
  }
  self->on_launch(std::move(l));
}

constexpr CUpti_CallbackId driver_launch_ids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

// Throws counters_unavailable naming why the range profiler cannot run on this device.
void check_device_supported(CUdevice device) {
  auto supported = make_params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  supported.cuDevice = device;
  supported.api = CUPTI_PROFILER_RANGE_PROFILING;
  need(cuptiProfilerDeviceSupported(&supported), "cuptiProfilerDeviceSupported");
  if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    std::string why = "unsupported GPU configuration";
    if (supported.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "unsupported chip (compute capability below 7.0)";
    else if (supported.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "virtualized GPU: profiling is not enabled for this vGPU";
    else if (supported.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "confidential computing is on";
    else if (supported.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "a CMP device";
    else if (supported.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "WSL";
    else if (supported.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "SLI";
    throw counters_unavailable(why);
  }
}

// The counter data image for the metrics, and the profiler's configuration: auto range,
// kernel replay, one nesting level.
void configure_range_profiler(counter_collector::impl& m) {
  std::vector<const char*> names;
  for (const auto& n : m.options.metrics) names.push_back(n.c_str());
  auto size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = m.profiler;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = m.options.max_ranges;
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(m.options.max_ranges);
  need(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  m.data.resize(size.counterDataSize);
  auto init = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = m.profiler;
  init.counterDataSize = m.data.size();
  init.pCounterData = m.data.data();
  need(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");

  auto config = make_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = m.profiler;
  config.configSize = m.host->config().size();
  config.pConfig = m.host->config().data();
  config.counterDataImageSize = m.data.size();
  config.pCounterDataImage = m.data.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = CUPTI_KernelReplay;
  config.maxRangesPerPass = m.options.max_ranges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  need(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");
}

} // namespace

counter_collector::counter_collector(void* cu_context, collector_options options) : m(std::make_unique<impl>()) {
  m->options = std::move(options);
  if (m->options.per_kernel_limit == 0) m->options.per_kernel_limit = 1;
  // The context must be current on the calling thread (the runner's, or the injection
  // library's context callback); cu_context, when given, must be that one.
  const driver_api& drv = driver();
  if (!drv.ok()) throw counters_unavailable("the CUDA driver is not loaded in this process (no GPU work ran yet?)");
  CUcontext ctx = nullptr;
  if (drv.ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx)
    throw counters_unavailable("no CUDA context on this thread: the variant created none before the counters pass");
  if (cu_context && static_cast<CUcontext>(cu_context) != ctx)
    throw counters_unavailable("the context to profile is not current on this thread");
  m->context = ctx;
  CUdevice device = 0;
  if (drv.ctx_get_device(&device) != CUDA_SUCCESS) throw counters_unavailable("cannot read the context's device");

  check_device_supported(device);
  initialize_profiler_once();

  auto chip = make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  need(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
  m->chip = chip.pChipName ? chip.pChipName : "";

  auto avail = make_params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = ctx;
  need(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
  std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  need(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
  try {
    m->host = std::make_unique<host_object>(m->chip, m->options.metrics, availability.data(), m->options.add_metrics_each);
  } catch (const std::invalid_argument& e) {
    throw counters_unavailable(e.what());
  }

  auto enable = make_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = ctx;
  need(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
  m->profiler = enable.pRangeProfilerObject;
  try {
    configure_range_profiler(*m);
  } catch (...) {
    auto off = make_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    off.pRangeProfilerObject = m->profiler;
    cuptiRangeProfilerDisable(&off);
    throw;
  }

  if (m->options.gate_launches && m->options.external_callbacks) {
    m->subscribed = true; // the owner's subscription delivers the launches (on_api_callback)
    m->external = true;
  } else if (m->options.gate_launches) {
    if (cuptiSubscribe(&m->subscriber, &on_callback, m.get()) == CUPTI_SUCCESS) {
      m->subscribed = true;
      for (CUpti_CallbackId id : cupti::launch_callback_ids) {
        cuptiEnableCallback(1, m->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
      }
      for (CUpti_CallbackId id : driver_launch_ids) cuptiEnableCallback(1, m->subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    } else {
      m->messages.push_back(fmt::format(
          "counters: another CUPTI client holds the callback subscription, so every kernel of the pass is "
          "profiled (no limit of {} per kernel)",
          m->options.per_kernel_limit));
    }
  }
}

counter_collector::~counter_collector() {
  if (!m) return;
  if (m->subscribed && !m->external) cuptiUnsubscribe(m->subscriber);
  if (m->profiling) m->profiler_stop();
  if (m->profiler) {
    auto off = make_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    off.pRangeProfilerObject = m->profiler;
    cuptiRangeProfilerDisable(&off);
  }
}

void counter_collector::start() {
  std::lock_guard lock(m->mutex);
  if (m->collecting) return;
  m->pass_start_ns = impl::now_ns();
  // Without the launch gate the profiler runs for the whole pass.
  if (!m->subscribed) {
    need(m->profiler_start(), "cuptiRangeProfilerStart");
    m->profiling = true;
  }
  m->collecting = true;
}

void counter_collector::stop() {
  {
    std::lock_guard lock(m->mutex);
    if (!m->collecting) return;
    m->collecting = false;
  }
  // The replayed kernels are done before the data is decoded; the collector's context is
  // made current for it (the injection library stops it from its exit handler).
  const driver_api& drv = driver();
  CUcontext current = nullptr;
  const bool push = drv.ctx_push && drv.ctx_pop && drv.ctx_get_current(&current) == CUDA_SUCCESS && current != m->context &&
                    drv.ctx_push(m->context) == CUDA_SUCCESS;
  drv.ctx_synchronize();
  if (push) {
    CUcontext popped = nullptr;
    drv.ctx_pop(&popped);
  }
  std::lock_guard lock(m->mutex);
  if (m->profiling) {
    if (CUptiResult r = m->profiler_stop(); r != CUPTI_SUCCESS)
      m->messages.push_back("counters: cuptiRangeProfilerStop failed: " + describe_cupti_result(r));
    m->profiling = false;
  }
  m->pass_end_ns = impl::now_ns();
  auto decode = make_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = m->profiler;
  if (CUptiResult r = cuptiRangeProfilerDecodeData(&decode); r != CUPTI_SUCCESS)
    m->messages.push_back("counters: cuptiRangeProfilerDecodeData failed: " + describe_cupti_result(r));
  m->dropped += decode.numOfRangeDropped;
}

counters::counter_pass counter_collector::take() {
  std::lock_guard lock(m->mutex);
  if (m->start_error != CUPTI_SUCCESS && m->profiled.empty())
    throw counters_unavailable("cuptiRangeProfilerStart failed: " + describe_cupti_result(m->start_error));
  counters::counter_pass out;
  out.metric_set = m->options.metric_set;
  out.metrics = m->options.metrics;
  out.chip = m->chip;
  out.passes = m->host->passes();
  out.per_kernel_limit = m->subscribed ? m->options.per_kernel_limit : 0;
  out.launches = m->subscribed ? m->launches : 0;
  out.skipped = m->skipped;
  out.dropped_ranges = m->dropped;
  out.pass_wall_ns = static_cast<double>(m->pass_end_ns - m->pass_start_ns);
  auto info = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = m->data.data();
  info.counterDataImageSize = m->data.size();
  if (CUptiResult r = cuptiRangeProfilerGetCounterDataInfo(&info); r != CUPTI_SUCCESS) {
    m->messages.push_back("counters: cuptiRangeProfilerGetCounterDataInfo failed: " + describe_cupti_result(r));
    return out;
  }
  if (!m->subscribed) out.launches = info.numTotalRanges;
  if (m->subscribed && info.numTotalRanges != m->profiled.size())
    m->messages.push_back(fmt::format("counters: {} ranges for {} profiled launches; grids are left out",
                                      info.numTotalRanges, m->profiled.size()));
  const bool matched = m->subscribed && info.numTotalRanges == m->profiled.size();
  for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
    counters::kernel_counters k;
    k.launch = i;
    auto range = make_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    range.pCounterDataImage = m->data.data();
    range.counterDataImageSize = m->data.size();
    range.rangeIndex = i;
    range.rangeDelimiter = "/";
    // Auto ranges are named by their index ("0", "1", ...): the kernel's name comes from the
    // launch the gate saw for that range.
    if (matched) {
      k.kernel = m->profiled[i].kernel;
      k.grid = m->profiled[i].grid;
      k.block = m->profiled[i].block;
    } else if (cuptiRangeProfilerCounterDataGetRangeInfo(&range) == CUPTI_SUCCESS && range.rangeName) {
      k.kernel = std::string("range ") + range.rangeName;
    }
    try {
      const auto values = m->host->evaluate(m->data, i);
      for (std::size_t j = 0; j < values.size(); ++j) k.metrics[m->options.metrics[j]] = values[j];
    } catch (const std::exception& e) {
      m->messages.push_back(fmt::format("counters: range {} ({}): {}", i, k.kernel, e.what()));
      continue;
    }
    out.kernels.push_back(std::move(k));
  }
  return out;
}

std::vector<std::string> counter_collector::messages() const {
  std::lock_guard lock(m->mutex);
  return m->messages;
}

void counter_collector::on_api_callback(int domain, unsigned id, const void* callback_data) noexcept {
  if (!m || !m->external) return;
  on_callback(m.get(), static_cast<CUpti_CallbackDomain>(domain), static_cast<CUpti_CallbackId>(id), callback_data);
}

std::vector<std::pair<int, unsigned>> counter_collector::launch_callbacks() {
  std::vector<std::pair<int, unsigned>> out;
  for (CUpti_CallbackId id : cupti::launch_callback_ids) out.emplace_back(CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (CUpti_CallbackId id : driver_launch_ids) out.emplace_back(CUPTI_CB_DOMAIN_DRIVER_API, id);
  return out;
}

} // namespace speedlab::profiling::counters_core
