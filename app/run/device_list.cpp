#include "app/run/device_list.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/process/child_process.hpp"
#include "app/suite/suite_config.hpp"
#include "device/device_probe.hpp"
#include "model/saved_records.hpp"
#include "model/strings.hpp"

namespace speedlab::app {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (true) {
    const auto comma = s.find(',', from);
    out.push_back(trim(s.substr(from, comma == std::string::npos ? std::string::npos : comma - from)));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

std::string have(const gpu_census& gpus) {
  return gpus.count == 1 ? "this machine has 1 GPU (device 0)"
                         : fmt::format("this machine has {} GPUs (devices 0-{})", gpus.count, gpus.count - 1);
}

} // namespace

gpu_census count_gpus(double timeout_s) {
  const child_outcome out = run_in_child(
      [](const heartbeat_function&) {
        const std::string why = device::gpu_unavailable_reason();
        return nlohmann::json{{"count", why.empty() ? device::gpu_count() : 0}, {"why", why}}.dump();
      },
      timeout_s);
  gpu_census c;
  if (!out.result) {
    c.why_none = out.timed_out ? "counting the GPUs timed out"
                 : !out.error.empty() ? out.error
                                      : "the process counting the GPUs ended with " + describe_end(out.wait_status);
    return c;
  }
  try {
    const auto j = nlohmann::json::parse(*out.result);
    c.count = j.at("count").get<int>();
    c.why_none = j.at("why").get<std::string>();
  } catch (const std::exception& e) {
    c.why_none = std::string("unreadable GPU count: ") + json_problem(e);
  }
  if (c.count <= 0 && c.why_none.empty()) c.why_none = "no CUDA device found";
  return c;
}

std::vector<int> parse_device_list(const std::string& spec, const gpu_census& gpus) {
  const std::string s = trim(spec);
  if (s.empty()) throw config_error("--devices: empty; give 'all' or device indices such as 0,1");
  if (gpus.count <= 0)
    throw config_error(fmt::format("--devices {}: there is no usable GPU here ({}); drop --devices to run without one",
                                   s, gpus.why_none.empty() ? "no CUDA device found" : gpus.why_none));
  std::vector<int> out;
  if (s == "all") {
    for (int i = 0; i < gpus.count; ++i) out.push_back(i);
    return out;
  }
  for (const auto& item : split_commas(s)) {
    if (item.empty()) throw config_error(fmt::format("--devices {}: an empty entry; give 'all' or indices such as 0,1", s));
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (errno || *end || v < 0 || !std::isdigit(static_cast<unsigned char>(item.front())))
      throw config_error(fmt::format("--devices {}: '{}' is not a device index (0, 1, ...) or 'all'", s, item));
    if (v >= gpus.count)
      throw config_error(fmt::format("--devices {}: device {} does not exist: {}", s, v, have(gpus)));
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) != out.end())
      throw config_error(fmt::format("--devices {}: device {} is listed twice", s, v));
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::string visible_devices_for(int index, const char* current) {
  if (!current || !*current) return std::to_string(index);
  const auto entries = split_commas(current);
  if (index < 0 || static_cast<std::size_t>(index) >= entries.size() || entries[static_cast<std::size_t>(index)].empty())
    throw config_error(fmt::format("device {}: CUDA_VISIBLE_DEVICES={} lists only {} device(s)", index, current,
                                   entries.size()));
  return entries[static_cast<std::size_t>(index)];
}

std::optional<int> take_device(std::map<std::string, std::string>& params) {
  auto it = params.find(device_param);
  if (it == params.end()) return std::nullopt;
  const int d = std::atoi(it->second.c_str());
  params.erase(it);
  return d;
}

} // namespace speedlab::app
