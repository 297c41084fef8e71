// Region statistics (mean, median, std, sum, min, max, npix) over the pixels inside a shape.
#include "ui/region_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace stacklens::ui {

RegionStats regionStatistics(const float* data, int width, int height, QRectF rect, bool ellipse) {
  rect = rect.normalized();
  const int x0 = std::max(0, static_cast<int>(std::ceil(rect.left())));
  const int x1 = std::min(width - 1, static_cast<int>(std::floor(rect.right())));
  const int y0 = std::max(0, static_cast<int>(std::ceil(rect.top())));
  const int y1 = std::min(height - 1, static_cast<int>(std::floor(rect.bottom())));
  const double cx = rect.center().x(), cy = rect.center().y();
  const double rx = rect.width() / 2, ry = rect.height() / 2;
  std::vector<float> values;
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      if (ellipse) {
        const double dx = rx > 0 ? (x - cx) / rx : (x == cx ? 0 : 2);
        const double dy = ry > 0 ? (y - cy) / ry : (y == cy ? 0 : 2);
        if (dx * dx + dy * dy > 1.0 + 1e-12) continue;
      }
      const float v = data[static_cast<size_t>(y) * width + x];
      if (std::isfinite(v)) values.push_back(v);
    }
  RegionStats s;
  s.npix = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  s.min = s.max = values[0];
  for (float v : values) {
    sum += v;
    s.min = std::min<double>(s.min, v);
    s.max = std::max<double>(s.max, v);
  }
  s.sum = sum;
  s.mean = sum / values.size();
  double var = 0;
  for (float v : values) var += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(var / values.size());
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  s.median = values[mid];
  if (values.size() % 2 == 0)
    s.median = 0.5 * (s.median + *std::max_element(values.begin(), values.begin() + mid));
  return s;
}

}  // namespace stacklens::ui
