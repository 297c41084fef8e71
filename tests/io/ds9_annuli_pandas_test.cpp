// DS9 annuli and pandas, from files written after the DS9 region reference: every ring of the
// circle, ellipse and box annuli (both axes interpolated in the n= forms), the angle sectors ×
// rings of panda, epanda and bpanda (short form and DS9's `panda=(…)(…)` lists), refused forms,
// their placement on a rotated and a mirrored sky, and their DS9 text read back the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/ds9_regions.h"
#include "io/region_geometry.h"
#include "sky_headers.h"
#include "test_support.h"

using namespace stacklens::io;

namespace {

using stacklens::io::test::kRegions;

using stacklens::io::test::warned;

PixelRegion toPixels(const Region& r) { return regionsInPixels({r}, nullptr, 0, nullptr).at(0); }

void expectValues(const std::vector<double>& got, const std::vector<double>& want,
                  double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << i;
}

}  // namespace

TEST(Ds9AnnuliPandas, EveryRingAndSectorOfEachForm) {
  const RegionFile f = readDs9Regions(kRegions + "annuli_pandas_image.reg");
  EXPECT_TRUE(f.warnings.empty()) << f.warnings.front();
  const auto& r = f.regions;
  ASSERT_EQ(r.size(), 16u);

  // annulus(50.5,50.5,4,10,n=3): four circles 2 apart; the listed form keeps its radii.
  EXPECT_EQ(r[0].shape, RegionShape::Annulus);
  EXPECT_EQ(r[0].points[0], (std::array<double, 2>{49.5, 49.5}));
  expectValues(r[0].sizes, {4, 6, 8, 10});
  EXPECT_EQ(r[1].shape, RegionShape::Annulus);
  expectValues(r[1].sizes, {2, 5, 7, 11});

  // Ellipse annuli: n=3 from (6, 3) to (12, 6) interpolates both axes; the listed one keeps
  // its pairs; both keep their angle.
  EXPECT_EQ(r[2].shape, RegionShape::EllipseAnnulus);
  expectValues(r[2].sizes, {6, 3, 8, 4, 10, 5, 12, 6});
  EXPECT_DOUBLE_EQ(r[2].angle, 30);
  EXPECT_EQ(r[3].shape, RegionShape::EllipseAnnulus);
  expectValues(r[3].sizes, {6, 3, 9, 4.5, 12, 6});
  EXPECT_DOUBLE_EQ(r[3].angle, 30);

  // Box annuli, listed and n=2.
  EXPECT_EQ(r[4].shape, RegionShape::BoxAnnulus);
  expectValues(r[4].sizes, {8, 4, 16, 8, 24, 12});
  EXPECT_DOUBLE_EQ(r[4].angle, 20);
  EXPECT_EQ(r[5].shape, RegionShape::BoxAnnulus);
  expectValues(r[5].sizes, {8, 4, 16, 8, 24, 12});

  // panda(…,30,300,3,5,15,2): sectors of 90° from 30°, rings of 5.
  EXPECT_EQ(r[6].shape, RegionShape::Panda);
  expectValues(r[6].angles, {30, 120, 210, 300});
  expectValues(r[6].sizes, {5, 10, 15});
  EXPECT_DOUBLE_EQ(r[6].angle, 0);
  EXPECT_EQ(regionRings(toPixels(r[6])), 2);
  EXPECT_EQ(regionSectors(toPixels(r[6])), 3);

  // epanda(…,0,360,4,6,3,18,9,3,45).
  EXPECT_EQ(r[7].shape, RegionShape::Epanda);
  expectValues(r[7].angles, {0, 90, 180, 270, 360});
  expectValues(r[7].sizes, {6, 3, 10, 5, 14, 7, 18, 9});
  EXPECT_DOUBLE_EQ(r[7].angle, 45);

  // bpanda(…,-45,135,2,8,4,24,12,2,10).
  EXPECT_EQ(r[8].shape, RegionShape::Bpanda);
  expectValues(r[8].angles, {-45, 45, 135});
  expectValues(r[8].sizes, {8, 4, 16, 8, 24, 12});
  EXPECT_DOUBLE_EQ(r[8].angle, 10);

  // DS9's uneven panda: the whole from panda=(…)(…), its `panda=ignore` part left out.
  EXPECT_EQ(r[9].shape, RegionShape::Panda);
  expectValues(r[9].angles, {0, 30, 120, 200});
  expectValues(r[9].sizes, {0, 5, 12});
  EXPECT_EQ(r[9].color, "red");
  EXPECT_EQ(r[9].line, 14);
  EXPECT_EQ(r[10].shape, RegionShape::Epanda);
  EXPECT_EQ(r[10].line, 16);
  expectValues(r[10].angles, {0, 30, 200});
  expectValues(r[10].sizes, {4, 2, 8, 4, 16, 8});
  EXPECT_DOUBLE_EQ(r[10].angle, 15);

  EXPECT_EQ(r[11].shape, RegionShape::Annulus);
  EXPECT_TRUE(r[11].exclude);
  EXPECT_FALSE(r[11].source);

  // A stop angle before the start goes once more round: 300 → 60 is 300, 360, 420.
  expectValues(r[12].angles, {300, 360, 420});

  // Three shapes on one line; the properties belong to the last.
  EXPECT_EQ(r[13].shape, RegionShape::Circle);
  EXPECT_EQ(r[14].shape, RegionShape::Annulus);
  EXPECT_EQ(r[15].shape, RegionShape::EllipseAnnulus);
  EXPECT_EQ(r[13].color, "green");
  EXPECT_EQ(r[15].color, "blue");
}

