// libFuzzer target: the sweep syntax and the checked number path. Anything but a
// sweep_error / number_error is a finding, and so is a sweep over its point limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/suite/checked_number.hpp"
#include "app/suite/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace speedlab::app;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (expand_sweep(text).size() > max_sweep_points) std::abort();
  } catch (const sweep_error&) {
  }
  try {
    checked_number(text, limits::threads);
  } catch (const number_error&) {
  }
  (void)canonical_number(text);
  return 0;
}
