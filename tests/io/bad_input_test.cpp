// Bad input never crashes, hangs or allocates absurdly: each case is an IoError naming the file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "handmade_tiff.h"
#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kFixtures;

// A FITS header of the given cards (padded to 2880-byte blocks), then dataBytes zero bytes.
std::string fitsFile(const std::vector<std::string>& cards, size_t dataBytes) {
  std::string h;
  for (const auto& c : cards) {
    std::string card = c;
    card.resize(80, ' ');
    h += card;
  }
  std::string end = "END";
  end.resize(80, ' ');
  h += end;
  h.resize((h.size() + 2879) / 2880 * 2880, ' ');
  return h + std::string(dataBytes, '\0');
}

std::string card(const std::string& key, const std::string& value) {
  std::string k = key;
  k.resize(8, ' ');
  std::string v = value;
  if (v.size() < 20) v = std::string(20 - v.size(), ' ') + v;
  return k + "= " + v;
}

std::vector<std::string> imageCards(const std::string& bitpix, std::vector<std::string> axes) {
  std::vector<std::string> c = {card("SIMPLE", "T"), card("BITPIX", bitpix),
                                card("NAXIS", std::to_string(axes.size()))};
  for (size_t i = 0; i < axes.size(); ++i)
    c.push_back(card("NAXIS" + std::to_string(i + 1), axes[i]));
  return c;
}

// Opening (and reading every slice of) path fails with an IoError naming path.
::testing::AssertionResult failsCleanly(const std::string& path, const std::string& reasonPart = "",
                                        OpenOptions options = {}) {
  try {
    auto reader = openStack(path, options);
    const StackInfo& info = reader->info();
    if (info.y * info.x > (int64_t{1} << 26))
      return ::testing::AssertionFailure()
             << "opened with an absurd slice of " << info.y << " x " << info.x;
    std::vector<float> slice(static_cast<size_t>(info.y * info.x));
    for (int64_t k = 0; k < info.z; ++k) reader->readSlice(k, slice.data());
  } catch (const IoError& e) {
    if (e.path() != path) return ::testing::AssertionFailure() << "error names " << e.path();
    if (e.reason().find(reasonPart) == std::string::npos)
      return ::testing::AssertionFailure() << "reason lacks '" << reasonPart << "': " << e.what();
    return ::testing::AssertionSuccess() << e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "not an IoError: " << e.what();
  }
  return ::testing::AssertionFailure() << "no error";
}

class BadInput : public ::testing::Test {
 protected:
  std::string make(const std::string& name, const std::string& bytes) {
    test::writeBytes(dir.file(name), bytes);
    return dir.file(name);
  }
  test::TempDir dir;
};

TEST_F(BadInput, MissingFileDirectoryAndEmptyFile) {
  EXPECT_TRUE(failsCleanly(dir.file("missing.fits"), "No such file"));
  EXPECT_TRUE(failsCleanly(dir.path().string(), "directory"));
  EXPECT_TRUE(failsCleanly(make("empty.fits", ""), "empty"));
  EXPECT_TRUE(failsCleanly("", "empty file name"));
}

TEST_F(BadInput, PermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can read any file";
  const std::string path = make("secret.fits", fitsFile(imageCards("8", {"2", "2"}), 4));
  std::filesystem::permissions(path, std::filesystem::perms::none);
  EXPECT_TRUE(failsCleanly(path, "Permission denied"));
}

TEST_F(BadInput, GarbageAndTooShortFiles) {
  EXPECT_TRUE(failsCleanly(make("garbage.fits", std::string(5000, '\x5a')), "not a FITS or TIFF"));
  EXPECT_TRUE(failsCleanly(make("short.tif", "II"), "too short"));
  EXPECT_TRUE(failsCleanly(make("fake.gz", std::string("\x1f\x8b", 2) + std::string(100, 'x'))));
  EXPECT_TRUE(
      failsCleanly(make("tiffmagic.tif", std::string("II*\0", 4) + std::string(20, '\xff'))));
  EXPECT_TRUE(failsCleanly(make("fitsmagic.fits", "SIMPLE  = T garbage")));
}

TEST_F(BadInput, FitsHeaderOnlyAndTruncatedData) {
  EXPECT_TRUE(failsCleanly(make("header_only.fits", fitsFile(imageCards("16", {"100", "100"}), 0)),
                           "truncated"));
  EXPECT_TRUE(failsCleanly(make("truncated.fits", fitsFile(imageCards("16", {"100", "100"}), 5000)),
                           "truncated"));
  // Header cut in the middle (no END card).
  std::string cut = fitsFile(imageCards("16", {"10", "10"}), 200).substr(0, 200);
  EXPECT_TRUE(failsCleanly(make("cut_header.fits", cut)));
}

