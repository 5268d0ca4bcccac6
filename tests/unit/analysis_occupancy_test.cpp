// The occupancy calculator against values worked out by hand from the sm_90 limits (and,
// where the CUDA toolkit is present, against NVIDIA's own cuda_occupancy.h).
#include "speedlab_catch.hpp"

#include <speedlab/config.hpp>

#include "analysis/occupancy.hpp"

#if SPEEDLAB_HAS_CUDA && __has_include(<cuda_occupancy.h>)
#include <cuda_occupancy.h>
#define SPEEDLAB_TEST_CUDA_OCC 1
#endif

using speedlab::analysis::theoretical_occupancy;

TEST_CASE("occupancy: known sm_90 values", "[analysis][occupancy]") {
  auto o = theoretical_occupancy(256, 32, 0);
  CHECK(o.blocks_per_sm == 8);
  CHECK(o.occupancy == Approx(1.0));
  CHECK(o.limiter == "warps");

  o = theoretical_occupancy(256, 64, 0); // 2048 regs/warp: 8 warps per sub-partition
  CHECK(o.blocks_per_sm == 4);
  CHECK(o.occupancy == Approx(0.5));
  CHECK(o.limiter == "registers");

  o = theoretical_occupancy(1024, 64, 0);
  CHECK(o.blocks_per_sm == 1);
  CHECK(o.occupancy == Approx(0.5));

  o = theoretical_occupancy(1024, 65, 0); // 2304 regs/warp x 32 warps > 65536: cannot launch
  CHECK(o.blocks_per_sm == 0);
  CHECK(o.limiter == "registers");

  o = theoretical_occupancy(256, 255, 0); // 8192 regs/warp: 2 warps per sub-partition
  CHECK(o.blocks_per_sm == 1);
  CHECK(o.occupancy == Approx(0.125));

  o = theoretical_occupancy(32, 16, 0); // block limit 32 x 1 warp
  CHECK(o.blocks_per_sm == 32);
  CHECK(o.occupancy == Approx(0.5));
  CHECK(o.limiter == "blocks");

  o = theoretical_occupancy(256, 32, 48 * 1024); // (48 + 1) KiB per block: 4 blocks in 228 KiB
  CHECK(o.blocks_by_shared == 4);
  CHECK(o.blocks_per_sm == 4);
  CHECK(o.occupancy == Approx(0.5));
  CHECK(o.limiter == "shared memory");

  o = theoretical_occupancy(96, 40, 0); // 1280 regs/warp: 12 warps per sub-partition, 48 warps
  CHECK(o.blocks_per_sm == 16);
  CHECK(o.occupancy == Approx(0.75));

  o = theoretical_occupancy(100, 32, 0); // 100 threads still take 4 warps
  CHECK(o.warps_per_block == 4);
  CHECK(o.blocks_per_sm == 16);

  CHECK(theoretical_occupancy(2048, 32, 0).limiter == "invalid");
  CHECK(theoretical_occupancy(256, 32, 300 * 1024).blocks_per_sm == 0);
}

TEST_CASE("waves count full GPU loads of blocks", "[analysis][occupancy]") {
  CHECK(speedlab::analysis::waves(132 * 8, 8, 132) == Approx(1.0));
  CHECK(speedlab::analysis::waves(40, 8, 132) == Approx(40.0 / 1056));
  CHECK(speedlab::analysis::waves(10, 0, 132) == 0);
}

TEST_CASE("device limits come from the probed properties", "[analysis][occupancy]") {
  speedlab::analysis::device_model d;
  d.properties["regs_per_sm"] = "32768";
  d.properties["max_threads_per_sm"] = "1536";
  d.gpu["sm_count"] = {84, "count", false, "test"};
  const auto l = speedlab::analysis::sm_limits::from(d);
  CHECK(l.regs_per_sm == 32768);
  CHECK(l.max_threads_per_sm == 1536);
  CHECK(l.sm_count == 84);
  CHECK(l.max_blocks_per_sm == 32); // default kept
}

#ifdef SPEEDLAB_TEST_CUDA_OCC
TEST_CASE("occupancy agrees with cuda_occupancy.h over a grid of launches", "[analysis][occupancy]") {
  cudaOccDeviceProp prop;
  prop.computeMajor = 9;
  prop.computeMinor = 0;
  prop.maxThreadsPerBlock = 1024;
  prop.maxThreadsPerMultiprocessor = 2048;
  prop.regsPerBlock = 65536;
  prop.regsPerMultiprocessor = 65536;
  prop.warpSize = 32;
  prop.sharedMemPerBlock = 48 * 1024;
  prop.sharedMemPerMultiprocessor = 233472;
  prop.numSms = 132;
  prop.sharedMemPerBlockOptin = 232448;
  prop.reservedSharedMemPerBlock = 1024;
  cudaOccDeviceState state;
  state.cacheConfig = CACHE_PREFER_NONE;
  int checked = 0;
  for (int threads : {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024})
    for (int regs : {16, 24, 32, 40, 48, 64, 72, 96, 128, 168, 255})
      for (int smem : {0, 1024, 4096, 12 * 1024, 40 * 1024}) {
        cudaOccFuncAttributes attr;
        attr.maxThreadsPerBlock = 1024;
        attr.numRegs = regs;
        attr.sharedSizeBytes = static_cast<size_t>(smem);
        attr.partitionedGCConfig = PARTITIONED_GC_OFF;
        attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        attr.maxDynamicSharedSizeBytes = 0;
        cudaOccResult res;
        if (cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &attr, &state, threads, 0) != CUDA_OCC_SUCCESS)
          continue;
        const auto mine = theoretical_occupancy(threads, regs, smem);
        INFO("threads " << threads << " regs " << regs << " smem " << smem);
        CHECK(mine.blocks_per_sm == res.activeBlocksPerMultiprocessor);
        ++checked;
      }
  CHECK(checked > 400);
}
#endif
