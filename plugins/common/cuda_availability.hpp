// The availability check for cuda variants, callable from plain .cpp files: it is defined
// in the plugin's CUDA part when the plugin was built with CUDA, and says why not otherwise.
#pragma once

#include <string>

namespace speedlab::plugin_support {

#if SPEEDLAB_PLUGIN_HAS_CUDA
std::string cuda_unavailable_reason(); // defined in cuda_availability.cu
#else
inline std::string cuda_unavailable_reason() { return "speedlab was built without a CUDA toolkit"; }
#endif

} // namespace speedlab::plugin_support
