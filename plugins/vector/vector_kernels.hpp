// Plain C++ entry points to the lesson 1 kernels (vector_kernels.cu), so the variants in
// vector.cpp never need nvcc. Pointers are device pointers; each call launches, checks the
// launch and returns; the caller synchronizes.
#pragma once

#include <cstddef>

namespace speedlab::plugins::vector {

enum class op_kind { add, mul };

// The lessons' kernel: one thread per element, blocks of 256.
void launch_naive(op_kind op, const float* a, const float* b, float* c, std::size_t n);

// Tuned: 16-byte loads and stores (float4), several in flight per thread, a grid-stride
// loop over a grid that fills every SM, scalar tail for n not a multiple of 4.
void launch_tuned(op_kind op, const float* a, const float* b, float* c, std::size_t n);

} // namespace speedlab::plugins::vector
