// PC sampling as cupti_pcsampling.h documents it and the facts checked on the H100
// (docs: /work/shared/reference/SOURCE-LINES.md): Enable first, then stall reasons by index,
// then the configuration (start/stop control, our own data buffer); Stop flushes what the
// hardware sampled; GetData copies it out; each PC's line comes from the cubin copied at
// its module load (cuptiGetSassToSourceCorrelation).
#include "profilers/source/source_collector.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <fstream>
#include <set>
#include <string_view>
#include <thread>
#include <tuple>

#include <dlfcn.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "profilers/counters/counter_collector.hpp" // describe_cupti_result
#include "profilers/cupti/cupti_collector.hpp"     // subscribe

namespace speedlab::profiling::source_core {
namespace {

constexpr std::size_t buffer_pcs = 10000; // PCs per GetData call (about 2 MB with 40 reasons)

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::string why(CUptiResult r) { return counters_core::describe_cupti_result(static_cast<int>(r)); }

// cuCtxSynchronize on a given context, through the libcuda that CUDA already loaded.
bool synchronize(CUcontext ctx) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return false;
  auto push = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(lib, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxPopCurrent_v2"));
  auto sync = reinterpret_cast<CUresult (*)()>(dlsym(lib, "cuCtxSynchronize"));
  if (!push || !pop || !sync || push(ctx) != CUDA_SUCCESS) return false;
  const bool ok = sync() == CUDA_SUCCESS;
  CUcontext popped = nullptr;
  pop(&popped);
  return ok;
}

// The device ordinal of a context (CUPTI's device index), through libcuda.
std::optional<std::uint32_t> device_of(CUcontext ctx) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return std::nullopt;
  auto push = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(lib, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxPopCurrent_v2"));
  auto get = reinterpret_cast<CUresult (*)(CUdevice*)>(dlsym(lib, "cuCtxGetDevice"));
  if (!push || !pop || !get || push(ctx) != CUDA_SUCCESS) return std::nullopt;
  CUdevice dev = 0;
  const bool ok = get(&dev) == CUDA_SUCCESS;
  CUcontext popped = nullptr;
  pop(&popped);
  if (!ok || dev < 0) return std::nullopt;
  return static_cast<std::uint32_t>(dev);
}

// A CUPTI profiler-API parameter struct, zeroed, with its size set.
template <class T>
T sized(std::size_t size) {
  T p{};
  p.structSize = size;
  return p;
}

// A CUpti_PCSamplingData with room for buffer_pcs PCs of n stall reasons each, owned here.
class sample_buffer {
public:
  explicit sample_buffer(std::size_t reasons)
      : m_pcs(buffer_pcs), m_stalls(buffer_pcs * (reasons ? reasons : 1)) {
    m_data.size = sizeof(CUpti_PCSamplingData);
    m_data.collectNumPcs = buffer_pcs;
    m_data.pPcData = m_pcs.data();
    for (std::size_t i = 0; i < buffer_pcs; ++i) {
      m_pcs[i].size = sizeof(CUpti_PCSamplingPCData);
      m_pcs[i].stallReason = &m_stalls[i * (reasons ? reasons : 1)];
    }
  }
  CUpti_PCSamplingData* get() { return &m_data; }

private:
  std::vector<CUpti_PCSamplingPCData> m_pcs;
  std::vector<CUpti_PCSamplingStallReason> m_stalls;
  CUpti_PCSamplingData m_data{};
};

// The SASS metrics the view reads (GH100 names, SOURCE-LINES.md section 3).
const char* const sass_metric_names[] = {"smsp__sass_inst_executed_op_global_ld", "smsp__sass_inst_executed_op_global_st",
                                         "smsp__sass_sectors_mem_global"};

struct context_state {
  CUcontext ctx = nullptr;
  bool enabled = false, started = false;
  std::unique_ptr<sample_buffer> config_buffer; // CUPTI's own, for what Disable flushes
  std::vector<std::uint32_t> indexes;
};

} // namespace

struct source_collector::impl {
  std::mutex mutex;
  CUpti_SubscriberHandle subscriber{};
  bool subscribed = false;
  std::vector<context_state> contexts;
  std::map<std::uint32_t, std::string> stall_names;
  std::map<std::uint64_t, std::vector<char>> cubins; // by CRC
  std::vector<source::pc_record> records;
  std::vector<std::string> messages;
  std::uint64_t dropped = 0, total = 0;
  std::uint64_t pass_start = 0, pass_end = 0;
  bool said_hw_full = false;
  // CUPTI's function-name strings: one string may be shared by many PC records (and by later
  // reads), so each is freed once, when the collector ends (cupti_pcsampling.h). Freeing it per
  // record was a double free on the H100.
  std::set<char*> function_names;
  // The SASS-metrics phase: configured per device, enabled on the first sampled context.
  std::map<std::uint64_t, std::string> sass_ids; // metric id -> name
  std::vector<source::sass_record> sass;
  CUcontext sass_ctx = nullptr;
  std::uint32_t sass_device = 0;
  bool sass_configured = false, sass_enabled = false;

