// The device model for a run's analysis: probe, cached calibration or a fresh one. It is
// computed in a child process so that CUDA is never initialized in the parent, which
// forks a child for every point.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "analysis/analysis.hpp"

namespace speedlab::app {

// mode: off (properties and host facts only), cached (reuse, else quick + save), quick, full.
// Writes device.json into out_dir. nullopt (with a message on stderr) if the child failed.
// visible_devices: CUDA_VISIBLE_DEVICES for the child (--devices: one GPU; empty: unchanged);
// file: the name written in out_dir.
std::optional<analysis::device_model> obtain_device_model(const std::string& mode, const std::filesystem::path& out_dir,
                                                          double timeout_s, const std::string& visible_devices = {},
                                                          const std::string& file = "device.json");

// `speedlab calibrate`: measures now, in this process.
analysis::device_model calibrate_now(bool full, bool save_cache);

} // namespace speedlab::app
