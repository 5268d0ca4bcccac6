// libFuzzer target: the results reader (one line of results.jsonl, and run.json), as the
// readers of a saved run use it. JSON and type errors are expected; a crash is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "model/results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto j = nlohmann::json::parse(text);
    try {
      (void)j.get<speedlab::point_result>();
    } catch (const nlohmann::json::exception&) {
    }
    (void)j.get<speedlab::run_info>();
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