  void note(std::string msg) {
    for (const auto& m : messages)
      if (m == msg) return;
    messages.push_back(std::move(msg));
  }
  void on_context_created(CUcontext ctx) noexcept;
  bool configure(context_state& c);
  void on_module_loaded(const CUpti_ModuleResourceData* module) noexcept;
  void read_samples(context_state& c);
  void disable(context_state& c) noexcept;
  std::optional<source::line_location> correlate(std::uint64_t crc, const std::string& fn, std::uint64_t pc) const;
  void sass_start(CUcontext ctx);
  void sass_configure(CUcontext ctx);
  void sass_read();
  void sass_stop() noexcept;
};

namespace {

void resource_callback(source_collector::impl* m, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                       const void* data) noexcept {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || !m || !data) return;
  const auto* res = static_cast<const CUpti_ResourceData*>(data);
  try {
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) m->on_context_created(res->context);
    else if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED)
      m->on_module_loaded(static_cast<const CUpti_ModuleResourceData*>(res->resourceDescriptor));
  } catch (...) { // nothing leaves a CUPTI callback
  }
}

void CUPTIAPI subscribed_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept {
  resource_callback(static_cast<source_collector::impl*>(user), domain, id, data);
}

} // namespace

std::vector<std::pair<int, unsigned>> source_collector::resource_callbacks() {
  return {{CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED},
          {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED}};
}

void source_collector::on_callback(int domain, unsigned id, const void* data) noexcept {
  resource_callback(m.get(), static_cast<CUpti_CallbackDomain>(domain), static_cast<CUpti_CallbackId>(id), data);
}

void source_collector::impl::on_context_created(CUcontext ctx) noexcept {
  std::lock_guard lock(mutex);
  context_state c;
  c.ctx = ctx;
  auto enable = CUpti_PCSamplingEnableParams{};
  enable.size = CUpti_PCSamplingEnableParamsSize;
  enable.ctx = ctx;
  if (CUptiResult r = cuptiPCSamplingEnable(&enable); r != CUPTI_SUCCESS) {
    note(fmt::format("source: PC sampling unavailable on this GPU or driver: cuptiPCSamplingEnable failed: {}; "
                     "the run goes on without the source view",
                     why(r)));
    return;
  }
  c.enabled = true;
  if (!configure(c)) {
    disable(c);
    return;
  }
  contexts.push_back(std::move(c));
}

