// stacklens-cli info and convert: JSON contents, values through convert, exit 3 and no output
// file on errors.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <vector>

#include "../app/cli_runner.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kFixtures;
using test::kHorseHead;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CliInfo, HorseHeadJsonHasShapeTypeHdusAndWcs) {
  if (!std::filesystem::exists(kHorseHead)) GTEST_SKIP();
  CliResult r = runCliSeparately("info " + kHorseHead);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "\"format\": \"fits\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"shape\": [1, 893, 891]")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"dtype\": \"int16\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"hdu\": 0")) << r.out;
  EXPECT_TRUE(contains(r.out, "{\"index\": 1, \"name\": \"er.mask\", \"type\": \"ascii table\""))
      << r.out;
  EXPECT_TRUE(contains(r.out, "\"spacing\": null")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"blank\": null")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"wcs\": [\"RA---TAN\", \"DEC--TAN\"]")) << r.out;
}

TEST(CliInfo, SpacingUnitsScalingAndChosenHdu) {
  CliResult r = runCliSeparately("info " + kFixtures + "imagej_hyperstack.tif");
  ASSERT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "\"spacing\": [0.25, 0.125, 0.125]")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"units\": [\"micron\", \"micron\", \"micron\"]")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"planes\": 2")) << r.out;
  r = runCliSeparately("info " + kFixtures + "bitpix_uint16.fits");
  EXPECT_TRUE(contains(r.out, "\"dtype\": \"uint16\"")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"bzero\": 32768")) << r.out;
  r = runCliSeparately("info " + kFixtures + "blank_int16.fits");
  EXPECT_TRUE(contains(r.out, "\"blank\": -999")) << r.out;
  r = runCliSeparately("info " + kFixtures + "multi_ext.fits --hdu 3");
  ASSERT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "\"hdu\": 3")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"shape\": [3, 5, 7], \"dtype\": \"int32\"")) << r.out;
  EXPECT_TRUE(
      contains(r.out, "{\"index\": 2, \"name\": \"SCI\", \"type\": \"image\", \"shape\": [5, 7]}"))
      << r.out;
  r = runCliSeparately("info " + kFixtures + "cube_vopt.fits");
  EXPECT_TRUE(contains(r.out, "\"wcs\": [\"RA---TAN\", \"DEC--TAN\", \"VOPT\"]")) << r.out;
}

TEST(CliInfo, NamesNeedingEscapesAreValidJson) {
  test::TempDir dir;
  const std::string path = dir.file("quote\"back\\slash.tif");
  std::filesystem::copy_file(kFixtures + "tiff_uint8.tif", path);
  CliResult r = runCliSeparately("info '" + path + "'");
  ASSERT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "quote\\\"back\\\\slash.tif")) << r.out;
}

TEST(CliInfo, ErrorsExitThree) {
  EXPECT_EQ(runCliSeparately("info " + kFixtures + "multi_ext.fits --hdu 1").code, 3);
  EXPECT_EQ(runCliSeparately("info " + kFixtures + "multi_ext.fits --hdu 9").code, 3);
  EXPECT_EQ(runCliSeparately("info " + std::string(STACKLENS_TEST_DATA) + "/fixtures.txt").code, 3);
  EXPECT_EQ(runCliSeparately("info " + std::string(STACKLENS_TEST_DATA)).code, 3);
}

TEST(CliConvert, FitsToTiffToFitsKeepsScaledValuesAndNan) {
  test::TempDir dir;
  for (const char* name : {"scaled_int16.fits", "nan_float32.fits", "rice.fits.fz"}) {
    SCOPED_TRACE(name);
    const auto expected = test::readAll(*openStack(kFixtures + name));
    ASSERT_EQ(runCliSeparately("convert " + kFixtures + name + " " + dir.file("a.tif")).code, 0);
    ASSERT_EQ(runCliSeparately("convert " + dir.file("a.tif") + " " + dir.file("b.fits")).code, 0);
    ASSERT_EQ(runCliSeparately("convert " + dir.file("b.fits") + " " + dir.file("c.fits")).code, 0);
    for (const char* out : {"a.tif", "b.fits", "c.fits"}) {
      auto reader = openStack(dir.file(out));
      EXPECT_EQ(reader->info().dtype, DType::Float32) << out;
      EXPECT_TRUE(test::sameValues(expected, test::readAll(*reader))) << out;
    }
  }
}

