// speedlab plugin SDK: why a CUDA device cannot be used here, told by its cause.
//
// The CUDA runtime names one error for several causes: without any NVIDIA driver it says
// "cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime version)",
// which sends a user to upgrade a driver that is not there. classify() takes what was found
// (gathered by speedlab::cuda::gpu_facts() in <speedlab/cuda.hpp>, or set by a test) and
// says which cause it is and what to do:
//
//   speedlab::gpu::facts f;            // what was found on this machine
//   f.driver_loadable = false;         // libcuda.so.1 does not load
//   speedlab::gpu::verdict v = speedlab::gpu::classify(f);
//   // v.cause == cause::no_driver; v.reason == "no NVIDIA driver found (...): ..."
//
// C++17, standard library only, no CUDA header: the host program and its tests use it too.
// A plugin calls it inside itself (no type here crosses the plugin boundary: the ABI is
// unchanged).
#pragma once

#include <string>

#include <speedlab/enum_words.hpp>

namespace speedlab::gpu {

// What was found, in the order a CUDA program meets it.
struct facts {
  bool cuda_built = true;        // built with a CUDA toolkit (else no CUDA code at all)
  bool driver_loadable = true;   // dlopen("libcuda.so.1") succeeded
  std::string driver_load_error; // dlerror() when it did not
  int driver_version = 0;        // cudaDriverGetVersion (1000 * major + 10 * minor; 0: none)
  int runtime_version = 0;       // cudaRuntimeGetVersion of the runtime linked in
  int error = 0;                 // cudaGetDeviceCount's cudaError_t (0: cudaSuccess)
  std::string error_name;        // cudaGetErrorName of it
  std::string error_text;        // cudaGetErrorString of it
  int device_count = 0;          // cudaGetDeviceCount's count
  bool device_nodes = true;      // /dev/nvidiactl exists (the kernel module is loaded)
  std::string denied_node;       // a /dev/nvidia* node that exists but is not readable and writable
  std::string visible_devices;   // CUDA_VISIBLE_DEVICES when set
  bool visible_devices_set = false;
};

enum class cause { usable, cuda_less_build, no_driver, no_device, driver_too_old, no_permission, other };

struct verdict {
  gpu::cause cause = cause::usable;
  std::string reason; // empty when usable
};

// The cudaError_t values classify() tells apart (checked against <cuda_runtime.h> in cuda.hpp).
inline constexpr int error_insufficient_driver = 35;
inline constexpr int error_devices_unavailable = 46;
inline constexpr int error_no_device = 100;
inline constexpr int error_not_permitted = 800;
inline constexpr int error_system_driver_mismatch = 803;

// "12.4" from 12040.
inline std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

inline constexpr enum_word<cause> cause_words[] = {
    {cause::usable, "usable"},    {cause::cuda_less_build, "cuda-less build"}, {cause::no_driver, "no driver"},
    {cause::no_device, "no GPU"}, {cause::driver_too_old, "driver too old"},   {cause::no_permission, "no permission"},
    {cause::other, "other"}};

inline const char* cause_name(cause c) { return word_of(c, cause_words, "other"); }

namespace detail {
inline verdict no_device_verdict(const facts& f) {
  const std::string driver = "an NVIDIA driver is installed (libcuda.so.1" +
                             (f.driver_version > 0 ? ", CUDA " + version_text(f.driver_version) : std::string()) + ")";
  if (!f.device_nodes)
    return {cause::no_device, driver + " but there is no GPU: no /dev/nvidiactl (no NVIDIA GPU in this machine, the "
                                       "driver's kernel module not loaded, or a container started without its GPUs, "
                                       "e.g. docker --gpus all); nvidia-smi says which"};
  if (f.visible_devices_set)
    return {cause::no_device, driver + " but CUDA_VISIBLE_DEVICES='" + f.visible_devices +
                                  "' hides every GPU: unset it or name a GPU nvidia-smi lists"};
  return {cause::no_device, driver + " but it reports no CUDA device: nvidia-smi lists what the driver sees"};
}
} // namespace detail

// The cause, and a sentence saying it with what to do. Usable: cause::usable, empty reason.
inline verdict classify(const facts& f) {
  if (!f.cuda_built)
    return {
        cause::cuda_less_build,
        "this build has no CUDA (no CUDA toolkit was found when it was compiled): rebuild with the toolkit (nvcc on "
        "the PATH or in /usr/local/cuda) for the CUDA variants and GPU profiling; the CPU variants run"};
  if (f.error == 0 && f.device_count > 0) return {};
  if (!f.driver_loadable)
    return {cause::no_driver, "no NVIDIA driver found (libcuda.so.1 cannot be loaded" +
                                  (f.driver_load_error.empty() ? std::string() : ": " + f.driver_load_error) +
                                  "): CUDA code needs an NVIDIA GPU and its driver; install the driver where "
                                  "there is a GPU (nvidia-smi then lists it), or run them on a GPU machine"};
  if (!f.denied_node.empty() || f.error == error_not_permitted)
    return {cause::no_permission,
            "no permission to the GPU device" + (f.denied_node.empty() ? std::string() : " (" + f.denied_node + ")") +
                ": add this user to the group that owns it (ls -l /dev/nvidia*; often 'video' or 'render') and log in "
                "again, or ask the machine's administrator"};
  if (f.error == error_insufficient_driver)
    return {cause::driver_too_old,
            "the NVIDIA driver is too old for this build: it supports CUDA " +
                (f.driver_version > 0 ? version_text(f.driver_version) : std::string("(unknown)")) +
                ", the CUDA runtime built in is " + version_text(f.runtime_version) + ": install a driver for CUDA " +
                version_text(f.runtime_version) + " or later (nvidia-smi shows the driver's CUDA version)"};
  if (f.error == error_system_driver_mismatch)
    return {cause::other, "the NVIDIA driver's library and kernel module differ in version "
                          "(cudaErrorSystemDriverMismatch): reboot after a driver update, or reinstall the driver"};
  if (f.error == error_devices_unavailable)
    return {cause::other, "every GPU is busy or reserved (cudaErrorDevicesUnavailable: exclusive-process or "
                          "prohibited compute mode, nvidia-smi -q shows it): wait for the other program or ask for "
                          "the compute mode to be changed"};
  if (f.error == error_no_device || (f.error == 0 && f.device_count == 0)) return detail::no_device_verdict(f);
  return {cause::other, "no usable CUDA device: " + f.error_name + " (" + f.error_text + ")"};
}

} // namespace speedlab::gpu
