// The readers against files written by astropy/tifffile/Pillow (tests/io/data/make_fixtures.py)
// and the values that script stored next to them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "io/stack.h"
#include "io/wcs.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kFixtures;
using test::kTestData;

struct Fixture {
  std::string name, dtype, unit;
  int plane = 0, hdu = 0, known = 0;
  int64_t z = 0, y = 0, x = 0;
  double sz = 1, sy = 1, sx = 1;
};

std::vector<Fixture> fixtures() {
  std::ifstream in(kTestData + "/fixtures.txt");
  std::vector<Fixture> out;
  Fixture f;
  while (in >> f.name >> f.plane >> f.z >> f.y >> f.x >> f.dtype >> f.hdu >> f.known >> f.sz >>
         f.sy >> f.sx >> f.unit)
    out.push_back(f);
  return out;
}

std::vector<float> expectedValues(const Fixture& f) {
  std::string bytes = test::readBytes(kFixtures + f.name + ".h" + std::to_string(f.hdu) + ".p" +
                                      std::to_string(f.plane) + ".f32");
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

TEST(Fixtures, EveryFileMatchesTheIndependentWritersValues) {
  const auto all = fixtures();
  ASSERT_GE(all.size(), 40u) << "fixtures.txt is missing or short";
  for (const Fixture& f : all) {
    SCOPED_TRACE(f.name + " hdu " + std::to_string(f.hdu) + " plane " + std::to_string(f.plane));
    OpenOptions options;
    options.plane = f.plane;
    if (f.hdu > 0) options.hdu = f.hdu;
    auto reader = openStack(kFixtures + f.name, options);
    const StackInfo& info = reader->info();
    EXPECT_EQ(info.z, f.z);
    EXPECT_EQ(info.y, f.y);
    EXPECT_EQ(info.x, f.x);
    EXPECT_EQ(std::string(dtypeName(info.dtype)), f.dtype);
    EXPECT_EQ(info.plane, f.plane);
    EXPECT_EQ(info.spacingKnown, f.known == 1);
    if (f.known) {
      EXPECT_NEAR(info.spacing[0], f.sz, 1e-6);
      EXPECT_NEAR(info.spacing[1], f.sy, 1e-6);
      EXPECT_NEAR(info.spacing[2], f.sx, 1e-6);
      EXPECT_EQ(info.units[2], f.unit);
    }
    const std::vector<float> expected = expectedValues(f);
    ASSERT_EQ(expected.size(), static_cast<size_t>(f.z * f.y * f.x));
    EXPECT_TRUE(test::sameValues(expected, test::readAll(*reader)));
  }
}

TEST(Fixtures, FitsFormatAndTiffFormatAreRecognisedByContentNotExtension) {
  test::TempDir dir;
  std::filesystem::copy_file(kFixtures + "bitpix_int16.fits", dir.file("looks_like.tif"));
  std::filesystem::copy_file(kFixtures + "tiff_int16.tif", dir.file("looks_like.fits"));
  EXPECT_EQ(openStack(dir.file("looks_like.tif"))->info().format, "fits");
  EXPECT_EQ(openStack(dir.file("looks_like.fits"))->info().format, "tiff");
}

TEST(Fixtures, UnsignedAndScaledFitsReportStoredTypeAndScaling) {
  auto u16 = openStack(kFixtures + "bitpix_uint16.fits");
  EXPECT_EQ(u16->info().bzero, 32768.0);
  EXPECT_EQ(u16->info().bscale, 1.0);
  auto u32 = openStack(kFixtures + "bitpix_uint32.fits");
  EXPECT_EQ(u32->info().bzero, 2147483648.0);
  auto scaled = openStack(kFixtures + "scaled_int16.fits");
  EXPECT_EQ(scaled->info().bscale, 0.5);
  EXPECT_EQ(scaled->info().bzero, 10.0);
  auto blank = openStack(kFixtures + "blank_int16.fits");
  ASSERT_TRUE(blank->info().blank.has_value());
  EXPECT_EQ(*blank->info().blank, -999);
  EXPECT_FALSE(u16->info().blank.has_value());
}

TEST(Fixtures, MultiExtensionFileListsHdusAndDefaultsToTheFirstImage) {
  auto reader = openStack(kFixtures + "multi_ext.fits");
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.hdu, 2);
  ASSERT_EQ(info.hdus.size(), 4u);
  EXPECT_EQ(info.hdus[0].name, "PRIMARY");
  EXPECT_TRUE(info.hdus[0].axes.empty());
  EXPECT_EQ(info.hdus[1].type, "binary table");
  EXPECT_EQ(info.hdus[1].name, "TAB");
  EXPECT_EQ(info.hdus[2].name, "SCI");
  EXPECT_EQ(info.hdus[3].type, "image");
  EXPECT_EQ(info.hdus[3].axes, (std::vector<int64_t>{7, 5, 3}));
  EXPECT_THROW(openStack(kFixtures + "multi_ext.fits", {1, 0}), IoError);  // a table
  EXPECT_THROW(openStack(kFixtures + "multi_ext.fits", {0, 0}), IoError);  // NAXIS = 0
  EXPECT_THROW(openStack(kFixtures + "multi_ext.fits", {4, 0}), IoError);  // no such HDU
  try {
    openStack(kFixtures + "multi_ext.fits", {1, 0});
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("binary table"), std::string::npos) << e.what();
  }
}

