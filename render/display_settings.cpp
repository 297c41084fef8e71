// The CPU twin of the fragment shader's value → colormap-index mapping.
#include "render/display_settings.h"

#include <algorithm>
#include <cmath>

namespace stacklens::render {

int colourIndex(const DisplaySettings& d, float v, const std::vector<float>* cdf) {
  if (std::isnan(v)) return -1;
  const float x = std::clamp((v - d.limits.low) / (d.limits.high - d.limits.low), 0.f, 1.f);
  float t = std::clamp(applyScale(d.scale, x, d.exponent, cdf), 0.f, 1.f);
  if (d.invert) t = 1.f - t;
  return std::clamp(static_cast<int>(t * 255.f + 0.5f), 0, 255);
}

}  // namespace stacklens::render
