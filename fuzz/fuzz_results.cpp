// libFuzzer target: the results readers with their checks (one line of results.jsonl, and
// run.json; model/saved_records.hpp), as the readers of a saved run use them. Exceptions are
// expected (the readers catch std::exception and name the line); a crash, a sanitizer report
// or a leak is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "model/saved_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto j = nlohmann::json::parse(text);
    try {
      (void)speedlab::read_point_record(j);
    } catch (const std::exception&) {
    }
    (void)speedlab::read_run_record(j);
  } catch (const std::exception&) {
  }
  return 0;
}
