// Which part of a DS9 region a pixel centre falls in: pixel counts of annulus rings and panda
// sectors against brute-force counts and closed forms (symmetry, box areas on a half-pixel
// centre), boundary points, extents.
#include "io/region_geometry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace stacklens::io;

namespace {

constexpr double kDeg = M_PI / 180;

PixelRegion shape(RegionShape s, double x, double y, std::vector<double> sizes,
                  std::vector<double> angles = {}, double angle = 0) {
  PixelRegion r;
  r.shape = s;
  r.points = {{x, y}};
  r.sizes = std::move(sizes);
  r.angles = std::move(angles);
  r.angle = angle;
  return r;
}

// Pixels of a size × size image per part, through regionPartAt.
std::map<int, int> countParts(const PixelRegion& r, int size = 101) {
  std::map<int, int> counts;
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      const int part = regionPartAt(r, x, y);
      if (part >= 0) ++counts[part];
    }
  return counts;
}

}  // namespace

TEST(RegionGeometry, PandaSectorsAndRingsMatchABruteForceCount) {
  const std::vector<double> radii{0, 5.3, 11.7, 20.2};
  const PixelRegion p = shape(RegionShape::Panda, 50.5, 50.5, radii, {0, 90, 180, 270, 360});
  ASSERT_EQ(regionRings(p), 3);
  ASSERT_EQ(regionSectors(p), 4);
  ASSERT_EQ(regionParts(p), 12);
  std::map<int, int> want;
  for (int y = 0; y < 101; ++y)
    for (int x = 0; x < 101; ++x) {
      const double dx = x - 50.5, dy = y - 50.5, d = std::hypot(dx, dy);
      double phi = std::atan2(dy, dx) / kDeg;
      if (phi < 0) phi += 360;
      for (int ring = 0; ring < 3; ++ring)
        if (d > radii[ring] && d <= radii[ring + 1]) ++want[static_cast<int>(phi / 90) * 3 + ring];
    }
  const auto got = countParts(p);
  EXPECT_EQ(got, want);
  // A centre between pixels makes the four quarters the same pixels turned: equal counts.
  for (int ring = 0; ring < 3; ++ring)
    for (int sector = 1; sector < 4; ++sector)
      EXPECT_EQ(got.at(sector * 3 + ring), got.at(ring)) << ring << " " << sector;
}

TEST(RegionGeometry, BoxPandaCountsAreTheBoxAreasOnAHalfPixelCentre) {
  // Boxes 6×4, 12×8, 18×12 round a centre between pixels hold exactly 24, 96 and 216 pixel
  // centres: rings of 72 and 120, a quarter of each per 90° sector (the boxes are mirror
  // symmetric and no centre lies on a sector edge).
  const PixelRegion b =
      shape(RegionShape::Bpanda, 30.5, 40.5, {6, 4, 12, 8, 18, 12}, {0, 90, 180, 270, 360});
  const auto got = countParts(b);
  ASSERT_EQ(got.size(), 8u);
  for (int sector = 0; sector < 4; ++sector) {
    EXPECT_EQ(got.at(sector * 2), 18) << sector;
    EXPECT_EQ(got.at(sector * 2 + 1), 30) << sector;
  }
  // The same rings without sectors.
  const PixelRegion a = shape(RegionShape::BoxAnnulus, 30.5, 40.5, {6, 4, 12, 8, 18, 12});
  EXPECT_EQ(countParts(a), (std::map<int, int>{{0, 72}, {1, 120}}));
}

TEST(RegionGeometry, RotatedEllipsePandaMatchesABruteForceCount) {
  // Sectors of 70° and 150° from −20° on the ellipse's own axes, turned 30°, off the pixel grid.
  const std::vector<double> sizes{4, 2, 8, 4, 12, 6};
  const std::vector<double> angles{-20, 50, 200};
  const double cx = 40.3, cy = 60.7, turn = 30;
  const PixelRegion e = shape(RegionShape::Epanda, cx, cy, sizes, angles, turn);
  std::map<int, int> want;
  for (int y = 0; y < 101; ++y)
    for (int x = 0; x < 101; ++x) {
      const double dx = x - cx, dy = y - cy;
      const double u = dx * std::cos(turn * kDeg) + dy * std::sin(turn * kDeg);
      const double v = -dx * std::sin(turn * kDeg) + dy * std::cos(turn * kDeg);
      double phi = std::atan2(v, u) / kDeg;  // from the first axis
      while (phi < -20) phi += 360;
      const int sector = phi < 50 ? 0 : phi < 200 ? 1 : -1;
      if (sector < 0) continue;
      auto in = [&](int k) {
        const double a = sizes[2 * k], b = sizes[2 * k + 1];
        return (u / a) * (u / a) + (v / b) * (v / b) <= 1;
      };
      for (int ring = 0; ring < 2; ++ring)
        if (in(ring + 1) && !in(ring)) ++want[sector * 2 + ring];
    }
  EXPECT_EQ(countParts(e), want);
  EXPECT_EQ(want.size(), 4u);
}

