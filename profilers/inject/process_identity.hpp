// Who this profiled process is, for its stream's header (model/profile_stream.hpp): pid,
// parent, host, command line, start time and the launcher variables that tell ranks apart.
#pragma once

#include <cstdint>

#include "model/profile_stream.hpp"

namespace speedlab::inject {

// The process as it is now; the backends add their tags to info.tags afterwards.
profile::process_info this_process(std::uint32_t pid, std::uint64_t start_ns);
std::uint64_t realtime_now_ns();

} // namespace speedlab::inject
