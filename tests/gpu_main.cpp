// Catch2 main for the GPU tests: without a usable CUDA device it prints why and exits 77,
// which CTest reports as skipped (SKIP_RETURN_CODE 77).
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include "speedlab_catch.hpp"
#endif

#include <cstdio>
#include <string>

#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_CUDA
#include "gpu/gpu_kernels.hpp"
#endif

int main(int argc, char* argv[]) {
#if SPEEDLAB_HAS_CUDA
  if (const std::string why = speedlab::gpu_test::device_problem(); !why.empty()) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
#else
  (void)argc;
  (void)argv;
  std::printf("SKIPPED: speedlab was built without CUDA\n");
  return 77;
#endif
}
