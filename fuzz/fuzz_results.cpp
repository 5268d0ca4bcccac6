// libFuzzer target: the results reader (one line of results.jsonl, and run.json), as the
// readers of a saved run use it. Exceptions are expected (the readers catch std::exception
// and name the line); a crash, a sanitizer report or a leak is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "model/results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto j = nlohmann::json::parse(text);
    try {
      (void)j.get<speedlab::point_result>();
    } catch (const std::exception&) {
    }
    (void)j.get<speedlab::run_info>();
  } catch (const std::exception&) {
  }
  return 0;
}
