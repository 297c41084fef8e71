// How a slice is turned into colours: colormap, scale, limits, inversion, NaN colour, sampling.
#pragma once

#include <QColor>
#include <QString>
#include <vector>

#include "render/limits.h"
#include "render/scale.h"

namespace stacklens::render {

struct DisplaySettings {
  QString colormap = "gray";
  Scale scale = Scale::Linear;
  float exponent = kDefaultScaleExponent;  // for log and power
  Limits limits;
  bool invert = false;
  QColor nanColour = QColor(200, 30, 30);
  bool smooth = false;  // bilinear instead of nearest sampling
};

// The colormap index (0–255) of value v, exactly as the fragment shader computes it; −1 for NaN.
// cdf is needed for Scale::HistEq only.
int colourIndex(const DisplaySettings& d, float v, const std::vector<float>* cdf = nullptr);

}  // namespace stacklens::render
