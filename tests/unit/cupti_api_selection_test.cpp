// The runtime and driver calls the injection library records by default
// (cupti::analysis_callback_ids, docs/profile-format.md "What is recorded"): every call the
// analysis classifies (launches, synchronizations, copies, memsets, allocations, frees) and
// none of the others. CUPTI names the callback ids without a GPU.
#include "speedlab_catch.hpp"

#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_CUPTI

#include <set>
#include <string>

#include "model/cuda_api.hpp"
#include "profilers/cupti/cupti_collector.hpp"

namespace {

std::set<std::string> names(CUpti_CallbackDomain domain) {
  std::set<std::string> out;
  for (CUpti_CallbackId id : speedlab::profiling::cupti::analysis_callback_ids(domain)) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name)
      out.insert(std::string(speedlab::trace::strip_api_version(name)));
  }
  return out;
}

} // namespace

TEST_CASE("cupti api selection: the calls the analysis reads, and no other", "[cupti_api_selection]") {
  const auto runtime = names(CUPTI_CB_DOMAIN_RUNTIME_API);
  const auto driver = names(CUPTI_CB_DOMAIN_DRIVER_API);
  if (runtime.empty() && driver.empty()) {
    WARN("SKIPPED: this libcupti names no callback ids here");
    return;
  }
  for (const char* n : {"cudaLaunchKernel", "cudaGraphLaunch", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemsetAsync",
                        "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMalloc",
                        "cudaFree", "cudaMallocHost"})
    CHECK(runtime.count(n) == 1);
  // NCCL launches through cuLaunchKernelEx; CuPy and Numba through cuLaunchKernel and copy
  // with cuMemcpy*.
  for (const char* n : {"cuLaunchKernel", "cuLaunchKernelEx", "cuMemcpyHtoD", "cuMemcpyDtoHAsync", "cuCtxSynchronize",
                        "cuStreamSynchronize", "cuMemAlloc", "cuMemFree"})
    CHECK(driver.count(n) == 1);
  // What PyTorch calls around each launch, and other bookkeeping: not recorded.
  for (const char* n : {"cudaGetDevice", "cudaSetDevice", "cudaStreamIsCapturing", "cudaGetLastError",
                        "cudaEventRecord", "cudaPeekAtLastError"})
    CHECK(runtime.count(n) == 0);
  for (const char* n : {"cuCtxGetCurrent", "cuDeviceGetAttribute", "cuModuleGetFunction", "cuStreamCreate"})
    CHECK(driver.count(n) == 0);
  // Every id selected is classified as something the analysis uses.
  for (const auto& n : runtime) CHECK(speedlab::trace::classify_api(n) != speedlab::trace::api_kind::other);
}

#endif
