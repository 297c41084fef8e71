// The readers on the project's real sample files, checked against astropy and tifffile
// (values in data/real_files.txt, written by data/make_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/stack.h"
#include "io/wcs.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kHorseHead;
const std::string kPsf = std::string(STACKLENS_SHARED_DATA) + "/psf_rfi_8bit_imagej.tif";

TEST(RealFiles, HorseHeadShapeTypeAndPixelsMatchAstropy) {
  if (!std::filesystem::exists(kHorseHead)) GTEST_SKIP() << kHorseHead << " not present";
  auto reader = openStack(kHorseHead);
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.format, "fits");
  EXPECT_EQ(info.z, 1);
  EXPECT_EQ(info.y, 893);
  EXPECT_EQ(info.x, 891);
  EXPECT_EQ(info.dtype, DType::Int16);
  EXPECT_FALSE(info.spacingKnown);
  std::vector<float> slice(static_cast<size_t>(info.y * info.x));
  reader->readSlice(0, slice.data());
  std::ifstream in(std::string(STACKLENS_TEST_DATA) + "/real_files.txt");
  std::string kind;
  int pixels = 0, worlds = 0;
  const Wcs* wcs = reader->wcs();
  ASSERT_NE(wcs, nullptr);
  EXPECT_TRUE(wcs->hasCelestial());
  EXPECT_FALSE(wcs->hasSpectral());
  while (in >> kind) {
    if (kind == "pixel") {
      int64_t x, y;
      double value;
      in >> x >> y >> value;
      EXPECT_EQ(slice[static_cast<size_t>(y * info.x + x)], value) << x << "," << y;
      ++pixels;
    } else {
      double x, y, ra, dec;
      in >> x >> y >> ra >> dec;
      auto world = wcs->pixelToWorld(x, y, 0);
      ASSERT_GE(world.size(), 2u);
      // < 0.01 arcsec on the sky.
      EXPECT_NEAR((world[0] - ra) * std::cos(dec * M_PI / 180) * 3600, 0.0, 0.01) << x << "," << y;
      EXPECT_NEAR((world[1] - dec) * 3600, 0.0, 0.01) << x << "," << y;
      ++worlds;
    }
  }
  EXPECT_EQ(pixels, 4);
  EXPECT_EQ(worlds, 4);
  // astropy: pixel (445, 446) → RA 85.274994017°, Dec −2.458296441°.
  EXPECT_EQ(wcs->formatCelestial(445, 446, 0),
            "RA 05:41:06.00 Dec \xe2\x88\x92"
            "02:27:29.9 (85.27499\xc2\xb0, \xe2\x88\x92"
            "2.45830\xc2\xb0)");
  EXPECT_EQ(wcs->formatSpectral(0), "");
}

TEST(RealFiles, PsfImagejStackHasItsCalibration) {
  if (!std::filesystem::exists(kPsf)) GTEST_SKIP() << kPsf << " not present";
  auto reader = openStack(kPsf);
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.format, "tiff");
  EXPECT_EQ(info.z, 61);
  EXPECT_EQ(info.y, 32);
  EXPECT_EQ(info.x, 32);
  EXPECT_EQ(info.dtype, DType::UInt8);
  // tifffile: ImageJ unit=nm, spacing=300.0, XResolution 3333/1000000 per nm, unit none.
  ASSERT_TRUE(info.spacingKnown);
  EXPECT_DOUBLE_EQ(info.spacing[0], 300.0);
  EXPECT_NEAR(info.spacing[2], 1e6 / 3333.0, 1e-3);
  EXPECT_NEAR(info.spacing[1], 1e6 / 3333.0, 1e-3);
  EXPECT_EQ(info.units[0], "nm");
  std::vector<float> all = test::readAll(*reader);
  // tifffile: max 249, sum 1094998, [30,16,16] = 226, [0,0,0] = 5, [60,31,31] = 12.
  double sum = 0;
  float peak = 0;
  for (float v : all) sum += v, peak = std::max(peak, v);
  EXPECT_EQ(peak, 249.0f);
  EXPECT_EQ(sum, 1094998.0);
  EXPECT_EQ(all[(30 * 32 + 16) * 32 + 16], 226.0f);
  EXPECT_EQ(all[0], 5.0f);
  EXPECT_EQ(all[(60 * 32 + 31) * 32 + 31], 12.0f);
}

}  // namespace
}  // namespace stacklens::io