TEST_F(BadInput, FitsUnsupportedBitpixAndBadAxes) {
  EXPECT_TRUE(failsCleanly(make("bitpix12.fits", fitsFile(imageCards("12", {"4", "4"}), 2880))));
  EXPECT_TRUE(failsCleanly(make("naxis0.fits", fitsFile(imageCards("16", {}), 0)),
                           "no HDU holds image data"));
  EXPECT_TRUE(failsCleanly(make("naxis0_explicit.fits", fitsFile(imageCards("16", {}), 0)),
                           "NAXIS = 0", {0, 0}));
  EXPECT_TRUE(failsCleanly(make("negative.fits", fitsFile(imageCards("16", {"-5", "4"}), 2880))));
  EXPECT_TRUE(failsCleanly(make("zero.fits", fitsFile(imageCards("16", {"0", "4"}), 0))));
  EXPECT_TRUE(failsCleanly(make("zero_explicit.fits", fitsFile(imageCards("16", {"0", "4"}), 0)),
                           "NAXIS1 = 0", {0, 0}));
  EXPECT_TRUE(failsCleanly(
      make("five_axes.fits", fitsFile(imageCards("8", {"2", "2", "2", "2", "2"}), 2880)),
      "axes longer than 1"));
}

TEST_F(BadInput, FitsDimensionsThatOverflowOrExceedTheFile) {
  EXPECT_TRUE(failsCleanly(
      make("overflow.fits",
           fitsFile(imageCards("-64", {"4294967296", "4294967296", "4294967296"}), 2880))));
  EXPECT_TRUE(failsCleanly(
      make("huge.fits", fitsFile(imageCards("16", {"100000", "100000"}), 2880)), "truncated"));
  EXPECT_TRUE(failsCleanly(
      make("huge3d.fits", fitsFile(imageCards("32", {"2048", "2048", "100000"}), 2880)),
      "truncated"));
}

TEST_F(BadInput, TiffAbsurdDimensionsAndTruncation) {
  EXPECT_TRUE(failsCleanly(make("absurd.tif", test::tiffFile(2000000000u, 2000000000u, 100, 100))));
  EXPECT_TRUE(failsCleanly(make("big_claim.tif", test::tiffFile(100000, 100000, 20000000, 100)),
                           "impossible"));
  // A strip that runs past the end of the file.
  EXPECT_TRUE(failsCleanly(make("short_strip.tif", test::tiffFile(64, 64, 64 * 64 * 2, 1000))));
  // A real stack cut in half.
  const std::string whole = test::readBytes(kFixtures + "lzw_uint16.tif");
  EXPECT_TRUE(failsCleanly(make("half.tif", whole.substr(0, whole.size() / 2))));
  const std::string tiled = test::readBytes(kFixtures + "tiled_uint16.tif");
  EXPECT_TRUE(failsCleanly(make("half_tiled.tif", tiled.substr(0, tiled.size() / 3))));
  // The valid control case: the same builder with enough data opens and reads.
  const std::string ok = make("ok.tif", test::tiffFile(8, 4, 64, 64));
  auto reader = openStack(ok);
  std::vector<float> slice(32);
  reader->readSlice(0, slice.data());
  EXPECT_EQ(slice[0], 257.0f);  // bytes 0x01 0x01
}

TEST_F(BadInput, TruncatedCompressedFits) {
  const std::string fz = test::readBytes(kFixtures + "rice.fits.fz");
  EXPECT_TRUE(failsCleanly(make("half.fits.fz", fz.substr(0, fz.size() - 2880))));
  const std::string gz = test::readBytes(kFixtures + "plain.fits.gz");
  EXPECT_TRUE(failsCleanly(make("half.fits.gz", gz.substr(0, gz.size() / 2))));
}

TEST_F(BadInput, GzipTrailerClaimingGigabytesIsRefusedBeforeDecompressing) {
  // Found by fits_fuzzer: cfitsio allocates what the gzip trailer claims before decompressing.
  const std::string kept =
      std::string(STACKLENS_TEST_DATA) + "/corpus_regressions/fits_fuzzer_oom_gzip_isize.fits.gz";
  EXPECT_TRUE(failsCleanly(make("claims.fits.gz", test::readBytes(kept)), "damaged gzip"));
  // An honest gzip of the same kind still opens.
  EXPECT_EQ(openStack(kFixtures + "plain.fits.gz")->info().z, 3);
}

TEST_F(BadInput, SliceIndexOutOfRangeIsAnError) {
  auto reader = openStack(kFixtures + "bitpix_int16.fits");
  std::vector<float> slice(35);
  EXPECT_THROW(reader->readSlice(3, slice.data()), IoError);
  EXPECT_THROW(reader->readSlice(-1, slice.data()), IoError);
  auto tiff = openStack(kFixtures + "tiff_int16.tif");
  EXPECT_THROW(tiff->readSlice(3, slice.data()), IoError);
}

TEST_F(BadInput, ControlCaseValidHandMadeFitsOpens) {
  // The same builder with a complete data unit opens: the failures above are about their defects.
  auto reader = openStack(make("ok.fits", fitsFile(imageCards("16", {"100", "100"}), 20000)));
  EXPECT_EQ(reader->info().x, 100);
  std::vector<float> slice(10000);
  reader->readSlice(0, slice.data());
  EXPECT_EQ(slice[9999], 0.0f);
}

}  // namespace
}  // namespace stacklens::io