TEST(Ds9AnnuliPandas, RefusedFormsAreLeftOutWithTheirLine) {
  const RegionFile f = readDs9Regions(kRegions + "annuli_pandas_bad.reg");
  // Angles of 1e300° (where adding a turn changes nothing) are taken within a turn of zero:
  // that panda is read, and the circle of the last line.
  ASSERT_EQ(f.regions.size(), 2u);
  EXPECT_EQ(f.regions[0].shape, RegionShape::Panda);
  ASSERT_EQ(f.regions[0].angles.size(), 2u);
  EXPECT_GT(f.regions[0].angles[1], f.regions[0].angles[0]);
  EXPECT_LE(f.regions[0].angles[1] - f.regions[0].angles[0], 360);
  EXPECT_EQ(f.regions[1].shape, RegionShape::Circle);
  EXPECT_TRUE(warned(f, 5, "numbers of angles and radii"));  // nangle 0
  EXPECT_TRUE(warned(f, 6, "two or more radii"));            // annulus with one radius
  EXPECT_TRUE(warned(f, 7, "n= needs"));                     // n= with one ellipse
  EXPECT_TRUE(warned(f, 8, "360"));                          // angles over a full turn
  EXPECT_TRUE(warned(f, 9, "n must be"));                    // a million rings
  EXPECT_TRUE(warned(f, 10, "epanda="));                     // an odd number of sizes
  EXPECT_TRUE(warned(f, 11, "arguments"));                   // bpanda missing a size
  EXPECT_TRUE(warned(f, 12, "negative"));
  EXPECT_TRUE(warned(f, 13, "whole numbers"));  // 2.5 sectors
  EXPECT_EQ(f.warnings.size(), 9u);
}

