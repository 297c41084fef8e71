// Richardson–Lucy's acceleration between iterations on the CPU (Biggs & Andrews 1997, order 1;
// compute/cpu/richardson_lucy.cpp states it), over an unblocked run's frame or a blocked run's
// whole domain alike: the same sums in the same order, so that both extrapolate the same.
#pragma once

#include <cstddef>
#include <vector>

#include "compute/cpu/thread_pool.h"

namespace stacklens::compute::cpu {

class Extrapolation {
 public:
  Extrapolation(size_t n, ThreadPool& pool);

  // With x_k in estimate, x_{k−1} in previous, g_k in change and g_{k−1} in changePrevious
  // (unused the first time): α = clamp(Σ g_k g_{k−1} / Σ g_{k−1}², 0, 1), 0 the first time;
  // estimate ← max(x_k + α (x_k − x_{k−1}), 0), previous ← x_k.
  void apply(float* estimate, float* previous, const float* change, const float* changePrevious);

 private:
  double dot(const float* a, const float* b);

  size_t n_;
  ThreadPool& pool_;
  std::vector<double> partials_;  // one sum per chunk, added in order
  bool first_ = true;
};

}  // namespace stacklens::compute::cpu
