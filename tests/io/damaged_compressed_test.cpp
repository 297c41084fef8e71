// Damaged tile-compressed image headers are rejected by our own header pass before cfitsio parses
// them (cfitsio 4.2.0 divides by a zero ZTILE, and more): the HDU is listed as unreadable with the
// reason, and the file's other HDUs stay usable.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include <string>
#include <vector>

#include "io/io_error.h"
#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kFixtures;

// rice.fits.fz with the card `key` of its compressed HDU replaced.
std::string damaged(const std::string& key, const std::string& card) {
  std::string bytes = test::readBytes(kFixtures + "rice.fits.fz");
  for (size_t i = 2880; i + 80 <= 4 * 2880; i += 80) {
    std::string k = bytes.substr(i, 8);
    while (!k.empty() && k.back() == ' ') k.pop_back();
    if (k != key) continue;
    std::string c = card;
    c.resize(80, ' ');
    bytes.replace(i, 80, c);
    return bytes;
  }
  ADD_FAILURE() << "no card " << key;
  return bytes;
}

// A 4 × 3 float32 image extension with values 0 … 11.
std::string imageExtension() {
  std::string h;
  for (const char* c : {"XTENSION= 'IMAGE   '", "BITPIX  =                  -32",
                        "NAXIS   =                    2", "NAXIS1  =                    4",
                        "NAXIS2  =                    3", "PCOUNT  =                    0",
                        "GCOUNT  =                    1", "EXTNAME = 'GOOD'", "END"}) {
    std::string card = c;
    card.resize(80, ' ');
    h += card;
  }
  h.resize(2880, ' ');
  std::string data;
  for (int i = 0; i < 12; ++i) {
    const float v = float(i);
    uint32_t u;
    std::memcpy(&u, &v, 4);
    for (int b = 3; b >= 0; --b) data += char((u >> (8 * b)) & 0xff);
  }
  data.resize(2880, '\0');
  return h + data;
}

TEST(DamagedCompressed, EachDamageIsRejectedWithItsReason) {
  test::TempDir dir;
  const struct {
    const char* key;
    const char* card;
    const char* reason;
  } cases[] = {
      {"ZTILE2", "ZTILE2  =                    0", "ZTILE2"},
      {"ZBITPIX", "ZBITPIX =                    7", "ZBITPIX"},
      {"ZCMPTYPE", "ZCMPTYPE= 'FOO_1   '", "ZCMPTYPE"},
      {"ZCMPTYPE", "ZCMPTYPE= 'RICE_1", "closing quote"},
      {"ZNAXIS", "ZNAXIS  =                    9", "ZNAXIS"},
      {"ZNAXIS2", "ZNAXIS2 =                   -4", "ZNAXIS2"},
      {"NAXIS2", "NAXIS2  =              9999999", "NAXIS2"},
      {"PCOUNT", "PCOUNT  =              9999999", "PCOUNT"},
      {"TFORM1", "TFORM1  = '1PB(99999999)'", "TFORM1"},
      {"TFORM1", "TFORM1  = '7PB(31)'", "TFORM1"},
      {"TFORM1", "TFORM1  = '0PB(31)'", "one descriptor per row"},
      {"ZVAL2", "ZVAL2   =(                   2", "not a number"},
      {"ZVAL1", "ZVAL1   =                    0", "block size"},
      // cfitsio takes the card's first '=' when column 9 holds none, and names a keyword up to a
      // blank or '=' (fits_fuzzer: a block size of 0 read so divided by zero in cfitsio).
      {"ZVAL1", "ZVAL1      =    0           32", "block size"},
      {"ZVAL1", "ZVAL1=0    x =  1", "block size"},
      {"ZVAL2", "ZVAL2   =                    3", "bytes per pixel"},
      {"ZNAXIS1", "ZNAXIS1 = 0000000000000000000000000000000000000000000000000000000000000024",
       "characters long"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.card);
    const std::string path = dir.file("bad.fits.fz");
    test::writeBytes(path, damaged(c.key, c.card));
    try {
      openStack(path);
      ADD_FAILURE() << "opened";
    } catch (const IoError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("HDU 1 is damaged"), std::string::npos) << what;
      EXPECT_NE(what.find(c.reason), std::string::npos) << what;
    }
  }
}

