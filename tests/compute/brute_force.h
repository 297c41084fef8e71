// Brute-force building blocks the filter tests use as independent references.
#pragma once

#include <cstdint>
#include <vector>

#include "compute/image.h"

namespace stacklens::compute::brute_force {

// SciPy's 'reflect' boundary by repeated folding (deliberately not the library's formula).
inline int64_t reflect(int64_t i, int64_t n) {
  while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - 1 - i;
  return i;
}

// The k×k neighbourhood of (z, y, x) in raster order, reflected at the edges.
inline void neighbourhood(const Image& in, int64_t z, int64_t y, int64_t x, int k,
                          std::vector<float>& window) {
  const Shape s = in.shape();
  const int r = k / 2;
  window.clear();
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx)
      window.push_back(in.at(z, reflect(y + dy, s.y), reflect(x + dx, s.x)));
}

}  // namespace stacklens::compute::brute_force
