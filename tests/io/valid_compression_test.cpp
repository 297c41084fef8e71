// Valid files that earlier rules refused: a .fits.gz of several gzip members (cfitsio's own
// inflation sees only the first, and the trailer check took the last member's size for the
// whole), and a ZSTD TIFF compressed beyond 5000:1 (a ratio rule refused it; an allocation cap
// now bounds what a page may claim).
#include <gtest/gtest.h>
#include <tiffio.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

TEST(ValidCompression, AMultiMemberFitsGzOpens) {
  test::TempDir dir;
  std::vector<float> data(3 * 20 * 30);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 977) * 0.5f - 7.f;
  writeStack(dir.file("plain.fits"), data.data(), 3, 20, 30, {});
  const std::string bytes = test::readBytes(dir.file("plain.fits"));
  const std::string gz = dir.file("members.fits.gz");
  // Two members, split in the middle of the data ("wb", then "ab" starts a new member).
  const size_t half = bytes.size() / 2 + 123;
  for (const auto& [mode, part] :
       {std::pair{"wb", bytes.substr(0, half)}, std::pair{"ab", bytes.substr(half)}}) {
    gzFile f = gzopen(gz.c_str(), mode);
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, part.data(), unsigned(part.size())), int(part.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
  auto reader = openStack(gz);
  ASSERT_EQ(reader->info().z, 3);
  EXPECT_TRUE(test::sameValues(data, test::readAll(*reader)));
}

TEST(ValidCompression, AZstdTiffBeyond5000To1Opens) {
  if (!TIFFIsCODECConfigured(COMPRESSION_ZSTD)) GTEST_SKIP() << "libtiff without ZSTD";
  test::TempDir dir;
  const std::string path = dir.file("flat.tif");
  const uint32_t w = 4096, h = 4096;
  std::vector<uint16_t> page(size_t(w) * h, 7);
  page[12345] = 1000;
  {
    TIFF* t = TIFFOpen(path.c_str(), "w");
    ASSERT_NE(t, nullptr);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 16);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_ZSTD);
    TIFFSetField(t, TIFFTAG_ZSTD_LEVEL, 19);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, h);
    ASSERT_GE(TIFFWriteEncodedStrip(t, 0, page.data(), tmsize_t(page.size() * 2)), 0);
    TIFFClose(t);
  }
  const double ratio = double(page.size() * 2) / double(test::readBytes(path).size());
  ASSERT_GT(ratio, 5000.0) << "the test needs a higher ratio";
  auto reader = openStack(path);
  std::vector<float> slice(page.size());
  reader->readSlice(0, slice.data());
  EXPECT_EQ(slice[12345], 1000.f);
  EXPECT_EQ(slice[0], 7.f);
}

}  // namespace
}  // namespace stacklens::io
