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

}  // namespace stacklens::testing