// Headers read the way cfitsio reads them (fits_fuzzer findings): a logical followed by a comment
// without '/', a value that fills the card, and a primary header our pass cannot size (BITPIX's
// '=' in column 11), behind which cfitsio would parse a damaged extension unchecked.
TEST(DamagedCompressed, HeadersAreReadAsCfitsioReadsThem) {
  test::TempDir dir;
  auto refused = [&](const std::string& bytes, const std::string& reason) {
    const std::string path = dir.file("odd.fits.fz");
    test::writeBytes(path, bytes);
    try {
      auto reader = openStack(path);
      std::vector<float> slice(size_t(reader->info().y * reader->info().x));
      reader->readSlice(0, slice.data());
      ADD_FAILURE() << "read " << reason;
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  auto card = [](std::string text) {
    text.resize(80, ' ');
    return text;
  };
  std::string bytes = damaged("ZTILE2", "ZTILE2  =                    0");
  const size_t zimage = bytes.find("ZIMAGE  =");
  ASSERT_NE(zimage, std::string::npos);
  bytes.replace(zimage, 80, card("ZIMAGE  =                    T ( compressed"));
  refused(bytes, "HDU 1 is damaged: ZTILE2");
  refused(damaged("EXTNAME", "EXTNAME =" + std::string(71, '@')), "too long for a header card");
  std::string primary = damaged("ZTILE2", "ZTILE2  =                    0");
  const size_t bitpix = primary.find("BITPIX  =");
  ASSERT_LT(bitpix, 2880u);
  primary.replace(bitpix, 80, card("BITPIX    =                  16"));
  refused(primary, "");  // any clean error: cfitsio never reaches the damaged extension
}

// cfitsio marks a table as a compressed image by the first letter of ZIMAGE's value: 'TRUE' too.
// Our pass must check such a table as the compressed image cfitsio will decode (its ZTILE2 = 0
// divides by zero inside cfitsio).
TEST(DamagedCompressed, ZimageIsReadByItsFirstLetterAsInCfitsio) {
  test::TempDir dir;
  std::string bytes = damaged("ZTILE2", "ZTILE2  =                    0");
  const size_t zimage = bytes.find("ZIMAGE  =");
  ASSERT_NE(zimage, std::string::npos);
  std::string card = "ZIMAGE  =                 TRUE";
  card.resize(80, ' ');
  bytes.replace(zimage, 80, card);
  const std::string path = dir.file("true.fits.fz");
  test::writeBytes(path, bytes);
  try {
    openStack(path, OpenOptions{1, 0});
    ADD_FAILURE() << "opened";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("HDU 1 is damaged: ZTILE2"), std::string::npos)
        << e.what();
  }
}

// cfitsio ends a header at the first card whose keyword reads END, whatever follows, and holds a
// card as a C string, so a NUL ends its keyword too; our pass must end the header at the same card,
// or the next HDU reaches cfitsio unchecked (found by fits_fuzzer: 'END    \0' and then a ZTILE3
// of 0 divided by zero inside cfitsio).
TEST(DamagedCompressed, EndWithTrailingTextEndsTheHeaderAsInCfitsio) {
  test::TempDir dir;
  const std::vector<std::string> ends = {
      std::string("END              @").append(80 - 18, ' '),
      std::string("END    ").append(1, '\0').append(72, ' '),
      std::string("END").append(1, '\0').append("    = 5").append(69, ' '),
  };
  for (const std::string& endCard : ends) {
    std::string bytes = damaged("ZTILE2", "ZTILE2  =                    0");
    const size_t end = bytes.find("END     ");
    ASSERT_LT(end, 2880u);
    bytes.replace(end, 80, endCard);
    const std::string path = dir.file("end_text.fits.fz");
    test::writeBytes(path, bytes);
    try {
      openStack(path);
      ADD_FAILURE() << "opened with END card '" << endCard << "'";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find("HDU 1 is damaged: ZTILE2"), std::string::npos)
          << e.what();
    }
  }
}

TEST(DamagedCompressed, TheOtherHdusStayUsable) {
  test::TempDir dir;
  const std::string path = dir.file("mixed.fits");
  test::writeBytes(path, damaged("ZTILE2", "ZTILE2  =                    0") + imageExtension());
  auto reader = openStack(path);
  const StackInfo& info = reader->info();
  ASSERT_EQ(info.hdus.size(), 3u);
  EXPECT_EQ(info.hdus[1].type.rfind("unreadable: ZTILE2", 0), 0u) << info.hdus[1].type;
  EXPECT_EQ(info.hdu, 2);
  std::vector<float> slice(12);
  reader->readSlice(0, slice.data());
  EXPECT_EQ(slice[11], 11.f);
  OpenOptions one;
  one.hdu = 1;
  EXPECT_THROW(openStack(path, one), IoError);
}

}  // namespace
}  // namespace stacklens::io
