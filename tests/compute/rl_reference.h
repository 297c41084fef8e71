// Richardson–Lucy written out directly in double (circular convolution by sums over the PSF), the
// reference for the backends' padded frames.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "compute/image.h"

namespace stacklens::testing {

using compute::Shape;

// u (shape s) convolved circularly with psf (shape ps, centred at size / 2), or correlated with it
// when adjoint.
inline std::vector<double> periodicConvolution(const std::vector<double>& u, Shape s,
                                               const std::vector<double>& psf, Shape ps,
                                               bool adjoint = false) {
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
              const int64_t zz = ((z - dz) % s.z + s.z) % s.z, yy = ((y - dy) % s.y + s.y) % s.y,
                            xx = ((x - dx) % s.x + s.x) % s.x;
              acc += psf[(a * ps.y + b) * ps.x + c] * u[(zz * s.y + yy) * s.x + xx];
            }
        out[(z * s.y + y) * s.x + x] = acc;
      }
  return out;
}

// obs: the frame (already padded) of shape s; psf: normalised, of shape ps, centred at size / 2.
inline std::vector<double> rlPeriodicReference(const std::vector<double>& obs, Shape s,
                                               const std::vector<double>& psf, Shape ps,
                                               int iterations, double eps) {
  std::vector<double> est = obs;
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> c = periodicConvolution(est, s, psf, ps);
    for (int64_t i = 0; i < s.count(); ++i) c[i] = obs[i] / std::max(c[i], eps);
    const std::vector<double> corr = periodicConvolution(c, s, psf, ps, true);
    for (int64_t i = 0; i < s.count(); ++i) est[i] *= corr[i];
  }
  return est;
}

// Half-sample symmetric reflection of i into [0, n), any distance out (… b a | a b … | … b a).
inline int64_t reflectedIndex(int64_t i, int64_t n) {
  const int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
  return m < n ? m : 2 * n - 1 - m;
}

// u (shape s) convolved with psf (shape ps, centred at size / 2) reading past the edges the data
// reflected: Boundary::ReflectExact's convolution, written out. Axes of length 1 are left alone.
inline std::vector<double> reflectedConvolution(const std::vector<double>& u, Shape s,
                                                const std::vector<double>& psf, Shape ps) {
  std::vector<double> out(s.count(), 0.0);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double acc = 0;
        for (int64_t a = 0; a < ps.z; ++a)
          for (int64_t b = 0; b < ps.y; ++b)
            for (int64_t c = 0; c < ps.x; ++c) {
              const int64_t zz = reflectedIndex(z - (a - ps.z / 2), s.z),
                            yy = reflectedIndex(y - (b - ps.y / 2), s.y),
                            xx = reflectedIndex(x - (c - ps.x / 2), s.x);
              acc += psf[(a * ps.y + b) * ps.x + c] * u[(zz * s.y + yy) * s.x + xx];
            }
        out[(z * s.y + y) * s.x + x] = acc;
      }
  return out;
}

// Richardson–Lucy with every convolution reflected at the edges; the PSF is symmetric, so the
// correlation is the convolution.
inline std::vector<double> rlReflectedReference(const std::vector<double>& obs, Shape s,
                                                const std::vector<double>& psf, Shape ps,
                                                int iterations, double eps) {
  std::vector<double> est = obs;
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> c = reflectedConvolution(est, s, psf, ps);
    for (int64_t i = 0; i < s.count(); ++i) c[i] = obs[i] / std::max(c[i], eps);
    const std::vector<double> corr = reflectedConvolution(c, s, psf, ps);
    for (int64_t i = 0; i < s.count(); ++i) est[i] *= corr[i];
  }
  return est;
}

}  // namespace stacklens::testing
