// The Mandelbrot plugin's kernels, compiled as the plugin compiles them (-fmad=false).
#include "mandelbrot_kernels.cu"
#include "bench_api.hpp"

namespace md = speedlab::plugins::mandelbrot::detail;

namespace bench {
namespace {
template <int BX, int BY>
void lesson(int* img, int size, int it) { md::launch<BX, BY>(img, size, it, 0); }
template <int BX, int BY, int K, int P, bool Skip = false>
void tuned(int* img, int size, int it) { md::launch_tuned<BX, BY, K, P, Skip>(img, size, it, 0); }
} // namespace

// The plugin's kernels (cuda, cuda-tuned, cuda-cardioid) first, then candidates of the search
// (block shape BX x BY, escape test every K iterations after the first P one at a time); the
// search of issue 14 also had 8x8 and 8x4 blocks, K = 1, 4, 8, 12 and P = 0, 4, 16.
std::vector<mb_kernel> mandelbrot_kernels() {
  using namespace md;
  return {{"mb/cuda (plugin, 8x8)", lesson<8, 8>},
          {"mb/cuda-tuned (plugin, 16x16 K16 P8)",
           tuned<fast_block_x, fast_block_y, fast_block_iterations, fast_first_iterations>},
          {"mb/cuda-cardioid (plugin, algorithmic)",
           tuned<fast_block_x, fast_block_y, fast_block_iterations, fast_first_iterations, true>},
          {"mb/candidate 16x8 K16 P8", tuned<16, 8, 16, 8>},
          {"mb/candidate 8x16 K16 P8", tuned<8, 16, 16, 8>},
          {"mb/candidate 16x8 K8 P0", tuned<16, 8, 8, 0>}};
}
} // namespace bench
