#include "model/cuda_api.hpp"

#include "speedlab_catch.hpp"

using namespace speedlab::trace;

TEST_CASE("cuda api: version suffixes are stripped, other suffixes kept", "[cuda_api]") {
  CHECK(strip_api_version("cudaMemcpy_v3020") == "cudaMemcpy");
  CHECK(strip_api_version("cuMemcpyHtoD_v2") == "cuMemcpyHtoD");
  CHECK(strip_api_version("cudaStreamSynchronize_ptsz_v7000") == "cudaStreamSynchronize_ptsz");
  CHECK(strip_api_version("cudaLaunchKernel") == "cudaLaunchKernel");
  CHECK(strip_api_version("cuda_vx") == "cuda_vx");
  CHECK(strip_api_version("x_v") == "x_v");
}

TEST_CASE("cuda api: calls that block the host", "[cuda_api]") {
  for (const char* name : {"cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_v3020", "cudaEventSynchronize",
                           "cuCtxSynchronize", "cudaStreamSynchronize_ptsz_v7000", "cudaThreadSynchronize_v3020"}) {
    INFO(name);
    CHECK(classify_api(name) == api_kind::synchronize);
    CHECK(blocks_host(classify_api(name)));
  }
  for (const char* name : {"cudaMemcpy_v3020", "cudaMemcpy2D_v3020", "cuMemcpyHtoD_v2", "cudaMemcpyToSymbol_v3020"}) {
    INFO(name);
    CHECK(classify_api(name) == api_kind::copy_sync);
    CHECK(blocks_host(classify_api(name)));
  }
  for (const char* name : {"cudaMemcpyAsync_v3020", "cudaMemcpy2DAsync_v3020", "cuMemcpyHtoDAsync_v2",
                           "cudaLaunchKernel_v7000", "cudaStreamWaitEvent_v3020", "cudaMemset_v3020",
                           "cudaEventQuery_v3020"}) {
    INFO(name);
    CHECK_FALSE(blocks_host(classify_api(name)));
  }
}

TEST_CASE("cuda api: polls synchronize without blocking the host", "[cuda_api]") {
  for (const char* name : {"cudaEventQuery_v3020", "cudaStreamQuery_v3020", "cuEventQuery", "cuStreamQuery"}) {
    INFO(name);
    CHECK(classify_api(name) == api_kind::poll);
    CHECK(synchronizes(classify_api(name)));
    CHECK_FALSE(blocks_host(classify_api(name)));
  }
  CHECK(synchronizes(classify_api("cudaStreamSynchronize_v3020")));
  CHECK_FALSE(synchronizes(classify_api("cudaStreamWaitEvent_v3020")));
  CHECK_FALSE(synchronizes(classify_api("cudaMemcpy_v3020")));
  CHECK(split_as_waiting(classify_api("cudaEventQuery_v3020")));
  CHECK(split_as_waiting(classify_api("cudaMemcpy_v3020")));
  CHECK_FALSE(split_as_waiting(classify_api("cudaLaunchKernel_v7000")));
}

TEST_CASE("cuda api: launches, memsets, allocations and frees", "[cuda_api]") {
  CHECK(classify_api("cudaLaunchKernel_v7000") == api_kind::launch);
  CHECK(classify_api("cudaLaunchKernelExC_v11060") == api_kind::launch);
  CHECK(classify_api("__cudaLaunchKernel_v13000") == api_kind::launch);
  CHECK(classify_api("cuLaunchKernel") == api_kind::launch);
  CHECK(classify_api("cudaGraphLaunch_v10000") == api_kind::launch);
  CHECK(classify_api("cudaMemset_v3020") == api_kind::memset);
  CHECK(classify_api("cuMemsetD32Async") == api_kind::memset);
  CHECK(classify_api("cudaMalloc_v3020") == api_kind::alloc);
  CHECK(classify_api("cudaMallocHost_v3020") == api_kind::alloc);
  CHECK(classify_api("cudaHostAlloc_v3020") == api_kind::alloc);
  CHECK(classify_api("cuMemAlloc_v2") == api_kind::alloc);
  CHECK(classify_api("cudaMallocAsync_v11020") == api_kind::alloc);
  CHECK(classify_api("cudaFree_v3020") == api_kind::free);
  CHECK(classify_api("cudaFreeHost_v3020") == api_kind::free);
  CHECK(classify_api("cuMemFree_v2") == api_kind::free);
  CHECK(classify_api("cudaGetDevice_v3020") == api_kind::other);
  CHECK(to_string(api_kind::copy_sync) == "copy_sync");
}
