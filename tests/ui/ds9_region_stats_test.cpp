// Statistics of DS9 regions part by part, as DS9 lists them: each ring of an annulus, each
// sector × ring of a panda, against brute-force sums; NaN skipped; a region larger than the
// image or off it measured without reading outside.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ui/analysis/region_stats.h"

using namespace stacklens;
using namespace stacklens::ui;

namespace {

constexpr int kRampW = 80, kRampH = 70;

io::PixelRegion region(io::RegionShape s, double x, double y, std::vector<double> sizes,
                       std::vector<double> angles = {}) {
  io::PixelRegion r;
  r.shape = s;
  r.points = {{x, y}};
  r.sizes = std::move(sizes);
  r.angles = std::move(angles);
  return r;
}

// A slice whose value at (x, y) is x + 100 y: every pixel different.
std::vector<float> ramp() {
  std::vector<float> v(size_t(kRampW) * kRampH);
  for (int y = 0; y < kRampH; ++y)
    for (int x = 0; x < kRampW; ++x) v[size_t(y) * kRampW + x] = float(x + 100 * y);
  return v;
}

}  // namespace

TEST(Ds9RegionStats, EachPandaSectorAndRingMatchesBruteForce) {
  const std::vector<double> radii{3, 8, 14};
  const io::PixelRegion p =
      region(io::RegionShape::Panda, 40.5, 30.25, radii, {45, 135, 225, 315, 405});
  const std::vector<float> v = ramp();
  const std::vector<RegionStats> parts = regionStatistics(v.data(), kRampW, kRampH, p);
  ASSERT_EQ(parts.size(), 8u);  // 4 sectors × 2 rings, sector by sector
  std::vector<double> sum(8, 0);
  std::vector<int64_t> npix(8, 0);
  for (int y = 0; y < kRampH; ++y)
    for (int x = 0; x < kRampW; ++x) {
      const double dx = x - 40.5, dy = y - 30.25, d = std::hypot(dx, dy);
      double phi = std::atan2(dy, dx) * 180 / M_PI - 45;
      while (phi < 0) phi += 360;
      const int sector = int(phi / 90);
      for (int ring = 0; ring < 2; ++ring)
        if (d > radii[ring] && d <= radii[ring + 1]) {
          sum[sector * 2 + ring] += v[size_t(y) * kRampW + x];
          ++npix[sector * 2 + ring];
        }
    }
  for (size_t k = 0; k < 8; ++k) {
    EXPECT_EQ(parts[k].npix, npix[k]) << k;
    EXPECT_DOUBLE_EQ(parts[k].sum, sum[k]) << k;
    EXPECT_NEAR(parts[k].mean, sum[k] / npix[k], 1e-9) << k;
  }
  // The sector from 45° to 135° lies above the centre (y 30.25): its rows start at 31.
  EXPECT_GT(parts[0].min, 30 * 100);
}

TEST(Ds9RegionStats, AnnulusRingsSkipNanAndStayInsideTheImage) {
  std::vector<float> ones(size_t(kRampW) * kRampH, 1.0f);
  ones[size_t(10) * kRampW + 5] = std::numeric_limits<float>::quiet_NaN();  // (5, 10): ring 0
  // Centred on the image corner with rings far past the edges: only pixels of the image count.
  const io::PixelRegion a = region(io::RegionShape::Annulus, 0.5, 0.5, {0, 20, 1e6});
  const std::vector<RegionStats> parts = regionStatistics(ones.data(), kRampW, kRampH, a);
  ASSERT_EQ(parts.size(), 2u);
  int64_t inner = 0;
  for (int y = 0; y < kRampH; ++y)
    for (int x = 0; x < kRampW; ++x) inner += std::hypot(x - 0.5, y - 0.5) <= 20;
  EXPECT_EQ(parts[0].npix, inner - 1);
  EXPECT_EQ(parts[1].npix, int64_t(kRampW) * kRampH - inner);
  EXPECT_DOUBLE_EQ(parts[1].mean, 1.0);
  // Points hold no pixels; a region off the image has empty parts.
  io::PixelRegion point;
  point.shape = io::RegionShape::Point;
  point.points = {{3, 3}};
  EXPECT_TRUE(regionStatistics(ones.data(), kRampW, kRampH, point).empty());
  const io::PixelRegion away = region(io::RegionShape::Circle, -500, -500, {10});
  const auto off = regionStatistics(ones.data(), kRampW, kRampH, away);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(off[0].npix, 0);
}