// A stack larger than a slab streams through in slabs (--ram-budget-mb 1: 4 slices of 64 KiB at
// a time) to FITS, TIFF and Zarr with every value in place; --timings reports the rates.
TEST(CliConvert, StreamsSlabBySlab) {
  test::TempDir dir;
  const int64_t z = 21, y = 128, x = 128;
  std::vector<float> v(size_t(z * y * x));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(int64_t(i) % 7919) - 100.5f;
  v[5 * y * x + 17] = std::numeric_limits<float>::quiet_NaN();
  WriteOptions options;
  writeStack(dir.file("in.fits"), v.data(), z, y, x, options);
  for (const char* name : {"out.fits", "out.tif", "out.zarr"}) {
    CliResult r = runCliSeparately("convert " + dir.file("in.fits") + " " + dir.file(name) +
                                   " --ram-budget-mb 1 --timings");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("\"slab_slices\": 4"), std::string::npos) << r.err;
    // The write rate is of the bytes on disk, a Zarr folder's files summed: far below a terabyte
    // per second (file_size's error value on a folder once gave 1.5e8 GB/s). It prints with three
    // decimals, so a small compressed output on a slow machine may read 0.000.
    const size_t at = r.err.find("\"write_GBps\": ");
    ASSERT_NE(at, std::string::npos) << r.err;
    const double rate = std::stod(r.err.substr(at + 14));
    EXPECT_GE(rate, 0.0) << r.err;
    EXPECT_LT(rate, 1000.0) << r.err;
    auto reader = openStack(dir.file(name));
    ASSERT_EQ(reader->info().z, z);
    std::vector<float> slice(size_t(y * x));
    for (int64_t k = 0; k < z; ++k) {
      reader->readSlice(k, slice.data());
      for (int64_t i = 0; i < y * x; ++i) {
        const float want = v[size_t(k * y * x + i)];
        if (std::isnan(want))
          ASSERT_TRUE(std::isnan(slice[size_t(i)])) << name << " " << k << " " << i;
        else
          ASSERT_EQ(slice[size_t(i)], want) << name << " " << k << " " << i;
      }
    }
  }
}

TEST(CliConvert, CarriesSpacingAndWcs) {
  test::TempDir dir;
  ASSERT_EQ(
      runCliSeparately("convert " + kFixtures + "imagej_hyperstack.tif " + dir.file("s.fits")).code,
      0);
  auto spaced = openStack(dir.file("s.fits"));
  ASSERT_TRUE(spaced->info().spacingKnown);
  EXPECT_DOUBLE_EQ(spaced->info().spacing[0], 0.25);
  EXPECT_DOUBLE_EQ(spaced->info().spacing[2], 0.125);
  ASSERT_EQ(runCliSeparately("convert " + kFixtures + "cube_vopt.fits " + dir.file("w.fits")).code,
            0);
  auto cube = openStack(dir.file("w.fits"));
  ASSERT_NE(cube->wcs(), nullptr);
  EXPECT_EQ(cube->info().hdus[0].axes, (std::vector<int64_t>{5, 6, 4}));
}

TEST(CliConvert, ErrorsExitThreeAndLeaveNoOutput) {
  test::TempDir dir;
  EXPECT_EQ(runCliSeparately("convert " + dir.file("missing.fits") + " " + dir.file("o.tif")).code,
            3);
  test::writeBytes(dir.file("junk.fits"), std::string(3000, 'j'));
  EXPECT_EQ(runCliSeparately("convert " + dir.file("junk.fits") + " " + dir.file("o.tif")).code, 3);
  EXPECT_EQ(runCliSeparately("convert " + kFixtures + "tiff_uint8.tif " + dir.file("o.png")).code,
            3);
  EXPECT_EQ(
      runCliSeparately("convert " + kFixtures + "tiff_uint8.tif " + dir.file("nofolder/o.tif"))
          .code,
      3);
  std::filesystem::copy_file(kFixtures + "tiff_uint8.tif", dir.file("self.tif"));
  const std::string before = test::readBytes(dir.file("self.tif"));
  EXPECT_EQ(runCliSeparately("convert " + dir.file("self.tif") + " " + dir.file("self.tif")).code,
            3);
  EXPECT_EQ(test::readBytes(dir.file("self.tif")), before);
  auto entries = dir.entries();
  EXPECT_EQ(entries.size(), 2u);  // junk.fits and self.tif only
  EXPECT_EQ(runCliSeparately("convert " + kFixtures + "tiff_uint8.tif").code, 2);
}

}  // namespace
}  // namespace stacklens::io
