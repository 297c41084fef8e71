// Region statistics, line profiles, and the histogram against brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ui/analysis/profiles.h"
#include "ui/analysis/region_stats.h"
#include "ui/display/histogram_widget.h"

using namespace stacklens::ui;

namespace {
constexpr int kW = 23, kH = 17;
std::vector<float> image() {
  std::vector<float> v(kW * kH);
  for (int i = 0; i < kW * kH; ++i) v[i] = float((i * 37) % 101) - 20.f;
  v[5 * kW + 6] = NAN;
  return v;
}
}  // namespace

TEST(RegionStats, RectangleMatchesBruteForce) {
  const auto v = image();
  const RegionStats s =
      regionStatistics(v.data(), kW, kH, QRectF(QPointF(3.2, 2.0), QPointF(9.0, 8.7)), false);
  std::vector<double> in;
  for (int y = 2; y <= 8; ++y)
    for (int x = 4; x <= 9; ++x)
      if (std::isfinite(v[y * kW + x])) in.push_back(v[y * kW + x]);
  ASSERT_EQ(s.npix, int64_t(in.size()));
  const double sum = std::accumulate(in.begin(), in.end(), 0.0);
  const double mean = sum / in.size();
  double var = 0;
  for (double x : in) var += (x - mean) * (x - mean);
  std::sort(in.begin(), in.end());
  const double median =
      in.size() % 2 ? in[in.size() / 2] : 0.5 * (in[in.size() / 2 - 1] + in[in.size() / 2]);
  EXPECT_DOUBLE_EQ(s.sum, sum);
  EXPECT_NEAR(s.mean, mean, 1e-12);
  EXPECT_NEAR(s.std, std::sqrt(var / in.size()), 1e-9);
  EXPECT_DOUBLE_EQ(s.median, median);
  EXPECT_DOUBLE_EQ(s.min, in.front());
  EXPECT_DOUBLE_EQ(s.max, in.back());
}

TEST(RegionStats, EllipseKeepsPixelsWhoseCentresAreInside) {
  std::vector<float> ones(kW * kH, 1.f);
  // Circle of radius 5 around (10, 8): count lattice points with dx² + dy² ≤ 25.
  const RegionStats s = regionStatistics(ones.data(), kW, kH, QRectF(5, 3, 10, 10), true);
  int64_t expected = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) expected += (x - 10) * (x - 10) + (y - 8) * (y - 8) <= 25;
  EXPECT_EQ(s.npix, expected);
  EXPECT_EQ(expected, 81);
  EXPECT_DOUBLE_EQ(s.sum, double(expected));
}

TEST(RegionStats, OutsideTheImageIsEmpty) {
  const auto v = image();
  EXPECT_EQ(regionStatistics(v.data(), kW, kH, QRectF(100, 100, 5, 5), false).npix, 0);
}

TEST(LineProfile, IsExactOnAPlane) {
  std::vector<float> plane(kW * kH);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) plane[y * kW + x] = 2.f * x - 3.f * y + 1.f;
  const LineProfile p = lineProfile(plane.data(), kW, kH, QPointF(1.5, 2.25), QPointF(20.0, 14.0));
  ASSERT_EQ(p.value.size(), p.distance.size());
  ASSERT_EQ(p.value.size(), size_t(std::ceil(std::hypot(18.5, 11.75))) + 1);
  for (size_t i = 0; i < p.value.size(); ++i) {
    const double t = p.distance[i] / p.distance.back();
    const double x = 1.5 + 18.5 * t, y = 2.25 + 11.75 * t;
    EXPECT_NEAR(p.value[i], 2 * x - 3 * y + 1, 1e-9);
  }
  EXPECT_TRUE(std::isnan(sampleBilinear(plane.data(), kW, kH, -0.5, 3)));
  EXPECT_DOUBLE_EQ(sampleBilinear(plane.data(), kW, kH, kW - 1, kH - 1),
                   2.0 * (kW - 1) - 3.0 * (kH - 1) + 1);
}

TEST(Histogram, CountsEveryFiniteValueOnce) {
  const auto v = image();
  const Histogram h = computeHistogram(v.data(), v.size(), 10);
  EXPECT_DOUBLE_EQ(std::accumulate(h.counts.begin(), h.counts.end(), 0.0), double(v.size() - 1));
  EXPECT_DOUBLE_EQ(h.min, -20.0);
  EXPECT_DOUBLE_EQ(h.max, 80.0);
  EXPECT_GT(h.counts.back(), 0.0);  // the maximum lands in the last bin
}
