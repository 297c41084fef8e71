// Statistics of the pixels inside a rectangular or elliptical region of a slice.
#pragma once

#include <QRectF>
#include <cstdint>

namespace stacklens::ui {

struct RegionStats {
  int64_t npix = 0;  // finite pixels inside the region
  double mean = 0, median = 0, std = 0, sum = 0, min = 0, max = 0;
};

// A pixel (x, y) counts when its centre lies in the region (image coordinates, pixel centres at
// integers, rect edges inclusive); for an ellipse, the ellipse inscribed in rect. NaN and ±inf
// are skipped. std is the population standard deviation; median of an even count averages the
// two middle values.
RegionStats regionStatistics(const float* data, int width, int height, QRectF rect, bool ellipse);

}  // namespace stacklens::ui
