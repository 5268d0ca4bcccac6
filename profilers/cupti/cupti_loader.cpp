// libcupti loaded when first called, not linked: the speedlab program must start (list, CPU
// variants, analysis, reports) where no CUDA toolkit is installed, e.g. the Debian package
// on plain Debian 12, which only recommends NVIDIA's cuda-cupti package. Each CUPTI function
// the program calls is defined here with the header's own parameters (a mismatch does not
// compile: two C functions of one name) and forwards to libcupti's; when libcupti cannot be
// loaded it returns CUPTI_ERROR_NOT_INITIALIZED and cuptiGetResultString says why, so the
// callers' existing error paths ("libcupti is not usable: ...") name the missing library.
// A CUPTI function called without an entry here fails to link the program (undefined
// reference): add it below. The injection library links libcupti itself.
#include <dlfcn.h>

#include <string>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_pcsampling.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

namespace {

struct cupti_library {
  void* handle = nullptr;
  std::string error;
  cupti_library() {
    // The program's RUNPATH (the toolkit's library folder) is searched, then ld.so's paths.
    handle = dlopen(SPEEDLAB_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      error = std::string(SPEEDLAB_CUPTI_SONAME " could not be loaded (") + (why ? why : "no reason given") +
              "): CUPTI comes with the CUDA toolkit or NVIDIA's package " SPEEDLAB_CUPTI_PACKAGE;
    }
  }
};

const cupti_library& library() {
  static const cupti_library lib; // thread-safe, loaded once
  return lib;
}

void* symbol(const char* name) {
  const auto& lib = library();
  return lib.handle ? dlsym(lib.handle, name) : nullptr;
}

} // namespace

#define SPEEDLAB_CUPTI_FORWARD(name, params, args)                                                                     \
  extern "C" CUptiResult CUPTIAPI name params {                                                                        \
    static const auto fn = reinterpret_cast<decltype(&name)>(symbol(#name));                                           \
    return fn ? fn args : CUPTI_ERROR_NOT_INITIALIZED;                                                                 \
  }

extern "C" CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  static const auto fn = reinterpret_cast<decltype(&cuptiGetResultString)>(symbol("cuptiGetResultString"));
  if (fn) return fn(result, str);
  if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
  *str = library().error.c_str();
  return CUPTI_SUCCESS;
}

SPEEDLAB_CUPTI_FORWARD(cuptiActivityDisable, (CUpti_ActivityKind kind), (kind))
SPEEDLAB_CUPTI_FORWARD(cuptiActivityEnable, (CUpti_ActivityKind kind), (kind))
SPEEDLAB_CUPTI_FORWARD(cuptiActivityEnableRuntimeApi, (CUpti_CallbackId cbid, uint8_t enable), (cbid, enable))
SPEEDLAB_CUPTI_FORWARD(cuptiActivityFlushAll, (uint32_t flag), (flag))
SPEEDLAB_CUPTI_FORWARD(cuptiActivityGetNextRecord,
                       (uint8_t * buffer, size_t validBufferSizeBytes, CUpti_Activity** record),
                       (buffer, validBufferSizeBytes, record))
SPEEDLAB_CUPTI_FORWARD(cuptiActivityGetNumDroppedRecords, (CUcontext context, uint32_t streamId, size_t* dropped),
                       (context, streamId, dropped))
SPEEDLAB_CUPTI_FORWARD(cuptiActivityRegisterCallbacks,
                       (CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                        CUpti_BuffersCallbackCompleteFunc funcBufferCompleted),
                       (funcBufferRequested, funcBufferCompleted))
SPEEDLAB_CUPTI_FORWARD(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc funcTimestamp),
                       (funcTimestamp))
SPEEDLAB_CUPTI_FORWARD(cuptiActivitySetAttribute, (CUpti_ActivityAttribute attr, size_t* valueSize, void* value),
                       (attr, valueSize, value))
