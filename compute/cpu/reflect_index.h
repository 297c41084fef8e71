// SciPy's 'reflect' boundary (half-sample symmetric) as an index map, shared by the CPU filters.
#pragma once

#include <cstdint>

namespace stacklens::compute::cpu {

// The in-range index that position i (any integer) reads from, for an axis of length n ≥ 1:
// … 1 0 | 0 1 … n−1 | n−1 n−2 …, repeated with period 2n.
inline int64_t reflectIndex(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * n;
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - 1 - m;
}

}  // namespace stacklens::compute::cpu
