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

}  // namespace stacklens::compute::cuda
