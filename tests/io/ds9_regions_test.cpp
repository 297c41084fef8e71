// DS9 region files: every shape of files in DS9's saved format (fk5 and image), the coordinate
// and unit forms, properties, and sky regions placed on real and synthetic (rotated, mirrored)
// WCS; pixel regions written back read the same.
#include "io/ds9_regions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/region_geometry.h"
#include "io/stack.h"
#include "sky_headers.h"
#include "test_support.h"

using namespace stacklens::io;

namespace {

using stacklens::io::test::kRegions;

double hms(double h, double m, double s) { return (h + m / 60 + s / 3600) * 15; }
double dms(double d, double m, double s) {
  return d < 0 || std::signbit(d) ? d - m / 60 - s / 3600 : d + m / 60 + s / 3600;
}

using stacklens::io::test::warned;

void expectPoint(const std::array<double, 2>& got, double x, double y, double tol = 1e-9) {
  EXPECT_NEAR(got[0], x, tol);
  EXPECT_NEAR(got[1], y, tol);
}

}  // namespace

TEST(Ds9Regions, ReadsEveryShapeOfADs9SavedFk5File) {
  const RegionFile f = readDs9Regions(kRegions + "ds9_fk5.reg");
  ASSERT_EQ(f.regions.size(), 22u);
  const auto& r = f.regions;
  for (const Region& g : r) EXPECT_EQ(g.frame, SkyFrame::Fk5);

  EXPECT_EQ(r[0].shape, RegionShape::Circle);
  expectPoint(r[0].points[0], hms(5, 40, 59.21), dms(-2, 27, 30.6));
  ASSERT_EQ(r[0].sizes.size(), 1u);
  EXPECT_NEAR(r[0].sizes[0], 20.0 / 3600, 1e-12);
  EXPECT_TRUE(r[0].sizesInDegrees);
  EXPECT_EQ(r[0].color, "green");
  EXPECT_EQ(r[0].line, 4);

  EXPECT_EQ(r[1].shape, RegionShape::Ellipse);
  EXPECT_NEAR(r[1].sizes[0], 30.0 / 3600, 1e-12);
  EXPECT_NEAR(r[1].sizes[1], 15.0 / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(r[1].angle, 45.0);
  EXPECT_EQ(r[1].color, "red");
  EXPECT_EQ(r[1].width, 2);

  EXPECT_EQ(r[2].shape, RegionShape::Box);
  expectPoint(r[2].points[0], hms(5, 41, 5), dms(-2, 29, 0));
  EXPECT_NEAR(r[2].sizes[0], 40.0 / 3600, 1e-12);
  EXPECT_NEAR(r[2].sizes[1], 20.0 / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(r[2].angle, 30.0);
  EXPECT_EQ(r[2].text, "Box 1");
  EXPECT_EQ(r[2].tag, "group 1");

  EXPECT_EQ(r[3].shape, RegionShape::Polygon);
  ASSERT_EQ(r[3].points.size(), 3u);
  expectPoint(r[3].points[1], hms(5, 40, 52), dms(-2, 25, 30));
  EXPECT_EQ(r[3].color, "cyan");
  EXPECT_TRUE(r[3].dash);

  EXPECT_EQ(r[4].shape, RegionShape::Point);
  EXPECT_EQ(r[4].pointType, "x");
  EXPECT_EQ(r[5].pointType, "circle");
  EXPECT_EQ(r[5].pointSize, 15);

  EXPECT_EQ(r[6].shape, RegionShape::Line);
  ASSERT_EQ(r[6].points.size(), 2u);
  expectPoint(r[6].points[1], hms(5, 40, 57), dms(-2, 26, 30));

  EXPECT_EQ(r[7].shape, RegionShape::Text);
  EXPECT_EQ(r[7].text, "Horsehead");
  EXPECT_EQ(r[7].font, "times 12 bold roman");
  EXPECT_EQ(r[7].line, 11);

  // vector(…, 60″, 45): a line 60″ long towards 45° from west through north (PA 315°).
  EXPECT_EQ(r[8].shape, RegionShape::Line);
  EXPECT_NEAR(
      skySeparation(r[8].points[0][0], r[8].points[0][1], r[8].points[1][0], r[8].points[1][1]) *
          3600,
      60.0, 1e-6);
  EXPECT_GT(r[8].points[1][1], r[8].points[0][1]);  // north…
  EXPECT_LT(r[8].points[1][0], r[8].points[0][0]);  // …and west
  EXPECT_TRUE(warned(f, 12, "vector"));

  EXPECT_EQ(r[9].shape, RegionShape::Annulus);  // one region, all three radii
  ASSERT_EQ(r[9].sizes.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r[9].sizes[i], 10.0 * (i + 1) / 3600, 1e-12);
  EXPECT_TRUE(r[9].sizesInDegrees);

  EXPECT_FALSE(r[10].source);
  EXPECT_FALSE(r[10].exclude);
  EXPECT_TRUE(r[11].exclude);
  EXPECT_TRUE(r[11].source);

  // The elliptical and box annuli keep both their boundaries.
  EXPECT_EQ(r[12].shape, RegionShape::EllipseAnnulus);
  EXPECT_EQ(r[12].sizes.size(), 4u);
  const std::vector<double> ellipseRadii{10, 5, 20, 10}, boxSizes{8, 4, 16, 8};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(r[12].sizes[i], ellipseRadii[i] / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(r[12].angle, 60.0);
  EXPECT_EQ(r[13].shape, RegionShape::BoxAnnulus);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(r[13].sizes[i], boxSizes[i] / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(r[13].angle, 10.0);

  // panda(…,0,360,4,0",30",3): four sectors of 90°, three rings of 10″.
  EXPECT_EQ(r[14].shape, RegionShape::Panda);
  EXPECT_EQ(r[14].angles, (std::vector<double>{0, 90, 180, 270, 360}));
  ASSERT_EQ(r[14].sizes.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(r[14].sizes[i], 10.0 * i / 3600, 1e-12);
  // epanda(…,0,360,4,0",0",30",15",3,0): both axes interpolated.
  EXPECT_EQ(r[15].shape, RegionShape::Epanda);
  ASSERT_EQ(r[15].sizes.size(), 8u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(r[15].sizes[2 * i], 10.0 * i / 3600, 1e-12);
    EXPECT_NEAR(r[15].sizes[2 * i + 1], 5.0 * i / 3600, 1e-12);
  }
  for (int line = 13; line <= 19; ++line) EXPECT_FALSE(warned(f, line, "")) << line;
  EXPECT_EQ(r[16].shape, RegionShape::Line);  // projection
  EXPECT_EQ(r[16].line, 20);
  // compass(…,15") compass=fk5 {N} {E}: 15″ lines towards north and east, labelled at their
  // ends.
  const auto& centre = r[17].points[0];
  expectPoint(centre, hms(5, 41, 0), dms(-2, 25, 0));
  for (int k : {17, 19}) {
    EXPECT_EQ(r[k].shape, RegionShape::Line);
    EXPECT_NEAR(skySeparation(centre[0], centre[1], r[k].points[1][0], r[k].points[1][1]) * 3600,
                15.0, 1e-6);
    EXPECT_EQ(r[k + 1].shape, RegionShape::Text);
    expectPoint(r[k + 1].points[0], r[k].points[1][0], r[k].points[1][1]);
  }
  EXPECT_NEAR(r[17].points[1][0], centre[0], 1e-9);  // north: same RA, higher Dec
  EXPECT_GT(r[17].points[1][1], centre[1]);
  EXPECT_GT(r[19].points[1][0], centre[0]);  // east: higher RA
  EXPECT_EQ(r[18].text, "N");
  EXPECT_EQ(r[20].text, "E");
  EXPECT_FALSE(warned(f, 21, ""));
  EXPECT_EQ(r[21].shape, RegionShape::Line);  // ruler
  EXPECT_EQ(r[21].line, 22);
  // No warning for the header, global or frame lines.
  for (int line = 1; line <= 11; ++line) {
    EXPECT_FALSE(warned(f, line, "")) << line;
  }
}

TEST(Ds9Regions, ReadsEveryShapeOfAnImageFile) {
  const RegionFile f = readDs9Regions(kRegions + "ds9_image.reg");
  const auto& r = f.regions;
  ASSERT_EQ(r.size(), 14u);
  for (const Region& g : r) {
    EXPECT_EQ(g.frame, SkyFrame::Image);
    EXPECT_FALSE(g.sizesInDegrees);
  }
  EXPECT_EQ(r[0].shape, RegionShape::Circle);
  expectPoint(r[0].points[0], 99, 119);  // 1-based in the file
  EXPECT_DOUBLE_EQ(r[0].sizes[0], 15);
  EXPECT_TRUE(r[0].fill);  // fill=1: drawn solid
  EXPECT_FALSE(r[1].fill);
  EXPECT_EQ(r[1].shape, RegionShape::Ellipse);
  expectPoint(r[1].points[0], 199.5, 149.5);
  EXPECT_EQ(r[1].sizes, (std::vector<double>{20, 10}));
  EXPECT_DOUBLE_EQ(r[1].angle, 30);
  EXPECT_EQ(r[2].shape, RegionShape::Box);
  EXPECT_EQ(r[2].sizes, (std::vector<double>{40, 20}));
  EXPECT_DOUBLE_EQ(r[2].angle, 45);
  EXPECT_EQ(r[2].color, "blue");
  EXPECT_EQ(r[2].width, 3);
  EXPECT_EQ(r[2].tag, "group 1");
  EXPECT_EQ(r[3].shape, RegionShape::Polygon);
  ASSERT_EQ(r[3].points.size(), 3u);
  expectPoint(r[3].points[2], 29, 39);
  EXPECT_EQ(r[3].text, "Triangle");
  EXPECT_EQ(r[4].shape, RegionShape::Point);
  EXPECT_EQ(r[4].pointType, "diamond");
  expectPoint(r[4].points[0], 59, 69);
  EXPECT_EQ(r[5].shape, RegionShape::Line);
  expectPoint(r[5].points[0], 9, 19);
  expectPoint(r[5].points[1], 109, 119);
  EXPECT_EQ(r[6].shape, RegionShape::Text);
  EXPECT_EQ(r[6].text, "Hello world");
  expectPoint(r[6].points[0], 399, 399);
  EXPECT_EQ(r[7].shape, RegionShape::Line);  // vector(50,50,20,90): straight up
  expectPoint(r[7].points[1], 49, 69, 1e-9);
  EXPECT_EQ(r[8].shape, RegionShape::Box);
  EXPECT_TRUE(r[8].exclude);
  EXPECT_EQ(r[8].color, "magenta");
  EXPECT_EQ(r[9].shape, RegionShape::Annulus);
  EXPECT_EQ(r[9].sizes, (std::vector<double>{5, 10, 15}));
  EXPECT_EQ(r[10].shape, RegionShape::EllipseAnnulus);
  EXPECT_EQ(r[10].sizes, (std::vector<double>{10, 5, 20, 10}));
  EXPECT_DOUBLE_EQ(r[10].angle, 30);
  EXPECT_TRUE(warned(f, 16, "composite"));
  EXPECT_EQ(r[11].color, "yellow");  // composite members
  EXPECT_EQ(r[12].shape, RegionShape::Box);
  EXPECT_EQ(r[13].shape, RegionShape::Panda);
  EXPECT_EQ(r[13].angles, (std::vector<double>{0, 90, 180, 270, 360}));
  EXPECT_EQ(r[13].sizes, (std::vector<double>{0, 10, 20, 30}));
}

TEST(Ds9Regions, InlineFramesUnitsAndSexagesimalForms) {
  const RegionFile f = parseDs9Regions(
      "fk5;circle(12h34m56.7s,-12d34m56.7s,1.5') # color=#ff8000\n"
      "galactic; box(0.5,-0.25,1d,30',15)\n"
      "icrs;circle(10.5,+20.25,0.01); circle 10.5 20.25 0.3r\n"
      "J2000;point 10 20 # point=cross 7\n"
      "B1950;circle(01:02:03,+04:05:06,2\")\n"
      "galactic;circle(10:30:00,-00:30:00,2\")\n"
      "physical;circle(5,6,7)\n"
      "image;x point(1,2);circle point(3,4)\n"
      "image;circle(10,10,3\")\n"
      "image;circle(10,10,5p) # text='quoted text' source\n"
      "text 30 40 {braced # text; with semicolons}\n"
      "-ellipse 1 2 3 4 # color=red\n"
      "circle(1,2) # too few\n"
      "hexagon(1,2,3)\n"
      "linear;circle(1,2,3)\n"
      "wcs;circle(150.0,30.0,2\")\n"
      "fk5;circle(150.0,30.0,4i)\n"
      "fk5;circle(150.0,95.0,4i)\n");
  const auto& r = f.regions;
  ASSERT_EQ(r.size(), 17u);
  EXPECT_EQ(r[0].frame, SkyFrame::Fk5);
  expectPoint(r[0].points[0], hms(12, 34, 56.7), -(12 + 34 / 60.0 + 56.7 / 3600));
  EXPECT_NEAR(r[0].sizes[0], 1.5 / 60, 1e-12);
  EXPECT_EQ(r[0].color, "#ff8000");
  EXPECT_EQ(r[1].frame, SkyFrame::Galactic);
  expectPoint(r[1].points[0], 0.5, -0.25);
  EXPECT_NEAR(r[1].sizes[0], 1.0, 1e-12);
  EXPECT_NEAR(r[1].sizes[1], 0.5, 1e-12);
  EXPECT_EQ(r[2].frame, SkyFrame::Icrs);
  EXPECT_NEAR(r[2].sizes[0], 0.01, 1e-12);  // unitless: degrees in a sky frame
  EXPECT_NEAR(r[3].sizes[0], 0.3 * 180 / M_PI, 1e-9);
  EXPECT_EQ(r[4].frame, SkyFrame::Fk5);
  EXPECT_EQ(r[4].pointType, "cross");
  EXPECT_EQ(r[4].pointSize, 7);
  EXPECT_EQ(r[5].frame, SkyFrame::Fk4);
  expectPoint(r[5].points[0], hms(1, 2, 3), 4 + 5 / 60.0 + 6 / 3600.0);
  // Sexagesimal galactic longitude is in degrees, and "-00:30:00" keeps its sign.
  expectPoint(r[6].points[0], 10.5, -0.5);
  EXPECT_EQ(r[7].frame, SkyFrame::Image);  // physical: pixels, placed through LTM/LTV
  EXPECT_TRUE(r[7].physical);
  EXPECT_FALSE(r[8].physical);  // image again
  expectPoint(r[7].points[0], 4, 5);
  EXPECT_FALSE(warned(f, 7, ""));
  EXPECT_EQ(r[8].pointType, "x");
  expectPoint(r[8].points[0], 0, 1);
  EXPECT_EQ(r[9].pointType, "circle");
  EXPECT_TRUE(r[10].sizesInDegrees);  // an image circle with an angular radius
  EXPECT_NEAR(r[10].sizes[0], 3.0 / 3600, 1e-12);
  EXPECT_FALSE(r[11].sizesInDegrees);
  EXPECT_EQ(r[11].text, "quoted text");
  EXPECT_TRUE(r[11].source);
  EXPECT_EQ(r[12].text, "braced # text; with semicolons");
  EXPECT_TRUE(r[13].exclude);
  EXPECT_EQ(r[13].shape, RegionShape::Ellipse);
  EXPECT_EQ(r[13].color, "red");
  EXPECT_TRUE(warned(f, 13, "arguments"));
  EXPECT_TRUE(warned(f, 14, "hexagon"));
  EXPECT_TRUE(r[14].linear);  // world values, not 1-based pixels
  expectPoint(r[14].points[0], 1, 2);
  EXPECT_TRUE(r[14].sizesInLinear);
  EXPECT_FALSE(warned(f, 15, ""));
  EXPECT_EQ(r[15].frame, SkyFrame::Native);
  EXPECT_FALSE(r[15].linear);
  EXPECT_EQ(r[16].frame, SkyFrame::Fk5);  // a sky circle with a radius in pixels
  EXPECT_FALSE(r[16].sizesInDegrees);
  EXPECT_DOUBLE_EQ(r[16].sizes[0], 4.0);
  EXPECT_TRUE(warned(f, 18, "latitude"));
}

// A compass of image axes points up (+y, north) and right (+x, east), as DS9's does; one of the
// sky given in pixels cannot be placed without the image and is left out; an alternate WCS is
// read through the primary one, with a warning.
TEST(Ds9Regions, CompassOfImageAxesAndAlternateWcs) {
  const RegionFile f = parseDs9Regions(
      "image\n"
      "# compass(100,200,30) compass=image {Up} {Right} 1 1\n"
      "wcsa\n"
      "fk5\n"
      "circle(10,20,1\")\n"
      "image\n"
      "# compass(100,200,30) compass=fk5 {N} {E} 1 1\n");
  const auto& r = f.regions;
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].shape, RegionShape::Line);
  expectPoint(r[0].points[0], 99, 199);
  expectPoint(r[0].points[1], 99, 229);
  EXPECT_EQ(r[1].text, "Up");
  expectPoint(r[2].points[1], 129, 199);
  EXPECT_EQ(r[3].text, "Right");
  EXPECT_EQ(r[4].frame, SkyFrame::Fk5);
  EXPECT_TRUE(warned(f, 3, "alternate"));
  EXPECT_TRUE(warned(f, 7, "WCS"));
  EXPECT_EQ(f.warnings.size(), 2u);
}

// Physical pixels of a cut-out binned 2 × 2 (LTM 0.5, LTV −50, −100), of one turned 90° and of
// one mirrored: positions, sizes, angles and sectors land on the image's pixels.
TEST(Ds9Regions, PhysicalCoordinatesGoThroughLtmLtv) {
  const std::vector<HeaderCard> header{{"LTM1_1", "0.5", ""}, {"LTM2_2", "5.0E-01", ""},
                                       {"LTV1", "-50", ""},   {"LTV2", "-100", ""},
                                       {"LTM1_2", "0", ""},   {"NAXIS1", "400", ""}};
  const PhysicalToImage binned = PhysicalToImage::fromHeader(header);
  EXPECT_EQ(binned.ltm, (std::array<double, 4>{0.5, 0, 0, 0.5}));
  EXPECT_EQ(binned.ltv, (std::array<double, 2>{-50, -100}));
  const RegionFile f = parseDs9Regions(
      "physical\n"
      "circle(300.5,500.5,20)\n"
      "ellipse(300.5,500.5,20,10,30)\n"
      "panda(300.5,500.5,0,90,1,0,40,2)\n"
      "circle(300.5,500.5,8i)\n"
      "image\n"
      "circle(10,10,8p); circle(10,10,8); annulus(10,10,8p,9i)\n");
  ASSERT_EQ(f.regions.size(), 6u);
  EXPECT_TRUE(warned(f, 7, "mix"));
  auto p = regionsInPixels(f.regions, nullptr, 0, nullptr, binned);
  ASSERT_EQ(p.size(), 6u);
  // Sizes in image pixels on a physical region, in physical pixels on an image one.
  EXPECT_DOUBLE_EQ(p[3].sizes[0], 8);
  expectPoint(p[4].points[0], 9, 9);
  EXPECT_DOUBLE_EQ(p[4].sizes[0], 4);
  EXPECT_DOUBLE_EQ(p[5].sizes[0], 8);
  expectPoint(p[0].points[0], 0.5 * 300.5 - 50 - 1, 0.5 * 500.5 - 100 - 1);
  EXPECT_DOUBLE_EQ(p[0].sizes[0], 10);
  EXPECT_EQ(p[1].sizes, (std::vector<double>{10, 5}));
  EXPECT_NEAR(p[1].angle, 30, 1e-12);
  EXPECT_EQ(p[2].sizes, (std::vector<double>{0, 10, 20}));
  // Without LTM/LTV, physical is image.
  expectPoint(regionsInPixels(f.regions, nullptr, 0, nullptr)[0].points[0], 299.5, 499.5);

  PhysicalToImage turned;  // x = y', y = −x' + 1000: a quarter turn clockwise
  turned.ltm = {0, 1, -1, 0};
  turned.ltv = {0, 1000};
  p = regionsInPixels(f.regions, nullptr, 0, nullptr, turned);
  expectPoint(p[0].points[0], 500.5 - 1, -300.5 + 1000 - 1);
  EXPECT_NEAR(std::remainder(p[1].angle - (30 - 90), 360), 0, 1e-9);
  ASSERT_EQ(p[2].angles.size(), 2u);
  EXPECT_NEAR(p[2].angles[1] - p[2].angles[0], 90, 1e-9);

  PhysicalToImage mirrored;  // x = −x' + 1000
  mirrored.ltm = {-1, 0, 0, 1};
  mirrored.ltv = {1000, 0};
  p = regionsInPixels(f.regions, nullptr, 0, nullptr, mirrored);
  // 10 physical pixels up and right of the centre, inside the panda's first quarter: up and
  // left on the image, and still in it.
  const double cx = -300.5 + 1000 - 1, cy = 500.5 - 1;
  expectPoint(p[2].points[0], cx, cy);
  EXPECT_EQ(regionPartAt(p[2], cx - 10, cy + 10), 0);
  EXPECT_EQ(regionPartAt(p[2], cx + 10, cy + 10), -1);

  PhysicalToImage singular;
  singular.ltm = {0, 0, 0, 0};
  std::vector<std::string> warnings;
  EXPECT_EQ(regionsInPixels(f.regions, nullptr, 0, &warnings, singular).size(), 1u);
  ASSERT_EQ(warnings.size(), 5u);
  EXPECT_NE(warnings[0].find("LTM"), std::string::npos);
}

// A text's textangle turns its baseline: in the image frame as given, on the sky from west
// towards north like a shape's angle (north 30° ccw from +y here: 20° on the sky is 50° on the
// image), and it is written back.
TEST(Ds9Regions, TextAngleIsReadPlacedAndWrittenBack) {
  test::TanHeader h;
  h.rho = 30;
  h.scale = 0.5 / 3600;
  auto wcs = h.wcs();
  char text[256];
  std::snprintf(text, sizeof text,
                "image\n# text(10,20) textangle=30 text={Hi}\n"
                "icrs\n# text(%.12f,%.12f) textangle=20 text={Sky}\ncircle(%.12f,%.12f,1\")"
                " # textangle=45\n",
                h.ra0, h.dec0, h.ra0, h.dec0);
  const RegionFile f = parseDs9Regions(text);
  ASSERT_EQ(f.regions.size(), 3u);
  EXPECT_DOUBLE_EQ(f.regions[0].angle, 30);
  EXPECT_DOUBLE_EQ(f.regions[1].angle, 20);
  EXPECT_DOUBLE_EQ(f.regions[2].angle, 0);  // only texts take it
  const auto p = regionsInPixels(f.regions, wcs.get(), 0, nullptr);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_DOUBLE_EQ(p[0].angle, 30);
  EXPECT_NEAR(p[1].angle, 50, 1e-6);
  const RegionFile back = parseDs9Regions(ds9RegionText({p[0]}));
  ASSERT_EQ(back.regions.size(), 1u);
  EXPECT_DOUBLE_EQ(back.regions[0].angle, 30);
  EXPECT_EQ(back.regions[0].text, "Hi");
}

// DS9's linear coordinates: the world of a WCS whose x and y axes are not celestial (here µm,
// 0.5 along x and 0.25 along y from 100, 200 at the first pixel). Positions and unitless sizes
// are in its units; `i` sizes stay pixels. A celestial image or none cannot place them.
TEST(Ds9Regions, LinearCoordinatesGoThroughTheLinearWcs) {
  std::string header;
  int count = 0;
  for (const char* card :
       {"NAXIS   =                    2", "CTYPE1  = 'LINEAR  '", "CTYPE2  = 'LINEAR  '",
        "CRPIX1  =                  1.0", "CRPIX2  =                  1.0",
        "CRVAL1  =                100.0", "CRVAL2  =                200.0",
        "CDELT1  =                  0.5", "CDELT2  =                 0.25", "CUNIT1  = 'um      '",
        "CUNIT2  = 'um      '"}) {
    std::string c = card;
    c.resize(80, ' ');
    header += c;
    ++count;
  }
  const auto wcs = Wcs::fromFitsHeader(header, count, {0, 0}, {0, 1, -1});
  ASSERT_TRUE(wcs);
  ASSERT_FALSE(wcs->hasCelestial());
  const RegionFile f = parseDs9Regions(
      "linear\n"
      "circle(110,205,2)\n"
      "ellipse(110,205,4,1,0)\n"
      "ellipse(110,205,4,1,90)\n"
      "circle(110,205,3i)\n"
      "image\n"
      "circle(1,1,1)\n");
  ASSERT_EQ(f.regions.size(), 5u);
  EXPECT_TRUE(f.warnings.empty());
  const auto p = regionsInPixels(f.regions, wcs.get(), 0, nullptr);
  ASSERT_EQ(p.size(), 5u);
  expectPoint(p[0].points[0], 20, 20, 1e-9);
  EXPECT_NEAR(p[0].sizes[0], 2 / std::sqrt(0.5 * 0.25), 1e-9);  // the mean scale
  EXPECT_NEAR(p[1].sizes[0], 8, 1e-9);                          // 4 µm along x: 8 pixels of 0.5
  EXPECT_NEAR(p[1].sizes[1], 4, 1e-9);                          // 1 µm along y: 4 pixels of 0.25
  EXPECT_NEAR(p[1].angle, 0, 1e-9);
  EXPECT_NEAR(p[2].sizes[0], 16, 1e-9);  // turned 90°: 4 µm along y
  EXPECT_NEAR(p[2].sizes[1], 2, 1e-9);
  EXPECT_NEAR(p[2].angle, 90, 1e-9);
  EXPECT_DOUBLE_EQ(p[3].sizes[0], 3);
  expectPoint(p[4].points[0], 0, 0);

  std::vector<std::string> warnings;
  EXPECT_EQ(regionsInPixels(f.regions, nullptr, 0, &warnings).size(), 1u);
  EXPECT_EQ(warnings.size(), 4u);
  test::TanHeader sky;
  const auto celestial = sky.wcs();
  warnings.clear();
  EXPECT_EQ(regionsInPixels(f.regions, celestial.get(), 0, &warnings).size(), 1u);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_NE(warnings[0].find("celestial"), std::string::npos);
}

TEST(Ds9Regions, BinaryAndMissingFilesAreErrors) {
  EXPECT_THROW(parseDs9Regions(std::string("circle(1,2,3)\0\x01\x02", 16)), IoError);
  try {
    readDs9Regions(kRegions + "no_such_file.reg");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(e.path().find("no_such_file.reg"), std::string::npos);
  }
}

// Sky regions on HorseHead's WCS land where wcslib's own pixel → sky says their centres are.
TEST(Ds9Regions, SkyRegionsOnARealWcsMatchWcslibRoundTrip) {
  auto reader = openStack(std::string(STACKLENS_SHARED_DATA) + "/HorseHead.fits");
  const Wcs* wcs = reader->wcs();
  ASSERT_TRUE(wcs && wcs->hasCelestial());
  const double px = 412.3, py = 507.8;
  double ra = 0, dec = 0;
  ASSERT_TRUE(wcs->celestial(px, py, 0, ra, dec));
  // The centre as DS9 would write it, in degrees with 9 decimals, and a 30″ circle.
  char text[256];
  std::snprintf(text, sizeof text, "fk5\ncircle(%.9f,%.9f,30\")\npoint(%.9f,%.9f)\ngalactic\n", ra,
                dec, ra, dec);
  std::string regions = text;
  double l = ra, b = dec;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Fk5, SkyFrame::Galactic, l, b));
  std::snprintf(text, sizeof text, "box(%.10f,%.10f,60\",30\",0)\n", l, b);
  regions += text;
  const RegionFile f = parseDs9Regions(regions);
  ASSERT_EQ(f.regions.size(), 3u);
  std::vector<std::string> warnings;
  const auto pixels = regionsInPixels(f.regions, wcs, 0, &warnings);
  ASSERT_EQ(pixels.size(), 3u);
  EXPECT_TRUE(warnings.empty());
  for (const PixelRegion& p : pixels) expectPoint(p.points[0], px, py, 1e-4);
  // The radius in pixels: 30″ over the pixel scale wcslib gives between neighbouring pixels.
  double ra1 = 0, dec1 = 0, ra2 = 0, dec2 = 0;
  ASSERT_TRUE(wcs->celestial(px + 1, py, 0, ra1, dec1));
  ASSERT_TRUE(wcs->celestial(px, py + 1, 0, ra2, dec2));
  const double scaleX = skySeparation(ra, dec, ra1, dec1) * 3600;
  const double scaleY = skySeparation(ra, dec, ra2, dec2) * 3600;
  EXPECT_NEAR(pixels[0].sizes[0], 30.0 / std::sqrt(scaleX * scaleY), 0.01);
  // The galactic box at angle 0 lies along galactic longitude: its angle in pixels is that of
  // the galactic west direction on the image.
  double lw = 0, bw = 0, xw = 0, yw = 0;
  offsetOnSky(l, b, 270, 0.01, lw, bw);
  ASSERT_TRUE(wcs->skyToPixel(SkyFrame::Galactic, lw, bw, 0, xw, yw));
  const double want = std::atan2(yw - py, xw - px) * 180 / M_PI;
  EXPECT_NEAR(std::remainder(pixels[2].angle - want, 360.0), 0.0, 0.05);
  EXPECT_GT(std::fabs(std::remainder(pixels[2].angle, 180.0)), 1.0);  // galactic ≠ equatorial

  // Without a celestial WCS sky regions are skipped with a warning naming their line.
  warnings.clear();
  EXPECT_TRUE(regionsInPixels(f.regions, nullptr, 0, &warnings).empty());
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0].rfind("line 2:", 0), 0u);
}

