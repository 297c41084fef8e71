// Extrapolation: the two sums chunk by chunk over the pool, then the extrapolation in place.
#include "compute/cpu/rl_extrapolation.h"

#include <algorithm>

#include "compute/cpu/rl_kernels.h"

namespace stacklens::compute::cpu {
namespace {

constexpr size_t kChunk = size_t{1} << 15;  // elements per parallel work item

}  // namespace

Extrapolation::Extrapolation(size_t n, ThreadPool& pool)
    : n_(n), pool_(pool), partials_((n + kChunk - 1) / kChunk) {}

void Extrapolation::apply(float* estimate, float* previous, const float* change,
                          const float* changePrevious) {
  float alpha = 0;
  if (!first_) {
    const double num = dot(change, changePrevious);
    const double den = dot(changePrevious, changePrevious);
    alpha = den > 0 ? static_cast<float>(std::clamp(num / den, 0.0, 1.0)) : 0.f;
  }
  first_ = false;
  const size_t n = n_;
  pool_.parallelFor(static_cast<int64_t>(partials_.size()),
                    [estimate, previous, alpha, n](int64_t c0, int64_t c1) {
                      const size_t b = static_cast<size_t>(c0) * kChunk,
                                   e = std::min(n, static_cast<size_t>(c1) * kChunk);
                      rl::extrapolate(estimate + b, previous + b, e - b, alpha);
                    });
}

double Extrapolation::dot(const float* a, const float* b) {
  double* partials = partials_.data();
  const size_t n = n_;
  pool_.parallelFor(
      static_cast<int64_t>(partials_.size()), [a, b, partials, n](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          const size_t begin = static_cast<size_t>(c) * kChunk;
          partials[c] = rl::dot(a + begin, b + begin, std::min(n, begin + kChunk) - begin);
        }
      });
  double sum = 0;
  for (double p : partials_) sum += p;
  return sum;
}

}  // namespace stacklens::compute::cpu