TEST(Fixtures, CompressedFitsIsListedAsCompressedImageWithTheImageHeader) {
  auto reader = openStack(kFixtures + "rice.fits.fz");
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.hdu, 1);
  EXPECT_EQ(info.hdus[1].type, "compressed image");
  EXPECT_EQ(info.hdus[1].axes, (std::vector<int64_t>{24, 20, 3}));
  // The header shown is the image's (BITPIX 16), not the binary table's.
  const HeaderCard* bitpix = test::findCard(info, "BITPIX");
  ASSERT_NE(bitpix, nullptr);
  EXPECT_EQ(bitpix->value, "16");
  EXPECT_EQ(test::findCard(info, "ZCMPTYPE"), nullptr);
}

TEST(Fixtures, PlaneOutsideTheFourthAxisIsAnError) {
  EXPECT_EQ(openStack(kFixtures + "planes_4d.fits")->info().planes, 2);
  EXPECT_THROW(openStack(kFixtures + "planes_4d.fits", {-1, 2}), IoError);
  EXPECT_THROW(openStack(kFixtures + "imagej_hyperstack.tif", {-1, 2}), IoError);
  EXPECT_EQ(openStack(kFixtures + "imagej_hyperstack.tif")->info().planes, 2);
}

TEST(Fixtures, PagesOfDifferentSizeOpenTheFirstSeriesWithAWarning) {
  auto reader = openStack(kFixtures + "mixed_sizes.tif");
  const HeaderCard* warning = test::findCard(reader->info(), "warning");
  ASSERT_NE(warning, nullptr);
  EXPECT_NE(warning->value.find("only the first 3 pages"), std::string::npos) << warning->value;
}

// Compares wcs with the astropy world coordinates stored in wcs.txt for name; returns the count.
int checkWcsAgainstAstropy(const std::string& name, const Wcs& wcs) {
  std::ifstream in(kTestData + "/wcs.txt");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string file;
    double x, y, z;
    fields >> file >> x >> y >> z;
    if (file != name) continue;
    std::vector<double> expected;
    for (double w; fields >> w;) expected.push_back(w);
    const auto world = wcs.pixelToWorld(x, y, z);
    EXPECT_EQ(world.size(), expected.size()) << line;
    for (size_t i = 0; i < expected.size() && i < world.size(); ++i)
      EXPECT_NEAR(world[i], expected[i], std::fabs(expected[i]) > 360 ? 1e-6 : 1e-9) << line;
    ++lines;
  }
  return lines;
}

TEST(Fixtures, SpectralCubeWcsMatchesAstropy) {
  auto reader = openStack(kFixtures + "cube_vopt.fits");
  const Wcs* wcs = reader->wcs();
  ASSERT_NE(wcs, nullptr);
  EXPECT_EQ(wcs->axisTypes(), (std::vector<std::string>{"RA---TAN", "DEC--TAN", "VOPT"}));
  EXPECT_TRUE(wcs->hasCelestial());
  EXPECT_TRUE(wcs->hasSpectral());
  EXPECT_EQ(checkWcsAgainstAstropy("cube_vopt.fits", *wcs), 4);
  EXPECT_EQ(wcs->formatSpectral(0), "VOPT 12.500 km/s");
  EXPECT_EQ(wcs->formatSpectral(3), "VOPT 20.000 km/s");
  // Pixel (2, 2.5) is the reference pixel: RA 85.25° = 5h41m00.00s, Dec −2.45° = −2°27′00.0″.
  EXPECT_EQ(wcs->formatCelestial(2, 2.5, 0),
            "RA 05:41:00.00 Dec \xe2\x88\x92"
            "02:27:00.0 (85.25000\xc2\xb0, \xe2\x88\x92"
            "2.45000\xc2\xb0)");
}

TEST(Fixtures, DroppedDegenerateAxisGetsItsPixelInTheWcs) {
  auto reader = openStack(kFixtures + "radio_4d.fits");
  EXPECT_EQ(reader->info().z, 3);
  const Wcs* wcs = reader->wcs();
  ASSERT_NE(wcs, nullptr);
  EXPECT_EQ(wcs->axisTypes(), (std::vector<std::string>{"RA---SIN", "DEC--SIN", "STOKES", "VRAD"}));
  EXPECT_EQ(checkWcsAgainstAstropy("radio_4d.fits", *wcs), 3);
  EXPECT_EQ(wcs->formatSpectral(0),
            "VRAD \xe2\x88\x92"
            "2.500 km/s");
  EXPECT_EQ(wcs->formatSpectral(2),
            "VRAD \xe2\x88\x92"
            "0.500 km/s");
  EXPECT_NE(wcs->formatCelestial(2, 1, 1).find("RA 13:25:27.60 Dec \xe2\x88\x92"
                                               "43:01:08.4"),
            std::string::npos)
      << wcs->formatCelestial(2, 1, 1);
}

TEST(Fixtures, LinearFitsAxesGiveSpacingAndNoCelestialWcs) {
  auto reader = openStack(kFixtures + "linear_spacing.fits");
  EXPECT_TRUE(reader->info().spacingKnown);
  EXPECT_EQ(reader->wcs(), nullptr);  // CDELT/CUNIT alone, no CTYPE
  auto cube = openStack(kFixtures + "cube_vopt.fits");
  EXPECT_FALSE(cube->info().spacingKnown);  // sky axes: spacing is the WCS's business
}

TEST(Fixtures, TiffHasNoWcsAndListsItselfAsOneImage) {
  auto reader = openStack(kFixtures + "tiff_uint16.tif");
  EXPECT_EQ(reader->wcs(), nullptr);
  ASSERT_EQ(reader->info().hdus.size(), 1u);
  EXPECT_EQ(reader->info().format, "tiff");
}

}  // namespace
}  // namespace stacklens::io