// A rotated TAN WCS: sizes and angles through the closed form. North is rho ccw from +y, so a
// sky angle a is a pixel angle a + rho; mirrored skies turn the other way.
TEST(Ds9Regions, SkyAnglesOnRotatedAndMirroredWcs) {
  for (bool eastRight : {false, true}) {
    test::TanHeader h;
    h.rho = 30;
    h.eastRight = eastRight;
    h.scale = 0.5 / 3600;
    auto wcs = h.wcs();
    char text[256];
    std::snprintf(text, sizeof text,
                  "icrs\nbox(%.12f,%.12f,36\",18\",20)\nellipse(%.12f,%.12f,10\",4\",-75)\n"
                  "circle(%.12f,%.12f,0.001)\n",
                  h.ra0, h.dec0, h.ra0, h.dec0, h.ra0 + 0.001, h.dec0);
    const auto pixels = regionsInPixels(parseDs9Regions(text).regions, wcs.get(), 0, nullptr);
    ASSERT_EQ(pixels.size(), 3u);
    expectPoint(pixels[0].points[0], h.crpix1 - 1, h.crpix2 - 1, 1e-6);
    EXPECT_NEAR(pixels[0].sizes[0], 72.0, 1e-4);
    EXPECT_NEAR(pixels[0].sizes[1], 36.0, 1e-4);
    const double boxAngle = eastRight ? -(20.0 + 30.0) : 20.0 + 30.0;
    const double ellipseAngle = eastRight ? -(-75.0 + 30.0) : -75.0 + 30.0;
    EXPECT_NEAR(std::remainder(pixels[0].angle - boxAngle, 180.0), 0.0, 1e-4) << eastRight;
    EXPECT_NEAR(std::remainder(pixels[1].angle - ellipseAngle, 180.0), 0.0, 1e-4) << eastRight;
    EXPECT_NEAR(pixels[1].sizes[0], 20.0, 1e-4);
    EXPECT_NEAR(pixels[1].sizes[1], 8.0, 1e-4);
    const auto c = h.pixelOf(h.ra0 + 0.001, h.dec0);
    expectPoint(pixels[2].points[0], c[0], c[1], 1e-6);
    EXPECT_NEAR(pixels[2].sizes[0], 7.2, 1e-3);
  }
}