TEST(RegionGeometry, AnnulusRingsShareNoPixelAndCoverTheOuterDisc) {
  const PixelRegion a = shape(RegionShape::Annulus, 50, 50, {0, 3, 6, 9.5});
  const auto rings = countParts(a);
  int outer = 0, total = 0;
  for (int y = 0; y < 101; ++y)
    for (int x = 0; x < 101; ++x) outer += std::hypot(x - 50, y - 50) <= 9.5;
  for (const auto& [part, n] : rings) total += n;
  // A zero inner radius holds nothing: the centre pixel is in the first ring, as DS9 counts it.
  EXPECT_EQ(total, outer);
  EXPECT_EQ(regionPartAt(a, 50, 50), 0);
  EXPECT_EQ(regionPartAt(a, 53, 50), 0);  // on the boundary of 3: the inner ring's
  EXPECT_EQ(regionPartAt(a, 54, 50), 1);
  EXPECT_EQ(regionPartAt(a, 60, 50), -1);
}

TEST(RegionGeometry, RotatedBoxHoldsThePixelsOfItsCornerPolygon) {
  const PixelRegion box = shape(RegionShape::Box, 20.2, 30.1, {10, 6}, {}, 30);
  PixelRegion polygon;
  polygon.shape = RegionShape::Polygon;
  for (double a : {0.0, 90.0, 180.0, 270.0}) {
    // Corner directions: (±5, ±3) turned 30°.
    const double u = (a == 0 || a == 270) ? 5 : -5, v = a < 180 ? 3 : -3;
    polygon.points.push_back({20.2 + u * std::cos(30 * kDeg) - v * std::sin(30 * kDeg),
                              30.1 + u * std::sin(30 * kDeg) + v * std::cos(30 * kDeg)});
  }
  int both = 0;
  for (int y = 0; y < 60; ++y)
    for (int x = 0; x < 60; ++x) {
      EXPECT_EQ(regionPartAt(box, x, y), regionPartAt(polygon, x, y)) << x << "," << y;
      both += regionPartAt(box, x, y) == 0;
    }
  EXPECT_GT(both, 50);
  EXPECT_LT(both, 70);
}

TEST(RegionGeometry, BoundaryPointsAndExtents) {
  const PixelRegion e =
      shape(RegionShape::Epanda, 10, 20, {4, 2, 8, 4}, {0, 90, 180, 270, 360}, 90);
  // Ring 1 at 90° from the first axis is its minor semi-axis, turned 90°: 4 pixels towards −x.
  const auto p = boundaryPoint(e, 1, 90);
  EXPECT_NEAR(p[0], 6, 1e-12);
  EXPECT_NEAR(p[1], 20, 1e-12);
  const auto x = regionExtent(e);  // turned 90°: 4 across in x, 8 in y
  EXPECT_NEAR(x[0], 6, 1e-12);
  EXPECT_NEAR(x[1], 12, 1e-12);
  EXPECT_NEAR(x[2], 14, 1e-12);
  EXPECT_NEAR(x[3], 28, 1e-12);
  // A box boundary point lies on its side: 45° of a 12 × 8 box meets the top at (4, 4).
  const PixelRegion b = shape(RegionShape::BoxAnnulus, 0, 0, {6, 4, 12, 8});
  const auto q = boundaryPoint(b, 1, 45);
  EXPECT_NEAR(q[0], 4, 1e-12);
  EXPECT_NEAR(q[1], 4, 1e-12);
  // Points, lines and text hold no pixels.
  PixelRegion point;
  point.shape = RegionShape::Point;
  point.points = {{1, 1}};
  EXPECT_EQ(regionParts(point), 0);
  EXPECT_EQ(regionPartAt(point, 1, 1), -1);
}
