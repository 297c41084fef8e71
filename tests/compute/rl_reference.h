// Richardson–Lucy written out directly in double (convolution by sums over the PSF), the reference
// for the backends: circular convolution for the padded and periodic frames, and reads reflected
// past the edges for Boundary::ReflectExact.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "compute/image.h"

namespace stacklens::testing {

using compute::Shape;

// Where a convolution reads past the edges: wrapped round, or reflected half-sample symmetric
// (… b a | a b … | … b a), any distance out.
inline int64_t wrappedIndex(int64_t i, int64_t n) { return ((i % n) + n) % n; }
inline int64_t reflectedIndex(int64_t i, int64_t n) {
  const int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
  return m < n ? m : 2 * n - 1 - m;
}

// u (shape s) convolved with psf (shape ps, centred at size / 2), or correlated with it when
// adjoint, reading index(i, n) for the samples past the edges.
template <class Index>
std::vector<double> convolution(const std::vector<double>& u, Shape s,
                                const std::vector<double>& psf, Shape ps, bool adjoint,
                                Index index) {
  std::vector<double> out(s.count(), 0.0);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double acc = 0;
        for (int64_t a = 0; a < ps.z; ++a)
          for (int64_t b = 0; b < ps.y; ++b)
            for (int64_t c = 0; c < ps.x; ++c) {
              int64_t dz = a - ps.z / 2, dy = b - ps.y / 2, dx = c - ps.x / 2;
              if (adjoint) dz = -dz, dy = -dy, dx = -dx;
              const int64_t zz = index(z - dz, s.z), yy = index(y - dy, s.y),
                            xx = index(x - dx, s.x);
              acc += psf[(a * ps.y + b) * ps.x + c] * u[(zz * s.y + yy) * s.x + xx];
            }
        out[(z * s.y + y) * s.x + x] = acc;
      }
  return out;
}

inline std::vector<double> periodicConvolution(const std::vector<double>& u, Shape s,
                                               const std::vector<double>& psf, Shape ps,
                                               bool adjoint = false) {
  return convolution(u, s, psf, ps, adjoint, wrappedIndex);
}

// Richardson–Lucy with the convolution above; obs of shape s, psf normalised, of shape ps.
template <class Index>
std::vector<double> rlReference(const std::vector<double>& obs, Shape s,
                                const std::vector<double>& psf, Shape ps, int iterations,
                                double eps, Index index) {
  std::vector<double> est = obs;
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> c = convolution(est, s, psf, ps, false, index);
    for (int64_t i = 0; i < s.count(); ++i) c[i] = obs[i] / std::max(c[i], eps);
    const std::vector<double> corr = convolution(c, s, psf, ps, true, index);
    for (int64_t i = 0; i < s.count(); ++i) est[i] *= corr[i];
  }
  return est;
}

// obs: the frame (already padded) of shape s.
inline std::vector<double> rlPeriodicReference(const std::vector<double>& obs, Shape s,
                                               const std::vector<double>& psf, Shape ps,
                                               int iterations, double eps) {
  return rlReference(obs, s, psf, ps, iterations, eps, wrappedIndex);
}

// Every convolution reads the data reflected past its edges: Boundary::ReflectExact.
inline std::vector<double> rlReflectedReference(const std::vector<double>& obs, Shape s,
                                                const std::vector<double>& psf, Shape ps,
                                                int iterations, double eps) {
  return rlReference(obs, s, psf, ps, iterations, eps, reflectedIndex);
}

}  // namespace stacklens::testing
