// `speedlab calibrate`: measured ceilings of this machine, cached per device.
//   GPU: device-to-device copy bandwidth (bytes read + written), read-only and write-only
//        DRAM bandwidth and L2 read bandwidth (streaming kernels), pinned and pageable H2D
//        and D2H bandwidth, FP32 and FP64 FMA rate (independent FMA chains), kernel launch
//        latency (empty kernels back to back, per launch) and launch + synchronize.
//   Host: memory bandwidth (STREAM-like triad on all cores and on one), core count.
// Each ceiling is the best of several repetitions (a ceiling is what the machine can
// reach), with measured = true and its method as source. Without a GPU, only the host is
// measured. The cache is JSON under $SPEEDLAB_CACHE_DIR, else ~/.cache/speedlab/, one
// file per device key (see device_probe.hpp), and is reused when present.
//
//   namespace dev = speedlab::device;
//   auto model = dev::load_cached_model();
//   if (!model) model = dev::calibrate({.quick = true});   // saves to the cache
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "model/device_model.hpp"

namespace speedlab::device {

// Bumped when calibration methods change; older cache files are then ignored.
inline constexpr int calibration_version = 2; // 2: DRAM read-only/write-only and L2 bandwidth

struct calibrate_options {
  bool quick = true;      // ~1-2 s of measuring: smaller buffers, fewer repetitions
  int device = 0;         // CUDA device index
  bool gpu = true;        // measure the GPU when one is usable
  bool host = true;       // measure the host
  bool use_cache = false; // return the cached model for this device when present
  bool save = true;       // write the result to the cache
  std::function<void(const std::string&)> log; // one line per measurement (optional)
};

// Probes, measures and returns the model (properties + estimates + measurements).
// Measurement failures are recorded in properties["calibration_errors"], never thrown.
speedlab::device_model calibrate(const calibrate_options& options = {});

// The cache folder: $SPEEDLAB_CACHE_DIR, else $XDG_CACHE_HOME/speedlab, else ~/.cache/speedlab.
std::filesystem::path cache_dir();
std::filesystem::path cache_file(const std::string& key);

// The cached calibration of this machine's device (GPU 0, or the host without a GPU), if
// a file for its key exists with the current calibration_version.
std::optional<speedlab::device_model> load_cached_model(int device = 0);
std::optional<speedlab::device_model> load_cached_model_for_key(const std::string& key);

// Writes the model to the cache under its properties["cache_key"]; returns the file.
// Throws std::runtime_error when the file cannot be written.
std::filesystem::path save_cached_model(const speedlab::device_model& model);

namespace detail {
// Host measurements into model.host (always compiled).
void calibrate_host(const calibrate_options& options, speedlab::device_model& model);
// GPU measurements into model.gpu (calibrate.cu; only with CUDA). Throws on CUDA errors.
void calibrate_gpu(const calibrate_options& options, speedlab::device_model& model);
} // namespace detail

} // namespace speedlab::device
