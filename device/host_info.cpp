#include "device/host_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "model/strings.hpp"

namespace speedlab::device {

cpu_facts read_cpuinfo() {
  cpu_facts f;
  std::ifstream in("/proc/cpuinfo");
  std::string line, physical_id = "0";
  std::set<std::pair<std::string, std::string>> cores;
  std::string flags;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon), " \t\r\n"), value = trim(line.substr(colon + 1), " \t\r\n");
    if (key == "model name" && f.model.empty()) f.model = value;
    else if (key == "physical id") physical_id = value;
    else if (key == "core id") cores.emplace(physical_id, value);
    else if (key == "cpu MHz") f.mhz = std::max(f.mhz, std::atof(value.c_str()));
    else if (key == "flags" && flags.empty()) flags = " " + value + " ";
  }
  f.physical_cores = static_cast<int>(cores.size());
  // The rated maximum clock where the kernel exposes it; /proc/cpuinfo shows the current one.
  std::ifstream maxf("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (maxf >> khz && khz > 0) f.mhz = khz / 1e3;
  if (flags.find(" avx512f ") != std::string::npos) {
    f.fp32_lanes = 16;
    f.simd = "avx512";
  } else if (flags.find(" avx2 ") != std::string::npos && flags.find(" fma ") != std::string::npos) {
    f.fp32_lanes = 8;
    f.simd = "avx2+fma";
  } else if (flags.find(" avx ") != std::string::npos) {
    f.fp32_lanes = 8;
    f.simd = "avx";
  }
  if (f.model.empty()) f.model = "unknown";
  return f;
}

// The largest cache level sysfs lists for cpu0 (bytes), 0 if unknown.
std::size_t llc_bytes() {
  std::size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", i));
    std::string s;
    if (!(in >> s) || s.empty()) continue;
    std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
    if (s.back() == 'K') v <<= 10;
    else if (s.back() == 'M') v <<= 20;
    best = std::max(best, v);
  }
  return best;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string iso_utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace speedlab::device
