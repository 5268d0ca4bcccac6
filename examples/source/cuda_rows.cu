// Plain CUDA program for `speedlab profile --source` (scripts/gpu-check.sh profile-source):
// the naive row sum of rows_kernel.cu, each launch timed with CUDA events, so the cost of
// the source pass shows per launch: with --source-launches N, launches 1..N are sampled,
// N+1..2N run patched (SASS metrics), the rest run plain.
//   nvcc -O3 -lineinfo -arch=sm_90 -o cuda_rows cuda_rows.cu
//   ./cuda_rows [launches] [rows] [cols]   prints one "launch I MS" line per launch
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "rows_kernel.cu"

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t e = (call);                                                            \
    if (e != cudaSuccess) {                                                            \
      std::fprintf(stderr, "cuda_rows: %s failed: %s\n", #call, cudaGetErrorString(e)); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 60;
  const int rows = argc > 2 ? std::atoi(argv[2]) : 16384;
  const int cols = argc > 3 ? std::atoi(argv[3]) : 1024;
  if (launches <= 0 || rows <= 0 || cols <= 0) {
    std::fprintf(stderr, "cuda_rows: launches, rows and cols must be positive\n");
    return 2;
  }
  std::vector<float> host(static_cast<size_t>(rows) * cols, 1.0f);
  float *x = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&x, host.size() * sizeof(float)));
  CHECK(cudaMalloc(&out, rows * sizeof(float)));
  CHECK(cudaMemcpy(x, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const int block = 128, grid = (rows + block - 1) / block;
  for (int i = 1; i <= launches; ++i) {
    CHECK(cudaEventRecord(a));
    rows_naive<<<grid, block>>>(x, out, rows, cols);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    std::printf("launch %d %.4f\n", i, ms);
  }
  float first = 0;
  CHECK(cudaMemcpy(&first, out, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("cuda_rows: row 0 sums to %.0f (expected %d)\n", first, cols);
  CHECK(cudaFree(x));
  CHECK(cudaFree(out));
  return first == static_cast<float>(cols) ? 0 : 1;
}
