// The fused element-wise loops of Richardson–Lucy, compiled for AVX-512, AVX2 and baseline x86-64
// and chosen at run time (GCC target_clones), so the release binary runs on any x86-64.
#pragma once

#include <cstddef>

namespace stacklens::compute::cpu::rl {

// spectrum[i] *= otf[i] (or conj(otf[i])), on interleaved (re, im) floats; n complex values.
void multiplySpectrum(float* spectrum, const float* otf, size_t n, bool conjugate);

// blurred[i] = image[i] / max(blurred[i], epsilon), in place.
void divideByBlurred(float* blurred, const float* image, size_t n, float epsilon);

// estimate[i] = max(estimate[i] · correction[i], 0).
void updateEstimate(float* estimate, const float* correction, size_t n);

// estimate[i] = max(estimate[i] · correction[i] / max(1 − λ · divergence[i], floor), 0).
void updateEstimateTv(float* estimate, const float* correction, const float* divergence, size_t n,
                      float lambda, float floor);

// The plain update that also records change[i] = new estimate[i] − old estimate[i].
void updateEstimateTracked(float* estimate, const float* correction, float* change, size_t n);

// Σ a[i] · b[i] in double.
double dot(const float* a, const float* b, size_t n);

// In place, with x = estimate[i]: estimate[i] = max(x + α · (x − previous[i]), 0), previous[i] = x.
void extrapolate(float* estimate, float* previous, size_t n, float alpha);

}  // namespace stacklens::compute::cpu::rl
