#include "core/app/device_step.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/app/output_folder.hpp"
#include "core/device/calibrate.hpp"
#include "core/device/device_probe.hpp"

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
                                                          double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    ::close(fds[0]);
    std::string payload;
    try {
      payload = nlohmann::json(model_for(mode)).dump();
    } catch (const std::exception& e) {
      payload = nlohmann::json{{"error", e.what()}}.dump();
    }
    const char* p = payload.data();
    std::size_t left = payload.size();
    while (left > 0) {
      const ssize_t n = ::write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string data;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(timeout_s, 60.0));
  bool timed_out = false;
  for (;;) {
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    if (::poll(&pfd, 1, 500) <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || data.empty()) {
    std::cerr << "speedlab: warning: the device model could not be measured ("
              << (timed_out ? "timed out" : "the calibration process ended without a result")
              << "); analysis goes on without device ceilings\n";
    return std::nullopt;
  }
  try {
    const auto j = nlohmann::json::parse(data);
    if (j.contains("error")) {
      std::cerr << "speedlab: warning: device model: " << j["error"].get<std::string>() << '\n';
      return std::nullopt;
    }
    auto model = j.get<analysis::device_model>();
    write_json_file(out_dir / "device.json", j);
    return model;
  } catch (const std::exception& e) {
    std::cerr << "speedlab: warning: device model unreadable: " << e.what() << '\n';
    return std::nullopt;
  }
}

} // namespace speedlab::app