SPEEDLAB_CUPTI_FORWARD(cuptiDeviceGetChipName, (CUpti_Device_GetChipName_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiEnableCallback,
                       (uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                        CUpti_CallbackId cbid),
                       (enable, subscriber, domain, cbid))
SPEEDLAB_CUPTI_FORWARD(cuptiGetCallbackName, (CUpti_CallbackDomain domain, uint32_t cbid, const char** name),
                       (domain, cbid, name))
SPEEDLAB_CUPTI_FORWARD(cuptiGetTimestamp, (uint64_t * timestamp), (timestamp))
SPEEDLAB_CUPTI_FORWARD(cuptiGetVersion, (uint32_t * version), (version))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerDeviceSupported, (CUpti_Profiler_DeviceSupported_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerGetCounterAvailability, (CUpti_Profiler_GetCounterAvailability_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerHostConfigAddMetrics, (CUpti_Profiler_Host_ConfigAddMetrics_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerHostDeinitialize, (CUpti_Profiler_Host_Deinitialize_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerHostEvaluateToGpuValues, (CUpti_Profiler_Host_EvaluateToGpuValues_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerHostGetConfigImage, (CUpti_Profiler_Host_GetConfigImage_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerHostGetConfigImageSize, (CUpti_Profiler_Host_GetConfigImageSize_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerHostGetNumOfPasses, (CUpti_Profiler_Host_GetNumOfPasses_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerHostInitialize, (CUpti_Profiler_Host_Initialize_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiProfilerInitialize, (CUpti_Profiler_Initialize_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerCounterDataGetRangeInfo,
                       (CUpti_RangeProfiler_CounterData_GetRangeInfo_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerCounterDataImageInitialize,
                       (CUpti_RangeProfiler_CounterDataImage_Initialize_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerDecodeData, (CUpti_RangeProfiler_DecodeData_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerDisable, (CUpti_RangeProfiler_Disable_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerEnable, (CUpti_RangeProfiler_Enable_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerGetCounterDataInfo, (CUpti_RangeProfiler_GetCounterDataInfo_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerGetCounterDataSize, (CUpti_RangeProfiler_GetCounterDataSize_Params * pParams),
                       (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerSetConfig, (CUpti_RangeProfiler_SetConfig_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerStart, (CUpti_RangeProfiler_Start_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiRangeProfilerStop, (CUpti_RangeProfiler_Stop_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSetThreadIdType, (CUpti_ActivityThreadIdType type), (type))
SPEEDLAB_CUPTI_FORWARD(cuptiSubscribe,
                       (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* userdata),
                       (subscriber, callback, userdata))
SPEEDLAB_CUPTI_FORWARD(cuptiSubscribe_v2,
                       (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* userdata,
                        CUpti_SubscriberParams* pParams),
                       (subscriber, callback, userdata, pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiUnsubscribe, (CUpti_SubscriberHandle subscriber), (subscriber))
// The source pass (profilers/source): PC sampling, SASS-to-source correlation, SASS metrics.
SPEEDLAB_CUPTI_FORWARD(cuptiGetCubinCrc, (CUpti_GetCubinCrcParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiGetSassToSourceCorrelation, (CUpti_GetSassToSourceCorrelationParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingDisable, (CUpti_PCSamplingDisableParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingEnable, (CUpti_PCSamplingEnableParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingGetData, (CUpti_PCSamplingGetDataParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingGetNumStallReasons, (CUpti_PCSamplingGetNumStallReasonsParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingGetStallReasons, (CUpti_PCSamplingGetStallReasonsParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingSetConfigurationAttribute, (CUpti_PCSamplingConfigurationInfoParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingStart, (CUpti_PCSamplingStartParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiPCSamplingStop, (CUpti_PCSamplingStopParams * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSassMetricsDisable, (CUpti_SassMetricsDisable_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSassMetricsEnable, (CUpti_SassMetricsEnable_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSassMetricsFlushData, (CUpti_SassMetricsFlushData_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSassMetricsGetDataProperties, (CUpti_SassMetricsGetDataProperties_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSassMetricsGetProperties, (CUpti_SassMetrics_GetProperties_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSassMetricsSetConfig, (CUpti_SassMetricsSetConfig_Params * pParams), (pParams))
SPEEDLAB_CUPTI_FORWARD(cuptiSassMetricsUnsetConfig, (CUpti_SassMetricsUnsetConfig_Params * pParams), (pParams))
