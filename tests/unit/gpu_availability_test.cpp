// Why a CUDA device cannot be used, by cause (sdk/include/speedlab/gpu_availability.hpp): each
// cause from the facts a machine would show, injected. The no-driver case also for real on a
// machine without libcuda.so.1 (this test's last case; the CI machines have none).
#include <dlfcn.h>

#include <speedlab/config.hpp>
#include <speedlab/gpu_availability.hpp>

#include "device/device_probe.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab;

namespace {
// A machine with a driver and a runtime of CUDA 13.0 and one GPU, all usable.
gpu::facts working() {
  gpu::facts f;
  f.driver_version = 13000;
  f.runtime_version = 13000;
  f.device_count = 1;
  return f;
}

gpu::facts failing(int error, const char* name) {
  gpu::facts f = working();
  f.device_count = 0;
  f.error = error;
  f.error_name = name;
  f.error_text = "the runtime's text";
  return f;
}

bool says(const gpu::verdict& v, const std::string& what) { return v.reason.find(what) != std::string::npos; }
} // namespace

TEST_CASE("gpu availability: a usable GPU has no reason", "[gpu-availability]") {
  const auto v = gpu::classify(working());
  CHECK(v.cause == gpu::cause::usable);
  CHECK(v.reason.empty());
}

TEST_CASE("gpu availability: no driver is said as such, not as an old driver", "[gpu-availability]") {
  // What the CUDA runtime reports without libcuda.so.1: cudaErrorInsufficientDriver.
  auto f = failing(gpu::error_insufficient_driver, "cudaErrorInsufficientDriver");
  f.driver_loadable = false;
  f.driver_load_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
  f.driver_version = 0;
  f.device_nodes = false;
  const auto v = gpu::classify(f);
  CHECK(v.cause == gpu::cause::no_driver);
  CHECK(v.reason.rfind("no NVIDIA driver found (libcuda.so.1", 0) == 0);
  CHECK(says(v, "install the driver"));
  CHECK_FALSE(says(v, "insufficient"));
  CHECK_FALSE(says(v, "too old"));
}

TEST_CASE("gpu availability: a driver older than the runtime names both versions", "[gpu-availability]") {
  auto f = failing(gpu::error_insufficient_driver, "cudaErrorInsufficientDriver");
  f.driver_version = 12040;
  const auto v = gpu::classify(f);
  CHECK(v.cause == gpu::cause::driver_too_old);
  CHECK(says(v, "too old"));
  CHECK(says(v, "CUDA 12.4"));
  CHECK(says(v, "install a driver for CUDA 13.0 or later"));
}

TEST_CASE("gpu availability: a driver without a GPU, a hidden GPU, a driver that sees none", "[gpu-availability]") {
  auto f = failing(gpu::error_no_device, "cudaErrorNoDevice");
  f.device_nodes = false;
  auto v = gpu::classify(f);
  CHECK(v.cause == gpu::cause::no_device);
  CHECK(says(v, "an NVIDIA driver is installed (libcuda.so.1, CUDA 13.0) but there is no GPU"));
  CHECK(says(v, "--gpus"));

  f.device_nodes = true;
  f.visible_devices_set = true;
  f.visible_devices = "";
  v = gpu::classify(f);
  CHECK(v.cause == gpu::cause::no_device);
  CHECK(says(v, "CUDA_VISIBLE_DEVICES=''"));

  f.visible_devices_set = false;
  f.error = 0; // success, but a count of 0
  v = gpu::classify(f);
  CHECK(v.cause == gpu::cause::no_device);
  CHECK(says(v, "reports no CUDA device"));
}

TEST_CASE("gpu availability: no permission to the device node", "[gpu-availability]") {
  auto f = failing(gpu::error_no_device, "cudaErrorNoDevice");
  f.denied_node = "/dev/nvidia0";
  auto v = gpu::classify(f);
  CHECK(v.cause == gpu::cause::no_permission);
  CHECK(says(v, "no permission to the GPU device (/dev/nvidia0)"));
  CHECK(says(v, "group"));
  // The runtime's own "not permitted" counts too, and a usable GPU wins over a denied node.
  v = gpu::classify(failing(gpu::error_not_permitted, "cudaErrorNotPermitted"));
  CHECK(v.cause == gpu::cause::no_permission);
  auto ok = working();
  ok.denied_node = "/dev/nvidia-uvm";
  CHECK(gpu::classify(ok).cause == gpu::cause::usable);
}

TEST_CASE("gpu availability: a CUDA-less build says to rebuild with the toolkit", "[gpu-availability]") {
  gpu::facts f;
  f.cuda_built = false;
  f.driver_loadable = false;
  const auto v = gpu::classify(f);
  CHECK(v.cause == gpu::cause::cuda_less_build);
  CHECK(says(v, "no CUDA toolkit"));
  CHECK(says(v, "rebuild"));
}

TEST_CASE("gpu availability: other errors keep the runtime's name", "[gpu-availability]") {
  const auto busy = gpu::classify(failing(gpu::error_devices_unavailable, "cudaErrorDevicesUnavailable"));
  CHECK(says(busy, "busy or reserved"));
  const auto mismatch = gpu::classify(failing(gpu::error_system_driver_mismatch, "cudaErrorSystemDriverMismatch"));
  CHECK(says(mismatch, "differ in version"));
  const auto other = gpu::classify(failing(999, "cudaErrorUnknown"));
  CHECK(other.cause == gpu::cause::other);
  CHECK(says(other, "cudaErrorUnknown (the runtime's text)"));
}

TEST_CASE("gpu availability: this machine, for real, where it has no NVIDIA driver", "[gpu-availability]") {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (driver) {
    dlclose(driver);
    WARN("SKIPPED: libcuda.so.1 loads here; the no-driver case is tested on machines without it");
    return;
  }
  const std::string why = device::gpu_unavailable_reason();
  INFO(why);
  if (SPEEDLAB_HAS_CUDA)
    CHECK(why.rfind("no NVIDIA driver found", 0) == 0);
  else
    CHECK(why.find("no CUDA toolkit") != std::string::npos);
  CHECK(why.find("insufficient") == std::string::npos);
}

TEST_CASE("gpu availability: list and profile name a missing driver, for real", "[gpu-availability][cli]") {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (driver || !SPEEDLAB_HAS_CUDA) {
    if (driver) dlclose(driver);
    WARN("SKIPPED: needs a CUDA build on a machine without libcuda.so.1");
    return;
  }
  const auto bin = speedlab::testing::speedlab_binary().string();
  const auto list = speedlab::testing::run_command("'" + bin + "' list 2>&1");
  INFO(list.output);
  CHECK(list.output.find("cannot run here: no NVIDIA driver found") != std::string::npos);
  CHECK(list.output.find("cudaErrorInsufficientDriver") == std::string::npos);
  // A program that never reaches CUDA's driver: profile says why CUDA could not run at all.
  const speedlab::testing::temp_dir tmp;
  const auto profile =
      speedlab::testing::run_command("'" + bin + "' profile --out '" + (tmp.path() / "p").string() + "' -- true 2>&1");
  INFO(profile.output);
  if (profile.output.find("no libspeedlab-inject.so") != std::string::npos) return; // no injection library: no tracing
  CHECK(profile.output.find("CUDA cannot run on this machine: no NVIDIA driver found") != std::string::npos);
}
