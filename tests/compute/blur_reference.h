// The Gaussian blur written out directly, the reference for every backend: a 3D correlation with
// the product of the three sampled kernels, in double, with SciPy's 'reflect' edges.
#pragma once

#include <cmath>
#include <vector>

#include "brute_force.h"
#include "compute/image.h"
#include "compute/params.h"

namespace stacklens::testing {

// SciPy's gaussian_filter1d weights: radius ⌊truncate·σ + ½⌋, normalised to sum 1.
inline std::vector<double> gaussianKernel(double sigma, double truncate) {
  const int r = static_cast<int>(truncate * sigma + 0.5);
  std::vector<double> w;
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += w.emplace_back(std::exp(-k * k / (2 * sigma * sigma)));
  for (double& v : w) v /= sum;
  return w;
}

// No blur along z when sigmaZ ≤ 0. NaN-aware: the normalised convolution over the pixels that
// are not NaN (NaN stays NaN); otherwise NaN and infinities spread like any value.
inline compute::Image blurReference(const compute::Image& in, const compute::BlurParams& p) {
  using compute::brute_force::reflect;
  const compute::Shape s = in.shape();
  const auto wz = p.sigmaZ > 0 ? gaussianKernel(p.sigmaZ, p.truncate) : std::vector<double>{1.0};
  const auto wy = gaussianKernel(p.sigmaY, p.truncate), wx = gaussianKernel(p.sigmaX, p.truncate);
  const int rz = int(wz.size() / 2), ry = int(wy.size() / 2), rx = int(wx.size() / 2);
  compute::Image out = compute::Image::host(s);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double sum = 0, weight = 0;
        for (int a = -rz; a <= rz; ++a)
          for (int b = -ry; b <= ry; ++b)
            for (int c = -rx; c <= rx; ++c) {
              const float v = in.at(reflect(z + a, s.z), reflect(y + b, s.y), reflect(x + c, s.x));
              const double w = wz[a + rz] * wy[b + ry] * wx[c + rx];
              if (p.nanAware && std::isnan(v)) continue;
              sum += w * v;
              weight += w;
            }
        const bool hole = p.nanAware && std::isnan(in.at(z, y, x));
        out.at(z, y, x) = hole ? NAN : static_cast<float>(p.nanAware ? sum / weight : sum);
      }
  return out;
}

}  // namespace stacklens::testing
