// The fused element-wise loops of Richardson–Lucy (see rl_kernels.h), with run-time dispatch.
#include "compute/cpu/rl_kernels.h"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STACKLENS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STACKLENS_CLONES
#endif

namespace stacklens::compute::cpu::rl {

STACKLENS_CLONES void multiplySpectrum(float* __restrict s, const float* __restrict h, size_t n,
                                       bool conjugate) {
  const float sign = conjugate ? -1.f : 1.f;
  for (size_t i = 0; i < n; ++i) {
    const float a = s[2 * i], b = s[2 * i + 1];
    const float c = h[2 * i], d = sign * h[2 * i + 1];
    s[2 * i] = a * c - b * d;
    s[2 * i + 1] = a * d + b * c;
  }
}

STACKLENS_CLONES void divideByBlurred(float* __restrict blurred, const float* __restrict image,
                                      size_t n, float epsilon) {
  for (size_t i = 0; i < n; ++i) blurred[i] = image[i] / std::max(blurred[i], epsilon);
}

STACKLENS_CLONES void updateEstimate(float* __restrict estimate, const float* __restrict correction,
                                     size_t n) {
  for (size_t i = 0; i < n; ++i) estimate[i] = std::max(estimate[i] * correction[i], 0.f);
}

STACKLENS_CLONES void updateEstimateTv(float* __restrict estimate,
                                       const float* __restrict correction,
                                       const float* __restrict divergence, size_t n, float lambda,
                                       float floor) {
  for (size_t i = 0; i < n; ++i) {
    const float damp = std::max(1.f - lambda * divergence[i], floor);
    estimate[i] = std::max(estimate[i] * correction[i] / damp, 0.f);
  }
}

STACKLENS_CLONES void updateEstimateTracked(float* __restrict estimate,
                                            const float* __restrict correction,
                                            float* __restrict change, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float next = std::max(estimate[i] * correction[i], 0.f);
    change[i] = next - estimate[i];
    estimate[i] = next;
  }
}

STACKLENS_CLONES double dot(const float* __restrict a, const float* __restrict b, size_t n) {
  double sum = 0;
  for (size_t i0 = 0; i0 < n; i0 += 1024) {
    const size_t i1 = std::min(n, i0 + 1024);
    float partial = 0;  // short float runs vectorise; double across runs keeps the precision
    for (size_t i = i0; i < i1; ++i) partial += a[i] * b[i];
    sum += partial;
  }
  return sum;
}

STACKLENS_CLONES void extrapolate(float* __restrict estimate, float* __restrict previous, size_t n,
                                  float alpha) {
  for (size_t i = 0; i < n; ++i) {
    const float x = estimate[i];
    estimate[i] = std::max(x + alpha * (x - previous[i]), 0.f);
    previous[i] = x;
  }
}

}  // namespace stacklens::compute::cpu::rl
