// libFuzzer target: the recorded-trace reader with its checks (traces/*.json ->
// trace::device_trace; model/saved_records.hpp).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "model/saved_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)speedlab::read_trace_record(nlohmann::json::parse(std::string(reinterpret_cast<const char*>(data), size)));
  } catch (const std::exception&) {
  }
  return 0;
}
