// TIFF files that libtiff reads cleanly, made by data/reference_agreement's script: JPEG-
// compressed YCbCr (tiffcp -c jpeg), YCbCr without compression and old-style JPEG, each once
// refused or shown as its raw YCbCr samples (issue 38). The expected values are libtiff's own
// (tiff2rgba).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "io/io_error.h"
#include "io/stack.h"
#include "reference_values.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kReferenceAgreement;
using test::referenceValues;

// Equal but for JPEG's last bit: the values were decoded by the libjpeg of the machine that
// made them, and another build of libjpeg may round an IDCT differently by one.
::testing::AssertionResult closeToLibtiff(const std::vector<float>& expected,
                                          const std::vector<float>& actual) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << expected.size() << " vs " << actual.size();
  for (size_t i = 0; i < expected.size(); ++i)
    if (!(std::fabs(expected[i] - actual[i]) <= 1.0f))
      return ::testing::AssertionFailure()
             << "value " << i << ": libtiff reads " << expected[i] << ", we read " << actual[i];
  return ::testing::AssertionSuccess();
}

// Every plane of the file against libtiff's red, green and blue (or grey).
void expectEveryPlaneAsLibtiff(const std::string& name, int planes, int64_t z) {
  for (int plane = 0; plane < planes; ++plane) {
    SCOPED_TRACE(name + " plane " + std::to_string(plane));
    OpenOptions options;
    options.plane = plane;
    auto reader = openStack(kReferenceAgreement + name, options);
    const StackInfo& info = reader->info();
    EXPECT_EQ(info.planes, planes);
    EXPECT_EQ(info.z, z);
    EXPECT_EQ(std::string(dtypeName(info.dtype)), "uint8");
    EXPECT_NE(test::findCard(info, "note"), nullptr);
    EXPECT_TRUE(closeToLibtiff(referenceValues(name, plane), test::readAll(*reader)));
  }
}

TEST(ReferenceAgreementTiff, JpegYcbcrStripsReadAsRgbOnEveryPage) {
  expectEveryPlaneAsLibtiff("jpeg_ycbcr.tif", 3, 2);
}

TEST(ReferenceAgreementTiff, JpegYcbcrTilesReadAsRgb) {
  expectEveryPlaneAsLibtiff("jpeg_ycbcr_tiled.tif", 3, 1);
}

TEST(ReferenceAgreementTiff, UncompressedYcbcrReadsAsRgb) {
  expectEveryPlaneAsLibtiff("ycbcr_uncompressed.tif", 3, 1);
}

TEST(ReferenceAgreementTiff, OldStyleJpegYcbcrReadsAsRgb) {
  expectEveryPlaneAsLibtiff("ojpeg_ycbcr.tif", 3, 1);
}

TEST(ReferenceAgreementTiff, OldStyleJpegGreyReads) {
  expectEveryPlaneAsLibtiff("ojpeg_grey.tif", 1, 1);
}

TEST(ReferenceAgreementTiff, OldStyleJpegWithoutItsStreamIsStillRefused) {
  test::TempDir dir;
  std::string bytes = test::readBytes(kReferenceAgreement + "ojpeg_ycbcr.tif");
  // The JPEG stream lies between the 8-byte header and the directory: blanked, it decodes to
  // nothing.
  const size_t soi = bytes.find("\xff\xd8");
  ASSERT_EQ(soi, 8u);
  bytes.replace(8, 400, std::string(400, '\0'));
  test::writeBytes(dir.file("ojpeg.tif"), bytes);
  auto reader = openStack(dir.file("ojpeg.tif"));
  std::vector<float> slice(static_cast<size_t>(reader->info().y * reader->info().x));
  try {
    reader->readSlice(0, slice.data());
    FAIL() << "a blank JPEG stream was read";
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), dir.file("ojpeg.tif"));
    EXPECT_NE(e.reason().find("cannot read slice 0"), std::string::npos) << e.reason();
  }
}

}  // namespace
}  // namespace stacklens::io
