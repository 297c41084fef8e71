// The float that segmentation compares pixels against on every backend. Pixels are float and the
// threshold (a clipped median plus n sigma, or given) is double; "value > threshold" is decided
// in double on every backend, but each compares in float for speed.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace stacklens::compute {

// The largest float ≤ threshold: a float x satisfies x > threshold (in double) exactly when
// x > floatThreshold(threshold), as no float lies in (floatThreshold(threshold), threshold].
// Rounding to the nearest float instead would lose a pixel that equals a threshold rounded up.
inline float floatThreshold(double threshold) {
  float fthreshold = static_cast<float>(
      std::clamp(threshold, -static_cast<double>(std::numeric_limits<float>::max()),
                 static_cast<double>(std::numeric_limits<float>::max())));
  if (static_cast<double>(fthreshold) > threshold)
    fthreshold = std::nextafter(fthreshold, -std::numeric_limits<float>::infinity());
  return fthreshold;
}

}  // namespace stacklens::compute
