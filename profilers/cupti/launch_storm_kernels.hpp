#pragma once

#include <string>

namespace speedlab::storm {
std::string device_name(); // empty without a usable device
std::string last_error();
bool launch_empty(long n); // n empty <<<1,1>>> launches on the default stream
bool synchronize();
} // namespace speedlab::storm
