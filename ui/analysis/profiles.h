// Line profiles across a slice and the extraction of orthogonal (XZ, YZ) views from slices.
#pragma once

#include <QPointF>
#include <vector>

namespace stacklens::ui {

// Values sampled every pixel (bilinear) from `from` to `to`, both ends included; NaN outside.
// distance[i] is the distance of sample i from `from` in pixels.
struct LineProfile {
  std::vector<double> distance;
  std::vector<double> value;
};
LineProfile lineProfile(const float* data, int width, int height, QPointF from, QPointF to);

// Bilinear sample at image coordinates (pixel centres at integers); NaN outside the image.
double sampleBilinear(const float* data, int width, int height, double x, double y);

}  // namespace stacklens::ui
