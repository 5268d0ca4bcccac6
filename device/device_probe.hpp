// What the machine is, without measuring it: GPU properties and datasheet-style ceilings
// (DRAM bandwidth from memory clock x bus width x 2, FP32/FP64 peaks from SMs x lanes x 2
// x clock), host cores and CPU model. Every ceiling here has measured = false;
// calibrate() replaces them with measurements.
//
// Note: probing initializes the CUDA driver in the calling process; do it in a child or
// after the last fork (CUDA state does not survive fork()).
//
//   if (auto why = speedlab::device::gpu_unavailable_reason(); !why.empty()) std::cout << why;
//   speedlab::device_model m = speedlab::device::probe_model();
#pragma once

#include <string>

#include "model/device_model.hpp"

namespace speedlab::device {

// Empty when a CUDA device is usable, else why not (no toolkit at build time, no driver,
// no device, ...).
std::string gpu_unavailable_reason();

// The number of CUDA devices this process sees (0 without a usable GPU).
int gpu_count();

// Properties and estimated ceilings of GPU `device` plus the host facts; host facts only
// when no GPU is usable (properties["gpu_unavailable"] then says why).
speedlab::device_model probe_model(int device = 0);

// Host facts alone: cores, physical cores, CPU model, clock, SIMD width and the peak
// estimates derived from them.
void probe_host(speedlab::device_model& model);

// FP32 lanes per SM for a compute capability (128 for sm_86+ and sm_90, 64 for sm_70/sm_80)
// and the FP64:FP32 throughput ratio (1/2 on sm_60/70/80/90/100, 1/64 or 1/32 elsewhere).
int fp32_lanes_per_sm(int major, int minor);
double fp64_ratio(int major, int minor);

// The key the calibration cache uses for this machine: "gpu-<uuid>", or
// "gpu-<name>-<pci bus id>" without a UUID, or "host-<hostname>" without a GPU.
std::string cache_key(const speedlab::device_model& probed);

} // namespace speedlab::device
