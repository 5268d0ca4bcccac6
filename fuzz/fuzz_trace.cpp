// libFuzzer target: the recorded-trace reader (traces/*.json -> trace::device_trace).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "model/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)nlohmann::json::parse(std::string(reinterpret_cast<const char*>(data), size)).get<speedlab::trace::device_trace>();
  } catch (const std::exception&) {
  }
  return 0;
}