// Sky pandas on a TAN WCS rotated by 30° (north 30° ccw from +y), with east left and right:
// the sector edges land where the sky directions they name do, found through the WCS itself.
TEST(Ds9AnnuliPandas, SkySectorsFollowTheSkyOnRotatedAndMirroredWcs) {
  for (bool eastRight : {false, true}) {
    test::TanHeader h;
    h.rho = 30;
    h.eastRight = eastRight;
    h.scale = 0.5 / 3600;
    auto wcs = h.wcs();
    char text[512];
    std::snprintf(text, sizeof text,
                  "icrs\n"
                  "epanda(%.12f,%.12f,10,100,1,4\",2\",20\",10\",2,20)\n"
                  "panda(%.12f,%.12f,0,360,4,0,0.005,1)\n",
                  h.ra0, h.dec0, h.ra0, h.dec0);
    const RegionFile f = parseDs9Regions(text);
    ASSERT_EQ(f.regions.size(), 2u);
    const auto pixels = regionsInPixels(f.regions, wcs.get(), 0, nullptr);
    ASSERT_EQ(pixels.size(), 2u);
    const PixelRegion& e = pixels[0];
    // 2″ steps of 0.5″ pixels: both axes of every ring.
    expectValues(e.sizes, {8, 4, 24, 12, 40, 20}, 1e-4);
    ASSERT_EQ(e.angles.size(), 2u);
    EXPECT_NEAR(e.angles[1] - e.angles[0], 90, 1e-6) << eastRight;
    // The sky direction 20° + 55° from west (PA 270° + 75°), 6″ out, is in the sector's inner
    // ring (u = 3.4″, v = 4.9″ on the shape's axes); the opposite direction is in no sector.
    for (double turn : {0.0, 180.0}) {
      double lon = 0, lat = 0, x = 0, y = 0;
      offsetOnSky(h.ra0, h.dec0, 270 + 75 + turn, 6.0 / 3600, lon, lat);
      ASSERT_TRUE(wcs->skyToPixel(SkyFrame::Icrs, lon, lat, 0, x, y));
      EXPECT_EQ(regionPartAt(e, x, y), turn == 0 ? 0 : -1) << eastRight << " " << turn;
    }
    // The panda's quarter from west to north holds the point 45° from west towards north.
    const PixelRegion& p = pixels[1];
    EXPECT_NEAR(p.sizes[1], 36.0, 1e-3);
    double lon = 0, lat = 0, x = 0, y = 0;
    offsetOnSky(h.ra0, h.dec0, 270 + 45, 0.002, lon, lat);
    ASSERT_TRUE(wcs->skyToPixel(SkyFrame::Icrs, lon, lat, 0, x, y));
    const int part = regionPartAt(p, x, y);
    ASSERT_GE(part, 0);
    // Sector 0 of the sky (west → north) is the first ccw in pixels with east left, the last
    // with east right (the sectors are listed ccw on the image).
    EXPECT_EQ(part, eastRight ? 3 : 0);
  }
}

TEST(Ds9AnnuliPandas, Ds9TextReadsBackTheSameRingsAndSectors) {
  const RegionFile f = readDs9Regions(kRegions + "annuli_pandas_image.reg");
  const auto pixels = regionsInPixels(f.regions, nullptr, 0, nullptr);
  ASSERT_EQ(pixels.size(), f.regions.size());
  const std::string text = ds9RegionText(pixels);
  // Even pandas in DS9's short form, uneven ones through their lists.
  EXPECT_NE(text.find("panda(60.5,40.5,30,300,3,5,15,2)"), std::string::npos) << text;
  EXPECT_NE(text.find("panda=(0 30 120 200)(0 5 12)"), std::string::npos) << text;
  EXPECT_NE(text.find("epanda=(0 30 200)(4 2 8 4 16 8)(15)"), std::string::npos) << text;
  const RegionFile back = parseDs9Regions(text);
  EXPECT_TRUE(back.warnings.empty()) << back.warnings.front();
  ASSERT_EQ(back.regions.size(), pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) {
    EXPECT_EQ(back.regions[i].shape, pixels[i].shape) << i;
    expectValues(back.regions[i].sizes, pixels[i].sizes, 1e-9);
    expectValues(back.regions[i].angles, pixels[i].angles, 1e-9);
    EXPECT_DOUBLE_EQ(back.regions[i].angle, pixels[i].angle) << i;
    EXPECT_EQ(back.regions[i].exclude, pixels[i].exclude) << i;
    EXPECT_EQ(back.regions[i].source, pixels[i].source) << i;
  }
}
