// The naive row sum of examples/source (speedlab profile --source): one thread per row of a
// row-major matrix, so the 32 threads of a warp read 32 addresses `cols` floats apart at
// each step: one 32-byte sector per thread, 32 sectors per request (uncoalesced). CuPy
// compiles this file (cupy_rows.py) and cuda_rows.cu includes it.
extern "C" __global__ void rows_naive(const float* x, float* out, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float acc = 0.0f;
  for (int c = 0; c < cols; ++c) {
    acc += x[(long long)row * cols + c]; // the uncoalesced load
  }
  out[row] = acc;
}
