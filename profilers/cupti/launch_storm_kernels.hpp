#pragma once

#include <cstdint>
#include <string>

namespace speedlab::storm {
std::string device_name(); // empty without a usable device
std::string last_error();
bool launch_empty(long n); // n empty <<<1,1>>> launches on the default stream
bool synchronize();
// n launches, each timed on the host steady clock; durations_ns gets n entries.
bool launch_empty_timed(long n, std::uint64_t* durations_ns);
} // namespace speedlab::storm
