#include "app/run/device_step.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/process/child_process.hpp"
#include "app/run/output_folder.hpp"
#include "device/calibrate.hpp"
#include "device/device_probe.hpp"
#include "model/saved_records.hpp"

namespace speedlab::app {
namespace {

analysis::device_model model_for(const std::string& mode) {
  if (mode == "off") return device::probe_model();
  if (mode == "cached") {
    if (auto cached = device::load_cached_model()) return *cached;
    return calibrate_now(false, true);
  }
  return calibrate_now(mode == "full", true);
}

} // namespace

analysis::device_model calibrate_now(bool full, bool save_cache) {
  device::calibrate_options options;
  options.quick = !full;
  options.save = save_cache;
  return device::calibrate(options);
}

std::optional<analysis::device_model> obtain_device_model(const std::string& mode, const std::filesystem::path& out_dir,
                                                          double timeout_s, const std::string& visible_devices,
                                                          const std::string& file) {
  const child_outcome out = run_in_child(
      [&mode, &visible_devices](const heartbeat_function&) {
        if (!visible_devices.empty()) ::setenv("CUDA_VISIBLE_DEVICES", visible_devices.c_str(), 1);
        try {
          return nlohmann::json(model_for(mode)).dump();
        } catch (const std::exception& e) {
          return nlohmann::json{{"error", e.what()}}.dump();
        }
      },
      std::max(timeout_s, 60.0));
  if (!out.result) {
    std::cerr << "speedlab: warning: the device model could not be measured ("
              << (out.interrupted_by ? std::string("interrupted")
                  : out.timed_out  ? std::string("timed out")
                                : !out.error.empty() ? out.error
                                                     : "the calibration process ended with " + describe_end(out.wait_status))
              << "); analysis goes on without device ceilings\n";
    return std::nullopt;
  }
  try {
    const auto j = nlohmann::json::parse(*out.result);
    if (j.contains("error")) {
      std::cerr << "speedlab: warning: device model: " << j["error"].get<std::string>() << '\n';
      return std::nullopt;
    }
    auto model = read_device_record(j);
    write_json_file(out_dir / file, j);
    return model;
  } catch (const std::exception& e) {
    std::cerr << "speedlab: warning: device model unreadable: " << json_problem(e) << '\n';
    return std::nullopt;
  }
}

} // namespace speedlab::app
