#include "cuda_availability.hpp"
#include "cuda_support.cuh"

namespace speedlab::plugin_support {
std::string cuda_unavailable_reason() { return speedlab::cuda::unavailable_reason(); }
} // namespace speedlab::plugin_support
