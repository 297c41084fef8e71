// The median filter and outlier removal written out directly, the reference for every backend:
// each k×k window (SciPy's 'reflect' edges) sorted in the documented order.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "brute_force.h"
#include "compute/image.h"
#include "compute/params.h"

namespace stacklens::testing {

// The documented order: NaN (of either sign) above +Inf, -0 below +0, otherwise numeric.
inline bool totalLess(float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  if (a == b) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

// The middle value of each window; a NaN median comes out as the quiet NaN.
inline compute::Image medianReference(const compute::Image& in, int k) {
  const compute::Shape s = in.shape();
  compute::Image out = compute::Image::host(s);
  std::vector<float> window;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        compute::brute_force::neighbourhood(in, z, y, x, k, window);
        std::sort(window.begin(), window.end(), totalLess);
        const float m = window[window.size() / 2];
        out.at(z, y, x) = std::isnan(m) ? std::numeric_limits<float>::quiet_NaN() : m;
      }
  return out;
}

// Each pixel that lies more than p.threshold above (Bright), below (Dark) or either side (Both)
// of its window's median becomes that median; a NaN pixel or a NaN median keeps the pixel.
inline compute::Image outlierReference(const compute::Image& in, const compute::OutlierParams& p) {
  using compute::OutlierMode;
  const compute::Image median = medianReference(in, p.size);
  compute::Image out = compute::Image::host(in.shape());
  for (int64_t i = 0; i < in.shape().count(); ++i) {
    const float v = in.data()[i], m = median.data()[i];
    const double d = double(v) - double(m);
    const bool outlier = p.mode == OutlierMode::Bright ? d > p.threshold
                         : p.mode == OutlierMode::Dark ? -d > p.threshold
                                                       : std::fabs(d) > p.threshold;
    out.data()[i] = outlier ? m : v;
  }
  return out;
}

}  // namespace stacklens::testing
