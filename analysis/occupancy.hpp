// Theoretical occupancy of a kernel launch from its resources, the way the CUDA occupancy
// calculator counts them: warps, registers (allocated per warp in units of 256, split over
// four sub-partitions), shared memory (128-byte units plus 1 KiB reserved per block) and the
// block limit. Defaults are the sm_90 (H100/H200) limits.
#pragma once

#include <string>

#include "analysis/analysis.hpp"

namespace speedlab::analysis {

struct sm_limits {
  int warp_size = 32;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int max_threads_per_block = 1024;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  int reg_alloc_unit = 256;      // registers per warp are rounded up to this
  int sub_partitions = 4;        // registers are split evenly among them
  int smem_per_sm = 233472;      // 228 KiB
  int smem_per_block = 232448;   // 227 KiB (opt-in maximum)
  int smem_alloc_unit = 128;
  int reserved_smem_per_block = 1024;
  int sm_count = 132;            // H100 SXM; the device model overrides it

  // The limits of the probed device where known, sm_90 values otherwise.
  static sm_limits from(const device_model& d);
};

struct occupancy_result {
  int threads_per_block = 0;
  int warps_per_block = 0;
  int blocks_by_warps = 0, blocks_by_registers = 0, blocks_by_shared = 0, blocks_by_limit = 0;
  int blocks_per_sm = 0;         // the minimum of the four (0: the launch cannot run)
  int active_warps = 0;
  double occupancy = 0;          // active warps / maximum warps per SM, 0..1
  std::string limiter;           // "warps", "registers", "shared memory", "blocks", "invalid"
};

occupancy_result theoretical_occupancy(int threads_per_block, int registers_per_thread,
                                       int shared_bytes_per_block, const sm_limits& limits = {});

// Waves of a grid: blocks / (SMs x resident blocks per SM).
double waves(double blocks, int blocks_per_sm, int sm_count);

} // namespace speedlab::analysis
