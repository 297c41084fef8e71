// Display levels of planes too large to hold whole: strided reads equal the slice sampled by
// hand (every BITPIX, BZERO/BSCALE, BLANK, NaN, gzipped and tile-compressed FITS; stripped and
// tiled TIFF, read in bands of rows), strided levels halve until the coarsest is small, the
// level for a zoom, and the stored levels of OME-Zarr and TIFF pyramids.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/display_levels.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "io/strided_read.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

// The samples (y0 + i·step, x0 + j·step) of slice z, from the whole slice.
std::vector<float> sampledByHand(const StackReader& r, int64_t z, int64_t y0, int64_t y1,
                                 int64_t x0, int64_t x1, int64_t step) {
  const StackInfo& info = r.info();
  std::vector<float> slice(size_t(info.y * info.x));
  r.readSlice(z, slice.data());
  std::vector<float> out;
  for (int64_t y = y0; y < y1; y += step)
    for (int64_t x = x0; x < x1; x += step) out.push_back(slice[size_t(y * info.x + x)]);
  return out;
}

void expectStridedMatchesByHand(const StackReader& r, int64_t z, int64_t y0, int64_t y1, int64_t x0,
                                int64_t x1, int64_t step) {
  std::vector<float> got(size_t(stridedCount(y0, y1, step) * stridedCount(x0, x1, step)));
  readStrided(r, z, y0, y1, x0, x1, step, got.data());
  EXPECT_TRUE(test::sameValues(sampledByHand(r, z, y0, y1, x0, x1, step), got))
      << r.info().path << " z " << z << " rows " << y0 << ".." << y1 << " columns " << x0 << ".."
      << x1 << " step " << step;
}

TEST(DisplayLevels, StridedReadsEqualTheSliceSampledByHand) {
  const std::string dir = std::string(STACKLENS_TEST_DATA) + "/fixtures/";
  for (const char* name : {"bitpix_float32.fits",  "bitpix_float64.fits",  "bitpix_int16.fits",
                           "bitpix_uint16.fits",   "bitpix_int8.fits",     "bitpix_uint32.fits",
                           "bitpix_int64.fits",    "bitpix_uint64.fits",   "scaled_int16.fits",
                           "blank_int16.fits",     "nan_float32.fits",     "blank_int16.fits.gz",
                           "scaled_int16.fits.gz", "rice.fits.fz",         "planes_4d.fits",
                           "degenerate_4d.fits",   "tiff_uint16.tif",      "tiled_uint16.tif",
                           "deflate_float32.tif",  "lzw_uint16.tif",       "packbits_uint16.tif",
                           "bigtiff_uint16.tif",   "imagej_hyperstack.tif"}) {
    auto r = openStack(dir + name);
    const StackInfo& i = r->info();
    for (int64_t step : {1, 2, 3, 4, 16}) {
      expectStridedMatchesByHand(*r, i.z - 1, 0, i.y, 0, i.x, step);
      if (i.y > 2 && i.x > 2) expectStridedMatchesByHand(*r, 0, 1, i.y - 1, 2, i.x, step);
    }
  }
  auto plane1 = openStack(dir + "planes_4d.fits", OpenOptions{-1, 1});
  expectStridedMatchesByHand(*plane1, 0, 0, plane1->info().y, 0, plane1->info().x, 2);
}

TEST(DisplayLevels, StridedLevelsHalveUntilTheCoarsestIsSmall) {
  test::TempDir dir;
  const int64_t z = 2, y = 37, x = 50;
  std::vector<float> data(size_t(z * y * x));
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 977) * 0.5f - 3.f;
  data[size_t(y * x + 4 * x + 8)] = std::nanf("");
  writeStack(dir.file("p.fits"), data.data(), z, y, x, {});
  std::shared_ptr<const StackReader> r = openStack(dir.file("p.fits"));
  auto levels = DisplayLevels::of(r, 8);
  ASSERT_EQ(levels->levels().size(), 4u);  // steps 1, 2, 4, 8: 50 / 8 → 7 pixels
  for (int k = 0; k < 4; ++k) {
    const DisplayLevel& l = levels->levels()[size_t(k)];
    const int64_t step = int64_t(1) << k;
    EXPECT_EQ(l.step, step);
    EXPECT_EQ(l.width, stridedCount(0, x, step));
    EXPECT_EQ(l.height, stridedCount(0, y, step));
    EXPECT_DOUBLE_EQ(l.scaleX, double(step));
    // The whole level, and a box of it, are the slice sampled by hand.
    std::vector<float> whole(size_t(l.width * l.height));
    levels->read(k, 1, 0, l.height, 0, l.width, whole.data());
    EXPECT_TRUE(test::sameValues(sampledByHand(*r, 1, 0, y, 0, x, step), whole)) << k;
    if (l.width > 2 && l.height > 2) {
      std::vector<float> box(size_t((l.width - 2) * (l.height - 1)));
      levels->read(k, 1, 1, l.height, 2, l.width, box.data());
      EXPECT_TRUE(test::sameValues(sampledByHand(*r, 1, step, y, 2 * step, x, step), box)) << k;
    }
  }
  std::vector<float> out(4);
  EXPECT_THROW(levels->read(3, 0, 0, 1, 0, 8, out.data()), IoError);  // 7 pixels wide
}

