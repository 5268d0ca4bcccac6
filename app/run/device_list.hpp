// `speedlab run --devices all|0,1,...`: each point runs on every listed GPU in turn, the
// device part of the point's identity (its "device" parameter, which the plugin never sees),
// each device with its own calibration (device-<N>.json). A point's child process sees only
// its GPU (CUDA_VISIBLE_DEVICES narrowed to it), so plugins keep using device 0. Without
// --devices nothing changes: device 0, no "device" parameter.
//
//   const gpu_census gpus = count_gpus(60);             // in a child: CUDA stays out of this process
//   std::vector<int> devices = parse_device_list("all", gpus);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace speedlab::app {

// The point parameter that holds the device index.
inline constexpr const char* device_param = "device";

struct gpu_census {
  int count = 0;
  std::string why_none; // when count is 0: no toolkit in this build, no driver, no device...
};

// The CUDA devices this process can see (respecting CUDA_VISIBLE_DEVICES), counted in a
// child process so that CUDA is never initialized in the caller.
gpu_census count_gpus(double timeout_s);

// "all" or comma-separated indices (each once, in the order given). Throws config_error
// with a clear message for an empty list, a malformed or repeated index, an index the
// machine does not have, or any device on a machine without a usable GPU.
std::vector<int> parse_device_list(const std::string& spec, const gpu_census& gpus);

// CUDA_VISIBLE_DEVICES for a child that must see only device `index` of those this process
// sees: the index-th entry of `current` (the variable's value, nullptr when unset), else the
// index itself. Throws config_error when `current` lists fewer devices.
std::string visible_devices_for(int index, const char* current);

// The device of a planned point, taken out of its parameters (nullopt: none set).
std::optional<int> take_device(std::map<std::string, std::string>& params);

} // namespace speedlab::app