// Stall reasons (by index, as CUPTI lists them) and the configuration; false with a note.
bool source_collector::impl::configure(context_state& c) {
  std::size_t n = 0;
  auto num = CUpti_PCSamplingGetNumStallReasonsParams{};
  num.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  num.ctx = c.ctx;
  num.numStallReasons = &n;
  if (CUptiResult r = cuptiPCSamplingGetNumStallReasons(&num); r != CUPTI_SUCCESS || n == 0) {
    note(fmt::format("source: no stall reasons from CUPTI ({}); no source view", r == CUPTI_SUCCESS ? "none listed" : why(r)));
    return false;
  }
  c.indexes.assign(n, 0);
  std::vector<std::vector<char>> storage(n, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
  std::vector<char*> names(n);
  for (std::size_t i = 0; i < n; ++i) names[i] = storage[i].data();
  auto get = CUpti_PCSamplingGetStallReasonsParams{};
  get.size = CUpti_PCSamplingGetStallReasonsParamsSize;
  get.ctx = c.ctx;
  get.numStallReasons = n;
  get.stallReasonIndex = c.indexes.data();
  get.stallReasons = names.data();
  if (CUptiResult r = cuptiPCSamplingGetStallReasons(&get); r != CUPTI_SUCCESS) {
    note(fmt::format("source: cuptiPCSamplingGetStallReasons failed: {}; no source view", why(r)));
    return false;
  }
  for (std::size_t i = 0; i < n; ++i) stall_names[c.indexes[i]] = names[i];

  c.config_buffer = std::make_unique<sample_buffer>(n);
  std::vector<CUpti_PCSamplingConfigurationInfo> info(3);
  info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  info[0].attributeData.stallReasonData.stallReasonCount = n;
  info[0].attributeData.stallReasonData.pStallReasonIndex = c.indexes.data();
  info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  info[1].attributeData.samplingDataBufferData.samplingDataBuffer = c.config_buffer->get();
  // Only the pass's repetition is sampled, not the setup and warm-up before it.
  info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  info[2].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  auto set = CUpti_PCSamplingConfigurationInfoParams{};
  set.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  set.ctx = c.ctx;
  set.numAttributes = info.size();
  set.pPCSamplingConfigurationInfo = info.data();
  if (CUptiResult r = cuptiPCSamplingSetConfigurationAttribute(&set); r != CUPTI_SUCCESS) {
    note(fmt::format("source: configuring PC sampling failed: {}; no source view", why(r)));
    return false;
  }
  return true;
}

// The cubin is valid only inside the callback: copied, keyed by the CRC PC records carry.
void source_collector::impl::on_module_loaded(const CUpti_ModuleResourceData* module) noexcept {
  if (!module || !module->pCubin || module->cubinSize == 0) return;
  auto crc = CUpti_GetCubinCrcParams{};
  crc.size = CUpti_GetCubinCrcParamsSize;
  crc.cubinSize = module->cubinSize;
  crc.cubin = module->pCubin;
  if (cuptiGetCubinCrc(&crc) != CUPTI_SUCCESS) return;
  std::lock_guard lock(mutex);
  cubins.try_emplace(crc.cubinCrc, module->pCubin, module->pCubin + module->cubinSize);
}

// Everything sampled so far, copied out of CUPTI's buffers (GetData until none remain).
void source_collector::impl::read_samples(context_state& c) {
  sample_buffer buffer(c.indexes.size());
  bool waited = false;
  for (int round = 0; round < 10000; ++round) {
    CUpti_PCSamplingData* data = buffer.get();
    data->totalNumPcs = 0;
    data->remainingNumPcs = 0;
    auto get = CUpti_PCSamplingGetDataParams{};
    get.size = CUpti_PCSamplingGetDataParamsSize;
    get.ctx = c.ctx;
    get.pcSamplingData = data;
    const CUptiResult r = cuptiPCSamplingGetData(&get);
    if (data->hardwareBufferFull && !said_hw_full) {
      said_hw_full = true;
      note("source: the hardware sample buffer filled; some samples were lost (a longer sampling period helps)");
    }
    if (r != CUPTI_SUCCESS) {
      if (r != CUPTI_ERROR_OUT_OF_MEMORY) note(fmt::format("source: reading samples failed: {}", why(r)));
      return;
    }
    dropped += data->droppedSamples;
    for (std::size_t i = 0; i < data->totalNumPcs; ++i) {
      const CUpti_PCSamplingPCData& pc = data->pPcData[i];
      source::pc_record rec{pc.cubinCrc, pc.pcOffset, pc.functionName ? pc.functionName : "", {}};
      for (std::size_t s = 0; s < pc.stallReasonCount; ++s) {
        // Packed fields: copied out by value, never bound to a reference.
        const std::uint32_t index = pc.stallReason[s].pcSamplingStallReasonIndex;
        const std::uint64_t samples = pc.stallReason[s].samples;
        rec.stalls.emplace_back(index, samples);
      }
      if (pc.functionName) function_names.insert(pc.functionName);
      records.push_back(std::move(rec));
    }
    if (data->remainingNumPcs == 0 && data->totalNumPcs == 0) {
      // CUPTI's worker threads decode asynchronously: one more look after a pause, then done.
      if (waited) return;
      waited = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

void source_collector::impl::disable(context_state& c) noexcept {
  if (!c.enabled) return;
  auto off = CUpti_PCSamplingDisableParams{};
  off.size = CUpti_PCSamplingDisableParamsSize;
  off.ctx = c.ctx;
  cuptiPCSamplingDisable(&off);
  c.enabled = false;
}

std::optional<source::line_location> source_collector::impl::correlate(std::uint64_t crc, const std::string& fn,
                                                                       std::uint64_t pc) const {
  auto it = cubins.find(crc);
  if (it == cubins.end()) return std::nullopt;
  auto p = CUpti_GetSassToSourceCorrelationParams{};
  p.size = CUpti_GetSassToSourceCorrelationParamsSize;
  p.cubin = it->second.data();
  p.cubinSize = it->second.size();
  p.functionName = fn.c_str();
  p.pcOffset = pc;
  source::line_location loc;
  // Without -lineinfo CUPTI may succeed with no file name (seen on the H100) or fail: both mean no line.
  if (cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS && p.fileName) {
    const std::string dir = p.dirName ? p.dirName : "";
    const std::string file = p.fileName;
    loc.file = dir.empty() || (!file.empty() && file[0] == '/') ? file : dir + "/" + file;
    loc.line = p.lineNumber;
  }
  std::free(p.fileName);
  std::free(p.dirName);
  return loc;
}

// Device support, chip, metric ids, then the per-device configuration; throws with the cause.
void source_collector::impl::sass_configure(CUcontext ctx) {
  auto need = [](CUptiResult r, const char* what) {
    if (r != CUPTI_SUCCESS) throw source_unavailable(fmt::format("{} failed: {}", what, why(r)));
  };
  const auto device = device_of(ctx);
  if (!device) throw source_unavailable("the context's device is unknown");
  auto init = sized<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  need(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
  auto supported = sized<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  supported.cuDevice = static_cast<CUdevice>(*device);
  supported.api = CUPTI_PROFILER_SASS_METRICS;
  need(cuptiProfilerDeviceSupported(&supported), "cuptiProfilerDeviceSupported");
  if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    throw source_unavailable("this GPU or driver does not support SASS metrics");
  auto chip = sized<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = *device;
  need(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
  std::vector<CUpti_SassMetrics_Config> configs;
  for (const char* name : sass_metric_names) {
    auto props = sized<CUpti_SassMetrics_GetProperties_Params>(CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE);
    props.pChipName = chip.pChipName;
    props.pMetricName = name;
    need(cuptiSassMetricsGetProperties(&props), name);
    sass_ids[props.metric.metricId] = name;
    configs.push_back({props.metric.metricId, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU});
  }
  auto set = sized<CUpti_SassMetricsSetConfig_Params>(CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE);
  set.numOfMetricConfig = configs.size();
  set.pConfigs = configs.data();
  set.deviceIndex = *device;
  need(cuptiSassMetricsSetConfig(&set), "cuptiSassMetricsSetConfig");
  sass_device = *device;
  sass_configured = true;
}

void source_collector::impl::sass_start(CUcontext ctx) {
  try {
    sass_configure(ctx);
    // Lazy patching: each function is patched at its first launch in the phase, not all at once.
    auto on = sized<CUpti_SassMetricsEnable_Params>(CUpti_SassMetricsEnable_Params_STRUCT_SIZE);
    on.ctx = ctx;
    on.enableLazyPatching = 1;
    if (CUptiResult r = cuptiSassMetricsEnable(&on); r != CUPTI_SUCCESS)
      throw source_unavailable(fmt::format("cuptiSassMetricsEnable failed: {}", why(r)));
    sass_ctx = ctx;
    sass_enabled = true;
  } catch (const std::exception& e) {
    note(fmt::format("source: SASS metrics unavailable ({}): no sectors per request per line", e.what()));
    sass_stop();
  }
}

// The patched instructions' counts, summed over instances, keyed like the PC records.
void source_collector::impl::sass_read() {
  auto props = sized<CUpti_SassMetricsGetDataProperties_Params>(CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE);
  props.ctx = sass_ctx;
  if (CUptiResult r = cuptiSassMetricsGetDataProperties(&props); r != CUPTI_SUCCESS) {
    note(fmt::format("source: reading SASS metrics failed: {}", why(r)));
    return;
  }
  const std::size_t n = props.numOfPatchedInstructionRecords, instances = props.numOfInstances;
  if (n == 0 || instances == 0) { // said, so a report without sectors per request says why
    note(fmt::format("source: SASS metrics gave no data ({} patched instruction records, {} instances): no sectors "
                     "per request per line",
                     n, instances));
    return;
  }
  std::vector<CUpti_SassMetrics_Data> data(n);
  std::vector<CUpti_SassMetrics_InstanceValue> values(n * instances);
  for (std::size_t i = 0; i < n; ++i) {
    data[i].structSize = sizeof(CUpti_SassMetrics_Data);
    data[i].pInstanceValues = &values[i * instances];
  }
  auto flush = sized<CUpti_SassMetricsFlushData_Params>(CUpti_SassMetricsFlushData_Params_STRUCT_SIZE);
  flush.ctx = sass_ctx;
  flush.numOfPatchedInstructionRecords = n;
  flush.numOfInstances = instances;
  flush.pMetricsData = data.data();
  if (CUptiResult r = cuptiSassMetricsFlushData(&flush); r != CUPTI_SUCCESS) {
    note(fmt::format("source: reading SASS metrics failed: {}", why(r)));
    return;
  }
  // SASS records carry a 32-bit CRC; the cubins are keyed by cuptiGetCubinCrc's 64-bit value.
  std::map<std::uint32_t, std::uint64_t> full_crc;
  for (const auto& [crc, bytes] : cubins) full_crc[static_cast<std::uint32_t>(crc)] = crc;
  for (const auto& d : data) {
    const std::uint32_t crc32 = d.cubinCrc;
    const auto full = full_crc.find(crc32);
    source::sass_record rec{full == full_crc.end() ? crc32 : full->second, d.pcOffset,
                            d.functionName ? d.functionName : "", {}};
    for (std::size_t i = 0; i < instances; ++i) {
      auto name = sass_ids.find(d.pInstanceValues[i].metricId);
      if (name != sass_ids.end()) rec.metrics[name->second] += d.pInstanceValues[i].value;
    }
    sass.push_back(std::move(rec));
  }
  const auto unmatched = std::count_if(data.begin(), data.end(), [&](const auto& d) { return !full_crc.count(d.cubinCrc); });
  if (unmatched)
    note(fmt::format("source: {} of {} SASS metric records name a cubin this pass did not see loaded; their lines "
                     "have no sectors per request",
                     unmatched, data.size()));
}

void source_collector::impl::sass_stop() noexcept {
  if (sass_enabled) {
    auto off = sized<CUpti_SassMetricsDisable_Params>(CUpti_SassMetricsDisable_Params_STRUCT_SIZE);
    off.ctx = sass_ctx;
    cuptiSassMetricsDisable(&off);
    sass_enabled = false;
  }
  if (sass_configured) {
    auto unset = sized<CUpti_SassMetricsUnsetConfig_Params>(CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE);
    unset.deviceIndex = sass_device;
    cuptiSassMetricsUnsetConfig(&unset);
    sass_configured = false;
  }
}

source_collector::source_collector(collector_options options) : m(std::make_unique<impl>()) {
  if (options.external_callbacks) return;
  cupti::subscription sub = cupti::subscribe(&subscribed_callback, m.get(), "speedlab-source");
  if (!sub.ok) throw source_unavailable(sub.error);
  m->subscriber = sub.handle;
  m->subscribed = true;
  for (CUpti_CallbackId id : {CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CUPTI_CBID_RESOURCE_MODULE_LOADED}) {
    if (CUptiResult r = cuptiEnableCallback(1, m->subscriber, CUPTI_CB_DOMAIN_RESOURCE, id); r != CUPTI_SUCCESS) {
      cuptiUnsubscribe(m->subscriber);
      m->subscribed = false;
      throw source_unavailable(fmt::format("cuptiEnableCallback(resource) failed: {}", why(r)));
    }
  }
}

source_collector::~source_collector() {
  if (!m) return;
  m->sass_stop();
  for (auto& c : m->contexts) m->disable(c);
  if (m->subscribed) cuptiUnsubscribe(m->subscriber);
  for (char* name : m->function_names) std::free(name);
}

void source_collector::start() {
  std::lock_guard lock(m->mutex);
  if (m->contexts.empty() && m->messages.empty())
    m->note("source: no CUDA context was created after the source pass subscribed; no source view");
  m->pass_start = now_ns();
  for (auto& c : m->contexts) {
    auto p = CUpti_PCSamplingStartParams{};
    p.size = CUpti_PCSamplingStartParamsSize;
    p.ctx = c.ctx;
    if (CUptiResult r = cuptiPCSamplingStart(&p); r != CUPTI_SUCCESS)
      m->note(fmt::format("source: cuptiPCSamplingStart failed: {}", why(r)));
    else c.started = true;
  }
}

void source_collector::next_phase() {
  std::lock_guard lock(m->mutex);
  stop_sampling();
  // The samples are read: sampling is switched off before the kernels are patched (the two
  // were not checked together).
  for (auto& c : m->contexts) m->disable(c);
  // SPEEDLAB_SOURCE_SASS=off: PC sampling only (a diagnostic, and a way around a driver
  // whose patching misbehaves).
  if (const char* v = std::getenv("SPEEDLAB_SOURCE_SASS"); v && std::string_view(v) == "off") return;
  if (!m->contexts.empty()) m->sass_start(m->contexts.front().ctx);
}

void source_collector::stop() {
  std::lock_guard lock(m->mutex);
  if (m->sass_enabled) {
    if (!synchronize(m->sass_ctx)) m->note("source: the context could not be synchronized before reading SASS metrics");
    m->sass_read();
    m->sass_stop();
    return;
  }
  stop_sampling();
  // Read: sampling off, so a context destroyed later has nothing of ours enabled on it.
  for (auto& c : m->contexts) m->disable(c);
}

bool source_collector::abandon_sass() {
  std::lock_guard lock(m->mutex);
  if (!m->sass_enabled) return false;
  m->sass_stop();
  m->note("source: the program ended inside the SASS metrics window (raise the launches or lower "
          "--source-launches): no sectors per request per line");
  return true;
}

// Called with the mutex held.
void source_collector::stop_sampling() {
  for (auto& c : m->contexts) {
    if (!c.started) continue;
    if (!synchronize(c.ctx)) m->note("source: the context could not be synchronized before reading samples");
    m->pass_end = now_ns();
    auto p = CUpti_PCSamplingStopParams{};
    p.size = CUpti_PCSamplingStopParamsSize;
    p.ctx = c.ctx;
    if (CUptiResult r = cuptiPCSamplingStop(&p); r != CUPTI_SUCCESS)
      m->note(fmt::format("source: cuptiPCSamplingStop failed: {}", why(r)));
    c.started = false;
    m->read_samples(c);
  }
}

namespace {

// SPEEDLAB_SOURCE_DUMP=<dir>: the raw records as CUPTI gave them (stall names by index, PC
// records, each PC's file:line from the cubin's table) in <dir>/source-<pid>.json, so the
// folding is tested on real records without a GPU (tests/fixtures/source).
void dump_raw(const source_collector::impl& m, const source::correlate_function& correlate) {
  const char* dir = std::getenv("SPEEDLAB_SOURCE_DUMP");
  if (!dir || !*dir) return;
  nlohmann::json j;
  for (const auto& [index, name] : m.stall_names) j["stall_names"][std::to_string(index)] = name;
  j["records"] = nlohmann::json::array();
  j["lines"] = nlohmann::json::array();
  std::set<std::tuple<std::uint64_t, std::string, std::uint64_t>> seen;
  auto add_line = [&](std::uint64_t crc, const std::string& fn, std::uint64_t pc) {
    if (!seen.insert({crc, fn, pc}).second) return;
    nlohmann::json line = {{"cubin_crc", crc}, {"function", fn}, {"pc_offset", pc}};
    if (auto loc = correlate(crc, fn, pc)) {
      line["file"] = loc->file;
      line["line"] = loc->line;
    } else {
      line["unknown_cubin"] = true;
    }
    j["lines"].push_back(std::move(line));
  };
  for (const auto& r : m.records) {
    j["records"].push_back({{"cubin_crc", r.cubin_crc}, {"pc_offset", r.pc_offset}, {"function", r.function}, {"stalls", r.stalls}});
    add_line(r.cubin_crc, r.function, r.pc_offset);
  }
  for (const auto& r : m.sass) add_line(r.cubin_crc, r.function, r.pc_offset);
  j["sass"] = nlohmann::json::array();
  for (const auto& r : m.sass)
    j["sass"].push_back({{"cubin_crc", r.cubin_crc}, {"pc_offset", r.pc_offset}, {"function", r.function}, {"metrics", r.metrics}});
  for (const auto& [crc, bytes] : m.cubins) j["cubins"].push_back({{"cubin_crc", crc}, {"size", bytes.size()}});
  std::ofstream(fmt::format("{}/source-{}.json", dir, ::getpid())) << j.dump(1) << '\n';
}

} // namespace

source::source_pass source_collector::take() {
  std::lock_guard lock(m->mutex);
  source::source_pass pass;
  pass.pass_wall_ns = m->pass_end > m->pass_start ? static_cast<double>(m->pass_end - m->pass_start) : 0;
  pass.dropped_samples = m->dropped;
  const auto correlate = [this](std::uint64_t crc, const std::string& fn, std::uint64_t pc) {
    return m->correlate(crc, fn, pc);
  };
  dump_raw(*m, correlate);
  pass.kernels = source::fold(m->records, m->stall_names, correlate, m->sass, &source::read_source_line);
  if (!m->sass.empty()) pass.method = "pc_sampling+sass_metrics";
  for (const auto& k : pass.kernels) pass.total_samples += k.samples;
  for (auto& n : source::pass_notes(pass)) m->note(std::move(n));
  m->records.clear();
  m->sass.clear();
  return pass;
}

std::vector<std::string> source_collector::messages() const {
  std::lock_guard lock(m->mutex);
  return m->messages;
}

} // namespace speedlab::profiling::source_core
