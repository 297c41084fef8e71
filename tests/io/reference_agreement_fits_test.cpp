// FITS files that astropy and cfitsio read cleanly, made by data/reference_agreement's script:
// each once refused as damaged or hiding its image HDUs (issue 38).
#include <gtest/gtest.h>

#include <string>

#include "io/io_error.h"
#include "io/stack.h"
#include "io/wcs.h"
#include "reference_values.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kReferenceAgreement;
using test::referenceValues;

// The value of a card, or "" when the header lacks it.
std::string cardValue(const StackInfo& info, const std::string& key) {
  const HeaderCard* card = test::findCard(info, key);
  return card ? card->value : "";
}

TEST(ReferenceAgreementFits, CompressedImageWhoseZtensionComesLastOpensWithItsHeader) {
  // cfitsio's fits_convert_hdr2str fails with status 252 on this table (ZBITPIX before
  // ZTENSION): its image header is rebuilt from the table's cards instead.
  auto reader = openStack(kReferenceAgreement + "compressed_ztension_last.fits");
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.hdu, 1);
  EXPECT_EQ(info.hdus[1].type, "compressed image");
  EXPECT_EQ(info.hdus[1].name, "SCI");
  EXPECT_EQ(std::string(dtypeName(info.dtype)), "int16");
  ASSERT_GE(info.header.size(), 5u);
  EXPECT_EQ(info.header[0].key, "XTENSION");
  EXPECT_EQ(info.header[1].key, "BITPIX");
  EXPECT_EQ(info.header[1].value, "16");
  EXPECT_EQ(info.header[2].key, "NAXIS");
  EXPECT_EQ(cardValue(info, "NAXIS1"), "12");
  EXPECT_EQ(cardValue(info, "NAXIS2"), "10");
  EXPECT_EQ(test::findCard(info, "ZBITPIX"), nullptr);
  EXPECT_EQ(test::findCard(info, "TFORM1"), nullptr);
  EXPECT_EQ(cardValue(info, "CTYPE1"), "'RA---TAN'");
  ASSERT_NE(reader->wcs(), nullptr);  // the WCS cards reached wcslib
  EXPECT_TRUE(
      test::sameValues(referenceValues("compressed_ztension_last.fits"), test::readAll(*reader)));
}

TEST(ReferenceAgreementFits, CompressedPrimaryWhoseZsimpleComesLastOpensAsAPrimary) {
  // The same table, its image once a primary: ZSIMPLE in place of ZTENSION, still last.
  test::TempDir dir;
  std::string bytes = test::readBytes(kReferenceAgreement + "compressed_ztension_last.fits");
  const size_t ztension = bytes.find("ZTENSION= ");
  ASSERT_NE(ztension, std::string::npos);
  std::string card = "ZSIMPLE =                    T / a primary once";
  card.resize(80, ' ');
  bytes.replace(ztension, 80, card);
  test::writeBytes(dir.file("zsimple.fits"), bytes);
  auto reader = openStack(dir.file("zsimple.fits"));
  const StackInfo& info = reader->info();
  ASSERT_GE(info.header.size(), 5u);
  EXPECT_EQ(info.header[0].key, "SIMPLE");
  EXPECT_EQ(info.header[0].value, "T");
  EXPECT_EQ(info.header[1].key, "BITPIX");
  EXPECT_EQ(test::findCard(info, "PCOUNT"), nullptr);
  EXPECT_TRUE(
      test::sameValues(referenceValues("compressed_ztension_last.fits"), test::readAll(*reader)));
}

TEST(ReferenceAgreementFits, CompressedImageWithExtnameTwiceOpens) {
  auto reader = openStack(kReferenceAgreement + "compressed_extname_twice.fits");
  EXPECT_EQ(reader->info().hdu, 1);
  EXPECT_EQ(reader->info().hdus[1].name, "SCI");  // the first, as cfitsio and astropy read it
  EXPECT_TRUE(
      test::sameValues(referenceValues("compressed_extname_twice.fits"), test::readAll(*reader)));
}

TEST(ReferenceAgreementFits, RandomGroupsAreSteppedOverToTheImageAfterThem) {
  auto reader = openStack(kReferenceAgreement + "random_groups.fits");
  const StackInfo& info = reader->info();
  ASSERT_EQ(info.hdus.size(), 2u);
  EXPECT_EQ(info.hdus[0].type, "random groups array");
  EXPECT_EQ(info.hdu, 1);
  EXPECT_EQ(info.hdus[1].name, "IMG");
  EXPECT_TRUE(test::sameValues(referenceValues("random_groups.fits"), test::readAll(*reader)));
}

TEST(ReferenceAgreementFits, RandomGroupsAskedForByNumberAreRefusedAsNoImage) {
  OpenOptions options;
  options.hdu = 0;
  try {
    openStack(kReferenceAgreement + "random_groups.fits", options);
    FAIL() << "random groups opened as an image";
  } catch (const IoError& e) {
    EXPECT_NE(e.reason().find("random groups array, not an image"), std::string::npos)
        << e.reason();
  }
}

TEST(ReferenceAgreementFits, RandomGroupsAloneSayWhyNothingIsShown) {
  test::TempDir dir;
  // The primary alone: its header block and its 3 groups of 2 parameters and 6 values.
  const std::string bytes = test::readBytes(kReferenceAgreement + "random_groups.fits");
  test::writeBytes(dir.file("groups.fits"), bytes.substr(0, 2 * 2880));
  try {
    openStack(dir.file("groups.fits"));
    FAIL() << "random groups opened as an image";
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), dir.file("groups.fits"));
    EXPECT_NE(e.reason().find("HDU 0 is a random groups array"), std::string::npos) << e.reason();
  }
}

TEST(ReferenceAgreementFits, RandomGroupsPastTheEndOfTheFileAreStillRefused) {
  test::TempDir dir;
  std::string bytes = test::readBytes(kReferenceAgreement + "random_groups.fits");
  const size_t gcount = bytes.find("GCOUNT  =");
  ASSERT_NE(gcount, std::string::npos);
  bytes.replace(gcount, 30, "GCOUNT  =               100000");
  test::writeBytes(dir.file("groups.fits"), bytes);
  EXPECT_THROW(openStack(dir.file("groups.fits")), IoError);
}

TEST(ReferenceAgreementFits, PrimaryOfNaxis2ZeroAndHugeNaxis1HidesNoLaterHdu) {
  auto reader = openStack(kReferenceAgreement + "primary_naxis2_zero.fits");
  const StackInfo& info = reader->info();
  ASSERT_EQ(info.hdus.size(), 2u);
  EXPECT_EQ(info.hdus[0].axes, (std::vector<int64_t>{1000000000000, 0}));
  EXPECT_EQ(info.hdu, 1);
  EXPECT_TRUE(
      test::sameValues(referenceValues("primary_naxis2_zero.fits"), test::readAll(*reader)));
}

TEST(ReferenceAgreementFits, PrimaryOfHugeAxesWithDataIsStillRefused) {
  test::TempDir dir;
  std::string bytes = test::readBytes(kReferenceAgreement + "primary_naxis2_zero.fits");
  const size_t naxis2 = bytes.find("NAXIS2  =");
  ASSERT_NE(naxis2, std::string::npos);
  bytes.replace(naxis2, 30, "NAXIS2  =                    1");
  test::writeBytes(dir.file("huge.fits"), bytes);
  EXPECT_THROW(openStack(dir.file("huge.fits")), IoError);
}

}  // namespace
}  // namespace stacklens::io
