// Line profiles with bilinear sampling.
#include "ui/analysis/profiles.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stacklens::ui {

double sampleBilinear(const float* data, int width, int height, double x, double y) {
  if (!(x >= 0 && y >= 0 && x <= width - 1 && y <= height - 1))
    return std::numeric_limits<double>::quiet_NaN();
  const int x0 = std::min(static_cast<int>(x), width - 1),
            y0 = std::min(static_cast<int>(y), height - 1);
  const int x1 = std::min(x0 + 1, width - 1), y1 = std::min(y0 + 1, height - 1);
  const double fx = x - x0, fy = y - y0;
  auto at = [&](int xx, int yy) { return double(data[static_cast<size_t>(yy) * width + xx]); };
  const double top = at(x0, y0) * (1 - fx) + (fx > 0 ? at(x1, y0) * fx : 0.0);
  const double bottom = at(x0, y1) * (1 - fx) + (fx > 0 ? at(x1, y1) * fx : 0.0);
  return fy > 0 ? top * (1 - fy) + bottom * fy : top;
}

LineProfile lineProfile(const float* data, int width, int height, QPointF from, QPointF to) {
  LineProfile p;
  const double length = std::hypot(to.x() - from.x(), to.y() - from.y());
  const int steps = std::max(1, static_cast<int>(std::ceil(length)));
  for (int i = 0; i <= steps; ++i) {
    const double t = double(i) / steps;
    const double x = from.x() + (to.x() - from.x()) * t, y = from.y() + (to.y() - from.y()) * t;
    p.distance.push_back(length * t);
    p.value.push_back(sampleBilinear(data, width, height, x, y));
  }
  return p;
}

}  // namespace stacklens::ui
