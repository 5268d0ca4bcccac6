#include "device/calibrate.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <speedlab/config.hpp>

#include "device/device_probe.hpp"
#include "device/host_info.hpp"
#include "model/atomic_file.hpp"
#include "model/saved_records.hpp"

namespace speedlab::device {

namespace {

void append_error(speedlab::device_model& m, const std::string& what) {
  auto& e = m.properties["calibration_errors"];
  if (!e.empty()) e += "; ";
  e += what;
}

} // namespace

std::filesystem::path cache_dir() {
  if (const char* d = std::getenv("SPEEDLAB_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "speedlab";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "speedlab";
  return std::filesystem::temp_directory_path() / "speedlab-cache";
}

std::filesystem::path cache_file(const std::string& key) { return cache_dir() / ("device-" + key + ".json"); }

std::optional<speedlab::device_model> load_cached_model_for_key(const std::string& key) {
  std::ifstream in(cache_file(key));
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("calibration_version", 0) != calibration_version || j.value("key", std::string()) != key)
      return std::nullopt;
    return read_device_record(j.at("model")); // checked like a run folder's device.json
  } catch (const std::exception&) {
    return std::nullopt; // a damaged cache file is as good as none
  }
}

std::optional<speedlab::device_model> load_cached_model(int device) {
  return load_cached_model_for_key(cache_key(probe_model(device)));
}

std::filesystem::path save_cached_model(const speedlab::device_model& model) {
  auto it = model.properties.find("cache_key");
  const std::string key = it != model.properties.end() && !it->second.empty() ? it->second : cache_key(model);
  const auto path = cache_file(key);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw std::runtime_error("cannot create " + path.parent_path().string() + ": " + ec.message());
  const nlohmann::json j = {{"calibration_version", calibration_version}, {"key", key}, {"model", model}};
  write_file_atomically(path, j.dump(2) + "\n"); // a concurrent reader never sees half a file
  return path;
}

speedlab::device_model calibrate(const calibrate_options& o) {
  if (o.use_cache)
    if (auto cached = load_cached_model(o.device)) return *cached;
  const auto t0 = std::chrono::steady_clock::now();
  speedlab::device_model m = probe_model(o.device);
  if (o.host) {
    try {
      detail::calibrate_host(o, m);
    } catch (const std::exception& e) {
      append_error(m, std::string("host: ") + e.what());
    }
  }
  const bool gpu_usable = !m.gpu_name.empty();
  if (o.gpu && gpu_usable) {
#if SPEEDLAB_HAS_CUDA
    try {
      detail::calibrate_gpu(o, m);
    } catch (const std::exception& e) {
      append_error(m, std::string("gpu: ") + e.what());
      if (o.log) o.log(std::string("GPU calibration failed: ") + e.what());
    }
#endif
  } else if (o.gpu && o.log) {
    auto it = m.properties.find("gpu_unavailable");
    o.log("GPU not measured: " + (it != m.properties.end() ? it->second : std::string("no GPU")));
  }
  m.properties["calibrated_at"] = iso_utc_now();
  m.properties["calibration_mode"] = o.quick ? "quick" : "full";
  m.properties["calibration_version"] = std::to_string(calibration_version);
  m.properties["calibration_seconds"] =
      fmt::format("{:.2f}", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (o.save) {
    try {
      const auto path = save_cached_model(m);
      if (o.log) o.log("saved " + path.string());
    } catch (const std::exception& e) {
      if (o.log) o.log(std::string("calibration not cached: ") + e.what());
    }
  }
  return m;
}

} // namespace speedlab::device
