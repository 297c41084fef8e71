// Contour lines of an image (DS9's and CARTA's contours): marching squares with linear
// interpolation along the cells' edges, the pieces joined into polylines. Qt-free; the viewer
// draws them (ui/display/contours_panel.h) and the coordinate grid uses the segments.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace stacklens::compute {

struct ContourPoint {
  double x = 0, y = 0;  // image coordinates, pixel centres at integers
};

struct ContourLine {
  double level = 0;
  std::vector<ContourPoint> points;
  bool closed = false;  // the last point joins the first
};

// The pieces where the image crosses level, one per crossed cell side pair. Cells with a NaN
// corner have none; a saddle cell (diagonal corners on the same side) is split by its mean.
std::vector<std::pair<ContourPoint, ContourPoint>> contourSegments(const double* values,
                                                                   int64_t width, int64_t height,
                                                                   double level);

// The lines of each level, pieces joined where they meet (closed where they come round).
std::vector<ContourLine> contourLines(const float* image, int64_t width, int64_t height,
                                      const std::vector<double>& levels);

// count levels evenly spaced strictly inside (low, high) (DS9's "linear" levels).
std::vector<double> contourLevels(double low, double high, int count);

}  // namespace stacklens::compute
