// Richardson–Lucy's transforms for 2D frames whose sides are powers of two (64 … 4096 rows,
// 128 … 8192 columns), done by our own FFT passes with the element-wise work inside them: per
// iteration two column passes (forward FFT along y, ·OTF or ·conj(OTF), inverse FFT along y) and
// two row passes (inverse real FFT along x, the ratio or the update, forward real FFT along x),
// instead of four cuFFT transforms and four element-wise passes. (For compute/cuda/*.cu only.)
#pragma once

#include <cstdint>

#include "compute/cuda/cuda_context.cuh"

namespace stacklens::compute::cuda {

class FusedRlTransforms {
 public:
  static bool supports(int64_t height, int64_t width);

  // The OTF of `placedPsf` (a height × width real frame with the PSF's centre at the origin),
  // scaled by 1 / (height·width) so that blur/correlate below are normalised convolutions.
  FusedRlTransforms(const ContextPtr& ctx, int64_t height, int64_t width, const float* placedPsf);

  // spectrum ← row transforms of `estimate` (before the first iteration, or after the
  // estimate was changed outside these passes).
  void forward(const float* estimate);
  // spectrum ← rows(observed / max(PSF ⊛ estimate, ε)): the first half of an iteration.
  void blurAndRatio(const float* observed, float epsilon);
  // estimate ← max(estimate · (PSF ⋆ ratio) [/ max(1 − λ·divergence, 10⁻³)], 0), change ←
  // new − old when not null; then spectrum ← rows(estimate) when `forwardNext`.
  void correlateAndUpdate(float* estimate, const float* divergence, float lambda, float* change,
                          bool forwardNext);

 private:
  ContextPtr ctx_;
  int64_t height_, width_, pitch_;
  const float* rowRoots_;              // e^(−2πi j / width), j < width, as (cos, sin)
  const float* columnRoots_;           // e^(−2πi j / height), j < height
  DeviceArray<float> spectrum_, otf_;  // height × pitch complex values (interleaved)
};

}  // namespace stacklens::compute::cuda
