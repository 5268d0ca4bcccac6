// Roofline placement: achieved GB/s and GFLOP/s from the declared work and the measured
// time, against the ceilings of the processor that did the work. GPU variants are placed
// with their kernel time (the compute phase's time when no kernel timing exists) against
// DRAM bandwidth and the FP32/FP64 peak; each kernel of the compute phase is placed with
// its share of the phase's work; CPU variants against host memory bandwidth (one thread
// for serial) and the host's peak estimate.
#pragma once

#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/trace_summary.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

// Fills intensity, achieved rates, roofs, bound and percent from work and time.
// roof_gbps / roof_gflops of 0 mean "unknown".
void place(roofline_point& r, double bytes, double flops, double time_ns, const ceiling* bw_roof,
           const ceiling* flop_roof, double flop_scale = 1.0);

// The phase placement first, then one per kernel of the compute phase. Empty when the
// point declares no work or has no usable time.
std::vector<roofline_point> roofline_for_point(const point_result& p, const trace_summary* t,
                                               const device_model& d);

// The hierarchical roofline from hardware counters (point_result::counters): for each
// distinct (kernel, grid, block), its measured duration, FLOPs of its dominant precision
// and the bytes it moved at each level it was read at, against that level's ceiling: DRAM
// (read-only and write-only bandwidth mixed in the kernel's read/write proportion when
// calibrated, else the copy figure), L2 and L1. Needs no declared work model.
std::vector<roofline_point> counter_roofline_for_point(const point_result& p, const device_model& d);

// The counters' bound on each GPU row of the work roofline (counter_bound, units): a
// kernel's row from the counters of that kernel, the whole phase's from its kernel that
// takes most of a repetition. Rows without matching counters are left as they are.
void attach_counter_bounds(std::vector<roofline_point>& rows, const point_result& p);

// The DRAM roof for a kernel that reads `read` and writes `written` bytes: the time each
// direction takes at its own measured bandwidth, so a read-mostly kernel meets the
// read-only roof rather than the copy roof. Falls back to the copy bandwidth.
ceiling dram_roof_for_mix(const device_model& d, double read, double written);

} // namespace speedlab::analysis
