// Lesson 4 kernels: the lessons' one-thread-per-element ufunc and a tuned grid-stride
// version with 16-byte loads (4 floats or 2 doubles per access) and a scalar tail.
#include <algorithm>

#include <speedlab/cuda.hpp>
#include "transcendental_kernels.hpp"

namespace speedlab::plugins::transcendental {
namespace {

constexpr int block_size = 256;

// 16 bytes of T: one vector load or store.
template <class T>
struct alignas(16) pack {
  static constexpr int width = 16 / sizeof(T);
  T v[width];
};

template <class T>
__global__ void gauss_lesson_kernel(const T* __restrict__ x, T* __restrict__ y, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = gaussian_pdf(x[i]);
}

template <class T>
__global__ void polar_lesson_kernel(const T* __restrict__ r1, const T* __restrict__ t1, const T* __restrict__ r2,
                                    const T* __restrict__ t2, T* __restrict__ d, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) d[i] = polar_distance(r1[i], t1[i], r2[i], t2[i]);
}

template <class T>
__global__ void __launch_bounds__(block_size)
    gauss_kernel(const T* __restrict__ x, T* __restrict__ y, std::size_t n) {
  using P = pack<T>;
  const std::size_t packs = n / P::width;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const P* xp = reinterpret_cast<const P*>(x);
  P* yp = reinterpret_cast<P*>(y);
  for (std::size_t i = tid; i < packs; i += stride) {
    const P in = xp[i];
    P out;
#pragma unroll
    for (int k = 0; k < P::width; ++k) out.v[k] = gaussian_pdf(in.v[k]);
    yp[i] = out;
  }
  const std::size_t j = packs * P::width + tid;
  if (j < n) y[j] = gaussian_pdf(x[j]);
}

template <class T>
__global__ void __launch_bounds__(block_size)
    polar_kernel(const T* __restrict__ r1, const T* __restrict__ t1, const T* __restrict__ r2,
                 const T* __restrict__ t2, T* __restrict__ d, std::size_t n) {
  using P = pack<T>;
  const std::size_t packs = n / P::width;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t i = tid; i < packs; i += stride) {
    const P a = reinterpret_cast<const P*>(r1)[i], b = reinterpret_cast<const P*>(t1)[i];
    const P c = reinterpret_cast<const P*>(r2)[i], e = reinterpret_cast<const P*>(t2)[i];
    P out;
#pragma unroll
    for (int k = 0; k < P::width; ++k) out.v[k] = polar_distance(a.v[k], b.v[k], c.v[k], e.v[k]);
    reinterpret_cast<P*>(d)[i] = out;
  }
  const std::size_t j = packs * P::width + tid;
  if (j < n) d[j] = polar_distance(r1[j], t1[j], r2[j], t2[j]);
}

// One full device of Kernel at this file's block size (cached per device).
template <auto Kernel>
unsigned full_grid() {
  return speedlab::cuda::full_grid<Kernel, block_size>();
}

unsigned lesson_grid(std::size_t n) { return static_cast<unsigned>((n + block_size - 1) / block_size); }

// Enough threads for every pack (and for the tail), capped at one full device.
template <auto Kernel, class T>
unsigned tuned_grid(std::size_t n) {
  const std::size_t packs = n / pack<T>::width, tail = n - packs * pack<T>::width;
  const std::size_t wanted = (std::max(packs, tail) + block_size - 1) / block_size;
  return static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(wanted, 1), full_grid<Kernel>()));
}

template <class T>
void gauss(const T* x, T* y, std::size_t n, bool lesson) {
  if (n == 0) return;
  if (lesson) gauss_lesson_kernel<T><<<lesson_grid(n), block_size>>>(x, y, n);
  else gauss_kernel<T><<<tuned_grid<gauss_kernel<T>, T>(n), block_size>>>(x, y, n);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

template <class T>
void polar(const T* r1, const T* t1, const T* r2, const T* t2, T* d, std::size_t n, bool lesson) {
  if (n == 0) return;
  if (lesson) polar_lesson_kernel<T><<<lesson_grid(n), block_size>>>(r1, t1, r2, t2, d, n);
  else polar_kernel<T><<<tuned_grid<polar_kernel<T>, T>(n), block_size>>>(r1, t1, r2, t2, d, n);
  SPEEDLAB_CUDA_CHECK_LAUNCH();
}

} // namespace

void launch_gauss(const float* x, float* y, std::size_t n, bool lesson) { gauss(x, y, n, lesson); }
void launch_gauss(const double* x, double* y, std::size_t n, bool lesson) { gauss(x, y, n, lesson); }
void launch_polar(const float* r1, const float* t1, const float* r2, const float* t2, float* d, std::size_t n,
                  bool lesson) {
  polar(r1, t1, r2, t2, d, n, lesson);
}
void launch_polar(const double* r1, const double* t1, const double* r2, const double* t2, double* d,
                  std::size_t n, bool lesson) {
  polar(r1, t1, r2, t2, d, n, lesson);
}

} // namespace speedlab::plugins::transcendental