TEST(Ds9Regions, PixelRegionsRoundTripThroughDs9Text) {
  const RegionFile f = readDs9Regions(kRegions + "ds9_image.reg");
  const auto pixels = regionsInPixels(f.regions, nullptr, 0, nullptr);
  ASSERT_EQ(pixels.size(), f.regions.size());
  const std::string text = ds9RegionText(pixels);
  EXPECT_EQ(text.rfind("# Region file format: DS9 version 4.1\nglobal color=green", 0), 0u);
  const RegionFile back = parseDs9Regions(text);
  EXPECT_TRUE(back.warnings.empty()) << back.warnings.front();
  ASSERT_EQ(back.regions.size(), pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) {
    const Region& b = back.regions[i];
    const PixelRegion& p = pixels[i];
    EXPECT_EQ(b.shape, p.shape) << i;
    EXPECT_EQ(b.frame, SkyFrame::Image);
    ASSERT_EQ(b.points.size(), p.points.size()) << i;
    for (size_t k = 0; k < p.points.size(); ++k)
      expectPoint(b.points[k], p.points[k][0], p.points[k][1], 1e-9);
    EXPECT_EQ(b.sizes, p.sizes) << i;
    EXPECT_DOUBLE_EQ(b.angle, p.angle) << i;
    EXPECT_EQ(b.angles, p.angles) << i;
    EXPECT_EQ(b.text, p.text) << i;
    EXPECT_EQ(b.color, p.color) << i;
    EXPECT_EQ(b.tag, p.tag) << i;
    EXPECT_EQ(b.width, p.width) << i;
    EXPECT_EQ(b.font, p.font) << i;
    EXPECT_EQ(b.exclude, p.exclude) << i;
    EXPECT_EQ(b.fill, p.fill) << i;
    EXPECT_EQ(b.pointType, p.pointType) << i;
  }
}
