// Region statistics (mean, median, std, sum, min, max, npix) over the pixels inside a shape.
#include "ui/analysis/region_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "io/region_geometry.h"

namespace stacklens::ui {

namespace {

// npix, mean, median, std, sum, min and max of the finite values (reordered by the median).
RegionStats statisticsOf(std::vector<float>& values) {
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

}  // namespace

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
  return statisticsOf(values);
}

std::vector<RegionStats> regionStatistics(const float* data, int width, int height,
                                          const io::PixelRegion& region) {
  const int parts = io::regionParts(region);
  std::vector<std::vector<float>> values(static_cast<size_t>(std::max(0, parts)));
  if (parts > 0 && width > 0 && height > 0) {
    const auto e = io::regionExtent(region);
    // Clamped as doubles: a region far larger than the image must not overflow an int.
    auto index = [](double v, int last) {
      return static_cast<int>(std::clamp(std::isnan(v) ? 0.0 : v, 0.0, double(last)));
    };
    const int x0 = index(std::floor(e[0]), width - 1), x1 = index(std::ceil(e[2]), width - 1);
    const int y0 = index(std::floor(e[1]), height - 1), y1 = index(std::ceil(e[3]), height - 1);
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        const int part = io::regionPartAt(region, x, y);
        if (part < 0) continue;
        const float v = data[static_cast<size_t>(y) * width + x];
        if (std::isfinite(v)) values[static_cast<size_t>(part)].push_back(v);
      }
  }
  std::vector<RegionStats> out;
  out.reserve(values.size());
  for (auto& v : values) out.push_back(statisticsOf(v));
  return out;
}

}  // namespace stacklens::ui
