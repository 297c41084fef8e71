// stacklens-cli regions: a DS9 file placed on an image with a TAN WCS, checked against the
// gnomonic projection in closed form (tan_sky.h): sky regions land on the pixels they were made
// from, image regions get the sky coordinates of their pixels, and the output reads back.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "io/ds9_regions.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "tan_sky.h"
#include "temp_folder_test.h"

namespace {

namespace io = stacklens::io;
using stacklens::testing::TanSky;

class CliRegions : public stacklens::testing::TempFolderTest {
 protected:
  CliRegions() : TempFolderTest("stacklens_cli_regions_") {}

  void SetUp() override {
    TempFolderTest::SetUp();
    std::vector<float> pixels(100 * 80, 1.f);
    io::WriteOptions o;
    o.header = tan_.cards();
    image_ = path("tan.fits");
    io::writeStack(image_, pixels.data(), 1, 80, 100, o);
  }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return path(name);
  }

  static std::string degrees(double v) {
    char t[40];
    std::snprintf(t, sizeof t, "%.12f", v);
    return t;
  }

  // The numbers after `key": [[` in the JSON object of the region read from `line`.
  static std::vector<double> numbersAfter(const std::string& json, int line,
                                          const std::string& key) {
    const size_t object = json.find("{\"line\": " + std::to_string(line) + ",");
    EXPECT_NE(object, std::string::npos) << json;
    const size_t at = json.find("\"" + key + "\": ", object);
    std::vector<double> out;
    if (object == std::string::npos || at == std::string::npos) return out;
    const char* p = json.c_str() + at + key.size() + 4;
    while (*p == '[' || *p == ' ') ++p;
    while (true) {
      char* end = nullptr;
      const double v = std::strtod(p, &end);
      if (end == p) break;
      out.push_back(v);
      p = end;
      while (*p == ',' || *p == ' ' || *p == '[' ||
             (*p == ']' && p[1] == ',' && p[2] == ' ' && p[3] == '['))
        ++p;
      if (*p == ']') break;
    }
    return out;
  }

  TanSky tan_;
  std::string image_;
};

// Regions in ICRS made from chosen pixels come back at those pixels; a radius of 7.2" is 2
// pixels of 3.6". Tolerances: wcslib and the closed form agree to ~1e-10 px; the TAN scale 20
// px from the reference differs from the centre's by (20 · 0.001°)² ≈ 1e-7, far below 1e-4 px.
TEST_F(CliRegions, SkyRegionsLandOnThePixelsTheyWereMadeFrom) {
  const auto c = tan_.sky(30.25, 45.5), p = tan_.sky(70.0, 20.0);
  const std::string reg = write(
      "sky.reg", "# Region file format: DS9 version 4.1\nicrs\ncircle(" + degrees(c[0]) + "," +
                     degrees(c[1]) + ",7.2\") # text={star}\npoint(" + degrees(p[0]) + "," +
                     degrees(p[1]) + ") # point=cross\nimage\nbox(11,21,4,6,30) # color=red\n");
  CliResult r = runCliSeparately("regions " + reg + " --image " + image_);
  ASSERT_EQ(r.code, 0) << r.err;
  const io::RegionFile back = io::parseDs9Regions(r.out);
  ASSERT_EQ(back.regions.size(), 3u) << r.out;
  const io::Region& circle = back.regions[0];
  EXPECT_EQ(circle.shape, io::RegionShape::Circle);
  EXPECT_EQ(circle.frame, io::SkyFrame::Image);
  EXPECT_NEAR(circle.points[0][0], 30.25, 1e-6) << r.out;  // parsed back to 0-based
  EXPECT_NEAR(circle.points[0][1], 45.5, 1e-6);
  EXPECT_NEAR(circle.sizes[0], 2.0, 1e-4);
  EXPECT_EQ(circle.text, "star");
  EXPECT_NEAR(back.regions[1].points[0][0], 70.0, 1e-6);
  EXPECT_NEAR(back.regions[1].points[0][1], 20.0, 1e-6);
  EXPECT_EQ(back.regions[2].shape, io::RegionShape::Box);
  EXPECT_NEAR(back.regions[2].points[0][0], 10.0, 1e-9);
  EXPECT_NEAR(back.regions[2].angle, 30.0, 1e-9);
  EXPECT_EQ(back.regions[2].color, "red");
}

