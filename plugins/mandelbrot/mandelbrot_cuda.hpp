// The CUDA side of the Mandelbrot plugin as plain C++ (no CUDA or SDK headers).
#pragma once

#include <cstdint>
#include <memory>

namespace speedlab::plugins::mandelbrot {

// Which kernel render() launches: the lesson's (one thread per pixel, 8 x 8 blocks), the tuned
// one (the same counts with fewer FP64 instructions: mandelbrot_kernels.cu), or the tuned one
// with the algorithmic cardioid/bulb shortcut.
enum class mandelbrot_kernel { lesson, tuned, cardioid };

// Device buffer for a size x size image of escape counts. Every call completes its GPU work
// and throws std::runtime_error on a CUDA error.
class gpu_mandelbrot {
public:
  gpu_mandelbrot(int device, int size, int iterations,
                 mandelbrot_kernel kernel = mandelbrot_kernel::lesson); // cudaMalloc
  ~gpu_mandelbrot();
  gpu_mandelbrot(const gpu_mandelbrot&) = delete;
  gpu_mandelbrot& operator=(const gpu_mandelbrot&) = delete;

  void upload(const std::int32_t* image); // host -> device (the lesson copies its image in)
  void render();                          // one thread per pixel in 2-D blocks, synchronize
  void download(std::int32_t* image);     // device -> host

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
};

} // namespace speedlab::plugins::mandelbrot
