// Kernel tables of the plugin kernels under test (kernels_bench.cu). Each TU that includes a
// plugin's .cu (compiled with that plugin's flags) fills one table.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace bench {

struct mc_kernel {
  std::string name;
  void (*launch)(int dims, std::size_t count, void* partials, unsigned* counter, void* result);
};
std::vector<mc_kernel> pi_kernels();
std::vector<mc_kernel> moment_kernels();
std::size_t mc_partial_bytes();

struct mb_kernel {
  std::string name;
  void (*launch)(int* image, int size, int iterations);
};
std::vector<mb_kernel> mandelbrot_kernels();

} // namespace bench
