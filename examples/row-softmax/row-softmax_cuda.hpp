// What row-softmax.cpp and row-softmax_cuda.cu share (the .cu file is C++17).
#pragma once

#include <cstddef>
#include <vector>

#include <speedlab/plugin.hpp>

std::vector<float> row_softmax_input(std::size_t rows, std::size_t cols);
speedlab::validation row_softmax_check(const std::vector<float>& x, const std::vector<float>& y, std::size_t rows,
                                       std::size_t cols);
std::vector<speedlab::variant_spec> row_softmax_cuda_variants();
