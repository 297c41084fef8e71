// Statistics of the pixels inside a rectangular or elliptical region of a slice, or inside each
// part of a DS9 region.
#pragma once

#include <QRectF>
#include <cstdint>
#include <vector>

#include "io/ds9_regions.h"

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

// The same for each part of a DS9 region, in the order DS9's statistics list them
// (io::regionPartAt: an annulus ring by ring, a panda sector by sector and ring by ring within
// each; one part for other area shapes, none for points, lines and text). A pixel counts in the
// part its centre lies in.
std::vector<RegionStats> regionStatistics(const float* data, int width, int height,
                                          const io::PixelRegion& region);

}  // namespace stacklens::ui
