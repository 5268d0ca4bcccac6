// libFuzzer target: the suite loader (YAML text -> suite_config). Anything but a
// config_error is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "app/suite/suite_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    speedlab::app::parse_suite(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  } catch (const speedlab::app::config_error&) {
  }
  return 0;
}
