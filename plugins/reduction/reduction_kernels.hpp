// Plain C++ entry points to the lesson 2 kernels (reduction_kernels.cu), so the variants in
// reduction.cpp never need nvcc. Pointers are device pointers; each call launches, checks
// the launch and returns; the caller synchronizes.
#pragma once

#include <cstddef>

namespace speedlab::plugins::reduction {

enum class op_kind { mean, dot };

// Device scratch for the tree: one partial per block, a ticket counter (zero between
// launches: the last block resets it) and the result.
struct tree_scratch {
  double* partials = nullptr;
  unsigned* counter = nullptr;
  double* result = nullptr;
};

// How many partials tree_scratch must hold on the current device.
std::size_t tree_max_blocks();

// result = scale * sum(a) (mean) or scale * sum(a * b) (dot), in one launch: a grid-stride
// pass with 16-byte loads and per-thread double accumulators, a warp-shuffle + shared-
// memory tree per block, and the last block to finish summing the block partials.
void launch_tree(op_kind op, const float* a, const float* b, std::size_t n, double scale, tree_scratch s);

// The lessons' atomics: one double atomicAdd per element into *sum (zeroed first), then
// result = scale * sum.
void launch_atomic(op_kind op, const float* a, const float* b, std::size_t n, double scale, double* sum,
                   double* result);

} // namespace speedlab::plugins::reduction
