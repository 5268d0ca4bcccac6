// What template.cpp and template_cuda.cu share; the .cu file is compiled by nvcc as C++17.
#pragma once

#include <cstddef>
#include <vector>

#include <speedlab/plugin.hpp>

namespace template_plugin {
inline constexpr float a = 2.0f;
// The input x[i] (exact in float) and the check of y = a*x + 1 every variant's validate() uses.
inline float x_at(std::size_t i) { return static_cast<float>(i % 1024); }
speedlab::validation check_saxpy(const std::vector<float>& y);
speedlab::variant_spec saxpy_cuda_variant(); // defined in template_cuda.cu
} // namespace template_plugin
