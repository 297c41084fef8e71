// Whether a PSF's OTF is real, so that Richardson–Lucy's fused passes can keep and read only its
// real part (compute/cuda/cuda_rl_fused.cu). Plain C++: the CPU tests check it without a device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace stacklens::compute::cuda {

// True when the PSF (depth × height × width values, row-major), placed with its centre sample
// (index size / 2 on every axis) at the origin, equals itself mirrored through the origin: every
// side odd and the values a palindrome. Exact comparison: a PSF symmetric only to rounding keeps
// the complex OTF.
inline bool isPointSymmetric(const std::vector<float>& psf, int64_t depth, int64_t height,
                             int64_t width) {
  if (depth % 2 == 0 || height % 2 == 0 || width % 2 == 0) return false;
  if (psf.size() != size_t(depth * height * width)) return false;
  return std::equal(psf.begin(), psf.begin() + psf.size() / 2, psf.rbegin());
}

// True when the PSF equals itself mirrored along each axis on its own (every side odd): what
// Boundary::ReflectExact needs (reflect_exact.cuh). Exact comparison, as above.
inline bool isAxisSymmetric(const std::vector<float>& psf, int64_t depth, int64_t height,
                            int64_t width) {
  if (depth % 2 == 0 || height % 2 == 0 || width % 2 == 0) return false;
  if (psf.size() != size_t(depth * height * width)) return false;
  auto at = [&](int64_t z, int64_t y, int64_t x) {
    return psf[size_t((z * height + y) * width + x)];
  };
  for (int64_t z = 0; z < depth; ++z)
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        const float v = at(z, y, x);
        if (v != at(depth - 1 - z, y, x) || v != at(z, height - 1 - y, x) ||
            v != at(z, y, width - 1 - x))
          return false;
      }
  return true;
}

}  // namespace stacklens::compute::cuda
