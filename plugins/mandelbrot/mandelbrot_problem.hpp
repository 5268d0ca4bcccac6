// Lesson 8 problem definition shared by the host variants and the CUDA kernel: the pixel
// grid over [-2, 2]^2 and the escape-count iteration, in double precision as the lessons'
// complex128 code.
#pragma once

#include "philox.hpp" // SPEEDLAB_HD

namespace speedlab::plugins::mandelbrot {

// Pixel index -> coordinate, the lessons' min + index * (max - min) / size.
SPEEDLAB_HD double coordinate(int index, int size) { return -2.0 + index * (4.0 / size); }

// Iterates z = z^2 + c from 0 and returns the first i at which |z|^2 >= 4 (escape bound 2),
// or max_iterations when it never escapes (a member of the set).
SPEEDLAB_HD int escape_count(double cx, double cy, int max_iterations) {
  double x = 0, y = 0, x2 = 0, y2 = 0;
  for (int i = 0; i < max_iterations; ++i) {
    y = 2 * x * y + cy;
    x = x2 - y2 + cx;
    x2 = x * x;
    y2 = y * y;
    if (x2 + y2 >= 4.0) return i;
  }
  return max_iterations;
}

// Strictly inside the main cardioid or the period-2 bulb: a member of the set (its orbit
// converges), known without iterating. Used only by the algorithmic variant (cuda-cardioid).
SPEEDLAB_HD bool in_cardioid_or_bulb(double cx, double cy) {
  const double xq = cx - 0.25, y2 = cy * cy;
  const double q = xq * xq + y2;
  const double xb = cx + 1.0;
  return q * (q + xq) < 0.25 * y2 || xb * xb + y2 < 0.0625;
}

} // namespace speedlab::plugins::mandelbrot
