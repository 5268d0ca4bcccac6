#include "analysis/occupancy.hpp"

#include <algorithm>
#include <climits>

#include "model/device_keys.hpp"

namespace speedlab::analysis {

namespace {
int round_up(int x, int unit) { return unit > 0 ? (x + unit - 1) / unit * unit : x; }
int div_up(int x, int y) { return (x + y - 1) / y; }
} // namespace

sm_limits sm_limits::from(const device_model& d) {
  sm_limits l;
  auto set = [&](const char* key, int& field) {
    if (auto v = property_number(d, key); v && *v > 0) field = static_cast<int>(*v);
  };
  set(keys::prop_warp_size, l.warp_size);
  set(keys::prop_max_threads_per_sm, l.max_threads_per_sm);
  set(keys::prop_max_blocks_per_sm, l.max_blocks_per_sm);
  set(keys::prop_regs_per_sm, l.regs_per_sm);
  set(keys::prop_regs_per_block, l.regs_per_block);
  set(keys::prop_smem_per_sm, l.smem_per_sm);
  set(keys::prop_smem_per_block_optin, l.smem_per_block);
  set(keys::prop_reserved_smem_per_block, l.reserved_smem_per_block);
  if (const ceiling* c = find_ceiling(d.gpu, keys::sm_count)) l.sm_count = static_cast<int>(c->value);
  return l;
}

occupancy_result theoretical_occupancy(int threads, int regs, int smem, const sm_limits& l) {
  occupancy_result r;
  r.threads_per_block = threads;
  if (threads <= 0 || threads > l.max_threads_per_block || regs > l.max_regs_per_thread || smem < 0) {
    r.limiter = "invalid";
    return r;
  }
  r.warps_per_block = div_up(threads, l.warp_size);
  const int max_warps = l.max_threads_per_sm / l.warp_size;

  r.blocks_by_limit = l.max_blocks_per_sm;
  r.blocks_by_warps = max_warps / r.warps_per_block;

  // Registers: per warp, rounded to the allocation unit, each sub-partition holding a
  // quarter of the register file. The launch check rounds warps up to the sub-partitions.
  const int regs_per_warp = round_up(std::max(regs, 0) * l.warp_size, l.reg_alloc_unit);
  if (regs_per_warp == 0) {
    r.blocks_by_registers = INT_MAX;
  } else if (regs_per_warp * round_up(r.warps_per_block, l.sub_partitions) > l.regs_per_block) {
    r.blocks_by_registers = 0;
  } else {
    const int warps_per_sub = (l.regs_per_sm / l.sub_partitions) / regs_per_warp;
    r.blocks_by_registers = warps_per_sub * l.sub_partitions / r.warps_per_block;
  }

  // Shared memory, with the per-block reservation the driver adds (sm_80+).
  const int smem_alloc = round_up(smem + l.reserved_smem_per_block, l.smem_alloc_unit);
  if (smem_alloc > l.smem_per_block + l.reserved_smem_per_block) r.blocks_by_shared = 0;
  else r.blocks_by_shared = smem_alloc > 0 ? l.smem_per_sm / smem_alloc : INT_MAX;

  r.blocks_per_sm = std::min({r.blocks_by_limit, r.blocks_by_warps, r.blocks_by_registers, r.blocks_by_shared});
  r.active_warps = r.blocks_per_sm * r.warps_per_block;
  r.occupancy = max_warps > 0 ? static_cast<double>(r.active_warps) / max_warps : 0;
  // Name the tightest limit; ties go to the resource the programmer controls most directly.
  if (r.blocks_per_sm == 0) r.limiter = r.blocks_by_registers == 0 ? "registers" : "shared memory";
  else if (r.blocks_per_sm == r.blocks_by_registers && r.blocks_by_registers < r.blocks_by_warps) r.limiter = "registers";
  else if (r.blocks_per_sm == r.blocks_by_shared && r.blocks_by_shared < r.blocks_by_warps) r.limiter = "shared memory";
  else if (r.blocks_per_sm == r.blocks_by_limit && r.blocks_by_limit < r.blocks_by_warps) r.limiter = "blocks";
  else r.limiter = "warps";
  return r;
}

double waves(double blocks, int blocks_per_sm, int sm_count) {
  const double slots = static_cast<double>(blocks_per_sm) * sm_count;
  return slots > 0 ? blocks / slots : 0;
}

} // namespace speedlab::analysis
