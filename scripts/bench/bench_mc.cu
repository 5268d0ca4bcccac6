// The Monte Carlo plugin's kernels, as the plugin compiles them (default nvcc flags).
#include "montecarlo_kernels.cu"
#include "bench_api.hpp"

namespace mc = speedlab::plugins::montecarlo;

namespace bench {
namespace {
template <void (*L)(std::size_t, mc::scratch, unsigned long long*)>
void pi(int, std::size_t m, void* p, unsigned* c, void* r) {
  L(m, mc::scratch{p, c}, static_cast<unsigned long long*>(r));
}
template <void (*L)(int, std::size_t, mc::scratch, double*)>
void moment(int n, std::size_t m, void* p, unsigned* c, void* r) {
  L(n, m, mc::scratch{p, c}, static_cast<double*>(r));
}
} // namespace

std::vector<mc_kernel> pi_kernels() {
  return {{"pi/cuda (plugin, Philox)", pi<mc::launch_pi_philox>},
          {"pi/cuda-tuned (Philox, same hits)", pi<mc::launch_pi_philox_tuned>},
          {"pi/cuda-fast (xoshiro128+)", pi<mc::launch_pi_xoshiro>}};
}
std::vector<mc_kernel> moment_kernels() {
  return {{"moment/cuda (plugin, Philox)", moment<mc::launch_moment_philox>},
          {"moment/cuda-tuned (Philox, same f)", moment<mc::launch_moment_philox_tuned>},
          {"moment/cuda-fast (xoshiro128+)", moment<mc::launch_moment_xoshiro>}};
}
std::size_t mc_partial_bytes() { return mc::max_blocks() * mc::partial_bytes; }
} // namespace bench