// JSON: every region's pixels and its points on the sky; the image-frame box's centre (1-based
// 11, 21) is on the sky where the gnomonic projection puts 0-based (10, 20).
TEST_F(CliRegions, JsonGivesPixelsAndSkyCoordinates) {
  const auto c = tan_.sky(30.25, 45.5);
  const std::string reg =
      write("both.reg", "icrs\ncircle(" + degrees(c[0]) + "," + degrees(c[1]) +
                            ",7.2\")\nimage\nbox(11,21,4,6,30)\npolygon(5,5,15,5,10,12)\n");
  CliResult r = runCliSeparately("regions " + reg + " --image " + image_ + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"sky_frame\": \"icrs\""), std::string::npos) << r.out;
  std::vector<double> v = numbersAfter(r.out, 2, "pixels");
  ASSERT_EQ(v.size(), 2u) << r.out;
  EXPECT_NEAR(v[0], 30.25, 1e-6);
  EXPECT_NEAR(v[1], 45.5, 1e-6);
  v = numbersAfter(r.out, 2, "sky");
  ASSERT_EQ(v.size(), 2u) << r.out;
  EXPECT_NEAR(v[0], c[0], 1e-9);  // degrees: 1e-9° is 4 µas
  EXPECT_NEAR(v[1], c[1], 1e-9);
  v = numbersAfter(r.out, 4, "sky");
  const auto box = tan_.sky(10, 20);
  ASSERT_EQ(v.size(), 2u) << r.out;
  EXPECT_NEAR(v[0], box[0], 1e-9);
  EXPECT_NEAR(v[1], box[1], 1e-9);
  v = numbersAfter(r.out, 5, "sky");
  ASSERT_EQ(v.size(), 6u) << r.out;
  const auto corner = tan_.sky(9, 11);  // the polygon's third vertex, 0-based
  EXPECT_NEAR(v[4], corner[0], 1e-9);
  EXPECT_NEAR(v[5], corner[1], 1e-9);
  EXPECT_NE(r.out.find("\"shape\": \"polygon\""), std::string::npos);
}

// Sky regions on an image without a celestial WCS are left out with a warning naming the line;
// image regions are kept, with no sky coordinates.
TEST_F(CliRegions, SkyRegionsNeedACelestialWcs) {
  std::vector<float> pixels(20 * 10, 0.f);
  const std::string plain = path("plain.fits");
  io::writeStack(plain, pixels.data(), 1, 10, 20, {});
  const std::string reg = write("mixed.reg", "fk5\ncircle(150,20,3\")\nimage\npoint(3,4)\n");
  CliResult r = runCliSeparately("regions " + reg + " --image " + plain + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("line 2"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("\"shape\": \"circle\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"shape\": \"point\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"sky\": null"), std::string::npos) << r.out;
}

TEST_F(CliRegions, BadInputNamesTheFileAndTheReason) {
  const std::string reg = write("ok.reg", "image\npoint(3,4)\n");
  CliResult r = runCliSeparately("regions " + reg);  // no --image
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--image"), std::string::npos) << r.err;
  r = runCliSeparately("regions " + path("missing.reg") + " --image " + image_);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find(path("missing.reg")), std::string::npos) << r.err;
  r = runCliSeparately("regions " + reg + " --image " + path("missing.fits"));
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find(path("missing.fits")), std::string::npos) << r.err;
  r = runCliSeparately("regions " + reg + " --image " + image_ + " --format xml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
}

}  // namespace