TEST(DisplayLevels, TheLevelForAZoomHasPixelsNoLargerThanAScreenPixel) {
  test::TempDir dir;
  std::vector<float> data(size_t(300 * 500), 1.f);
  writeStack(dir.file("z.fits"), data.data(), 1, 300, 500, {});
  auto levels = DisplayLevels::of(openStack(dir.file("z.fits")), 64);  // steps 1 … 8
  ASSERT_EQ(levels->coarsest(), 3);
  EXPECT_EQ(levels->levelForZoom(4.0), 0);
  EXPECT_EQ(levels->levelForZoom(1.0), 0);
  EXPECT_EQ(levels->levelForZoom(0.9), 0);
  EXPECT_EQ(levels->levelForZoom(0.5), 1);
  EXPECT_EQ(levels->levelForZoom(0.3), 1);  // 3.3 screen pixels' worth: a step of 2
  EXPECT_EQ(levels->levelForZoom(0.25), 2);
  EXPECT_EQ(levels->levelForZoom(0.13), 2);
  EXPECT_EQ(levels->levelForZoom(0.125), 3);
  EXPECT_EQ(levels->levelForZoom(0.001), 3);
}

TEST(DisplayLevels, OmeZarrUsesItsOwnLevels) {
  test::TempDir dir;
  const int64_t z = 3, y = 40, x = 64;
  std::vector<float> data(size_t(z * y * x));
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 101);
  WriteOptions o;
  o.zarr.levels = 3;
  o.zarr.chunks = {1, 16, 16};
  const std::string path = dir.file("m.ome.zarr");
  writeStack(path, data.data(), z, y, x, o);
  std::shared_ptr<const StackReader> full = openStack(path);
  auto levels = DisplayLevels::of(full, 8);
  // Stored levels of 64, 32 and 16 pixels, then 8 strided from the last.
  ASSERT_EQ(levels->levels().size(), 4u);
  for (int k = 0; k < 3; ++k) {
    const DisplayLevel& l = levels->levels()[size_t(k)];
    EXPECT_EQ(l.source, k);
    EXPECT_EQ(l.step, 1);
    EXPECT_EQ(l.width, x >> k);
    EXPECT_DOUBLE_EQ(l.scaleX, double(1 << k));
    // Each level reads what the level's own array holds.
    OpenOptions options;
    options.hdu = k;
    auto stored = openStack(path, options);
    std::vector<float> want(size_t(stored->info().x * stored->info().y)), got(want.size());
    stored->readSlice(2, want.data());
    levels->read(k, 2, 0, l.height, 0, l.width, got.data());
    EXPECT_TRUE(test::sameValues(want, got)) << k;
  }
  EXPECT_EQ(levels->levels()[3].source, 2);
  EXPECT_EQ(levels->levels()[3].step, 2);
  EXPECT_DOUBLE_EQ(levels->levels()[3].scaleX, 8.0);
  EXPECT_EQ(levels->levelForZoom(0.5), 1);
  EXPECT_EQ(levels->levelForZoom(0.26), 1);
  EXPECT_EQ(levels->levelForZoom(0.25), 2);
  EXPECT_EQ(levels->levelForZoom(0.05), 3);
  // Opened at level 1, level 1 is the finest.
  OpenOptions atOne;
  atOne.hdu = 1;
  auto fromOne = DisplayLevels::of(openStack(path, atOne), 8);
  ASSERT_EQ(fromOne->levels().size(), 3u);
  EXPECT_EQ(fromOne->levels()[1].width, x / 4);
  EXPECT_DOUBLE_EQ(fromOne->levels()[1].scaleX, 2.0);
}

// tifffile's OME-TIFF pyramid (tests/io/data/make_fixtures.py): 96 × 80 slices with every 2nd
// and every 4th pixel in each page's SubIFDs.
TEST(DisplayLevels, TiffSubIfdPyramidsUseTheirOwnLevels) {
  const std::string path = kFixtures + "pyramid.ome.tif";
  std::shared_ptr<const StackReader> full = openStack(path);
  ASSERT_EQ(full->info().hdus.size(), 3u);
  auto levels = DisplayLevels::of(full, 10);
  // Stored levels of 80, 40 and 20 pixels, then 10 and 5 strided from the last.
  ASSERT_EQ(levels->levels().size(), 5u);
  std::vector<float> fullSlice(size_t(96 * 80));
  full->readSlice(1, fullSlice.data());
  for (int k = 0; k < 5; ++k) {
    const DisplayLevel& l = levels->levels()[size_t(k)];
    const int64_t step = int64_t(1) << k;
    EXPECT_EQ(l.source, std::min(k, 2));
    EXPECT_EQ(l.width, stridedCount(0, 80, step));
    EXPECT_DOUBLE_EQ(l.scaleX, double(step));
    // The fixture's levels are every step-th pixel of level 0, so each display level is too.
    std::vector<float> want, got(size_t(l.width * l.height));
    for (int64_t y = 0; y < 96; y += step)
      for (int64_t x = 0; x < 80; x += step) want.push_back(fullSlice[size_t(y * 80 + x)]);
    levels->read(k, 1, 0, l.height, 0, l.width, got.data());
    EXPECT_TRUE(test::sameValues(want, got)) << k;
  }
  OpenOptions beyond;
  beyond.hdu = 3;
  try {
    openStack(path, beyond);
    FAIL() << "opened a fourth level";
  } catch (const IoError& e) {
    EXPECT_TRUE(test::contains(e.what(), "outside 0..2")) << e.what();
  }
}

}  // namespace
}  // namespace stacklens::io
