// Catalogs whose headers claim more than their files hold: VOTable binary rows of no bytes or of
// absurd array sizes, FITS tables of a billion rows, text headers of twenty thousand columns over
// rows of one value. Each must be refused with an IoError naming the file, before the
// reader allocates what the header claims.
#include <fitsio.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "io/catalog.h"
#include "test_support.h"
#include "votable_stream.h"

using namespace stacklens::io;
using stacklens::io::test::Stream;

namespace {

std::string voTable(const std::string& fields, const std::string& element, const Stream& s) {
  return "<?xml version='1.0'?>\n<VOTABLE version='1.4'><RESOURCE><TABLE>" + fields + "<DATA><" +
         element + "><STREAM encoding='base64'>" + s.base64() + "</STREAM></" + element +
         "></DATA></TABLE></RESOURCE></VOTABLE>\n";
}

// The reason of the IoError that parsing text throws ("" when it does not throw).
std::string refusal(const std::string& text, const std::string& name) {
  try {
    parseCatalogText(text, name);
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), name);
    return e.reason();
  }
  return "";
}

// STACKLENS_ALLOCATION_CAP_MB set for one scope.
class AllocationCap {
 public:
  explicit AllocationCap(const char* mb) {
    if (const char* old = std::getenv("STACKLENS_ALLOCATION_CAP_MB")) old_ = old;
    ::setenv("STACKLENS_ALLOCATION_CAP_MB", mb, 1);
  }
  ~AllocationCap() {
    if (old_.empty())
      ::unsetenv("STACKLENS_ALLOCATION_CAP_MB");
    else
      ::setenv("STACKLENS_ALLOCATION_CAP_MB", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

}  // namespace

TEST(CatalogBounds, BinaryStreamWithoutFieldsIsRefusedNotLoopedOver) {
  Stream s;
  s.i32(7);
  for (const char* element : {"BINARY", "BINARY2"})
    EXPECT_NE(refusal(voTable("", element, s), "nofield.vot").find("take none"), std::string::npos)
        << element;
}

TEST(CatalogBounds, BinaryStreamOfEmptyArraysIsRefusedNotLoopedOver) {
  Stream s;
  s.i32(7);
  EXPECT_NE(
      refusal(voTable("<FIELD name='a' datatype='int' arraysize='0'/>", "BINARY", s), "empty.vot")
          .find("take none"),
      std::string::npos);
  // BINARY2 rows still carry their null flags: one byte a row, so rows of empty cells.
  Stream flags;
  flags.u8(0), flags.u8(0);
  const CatalogTable t = parseCatalogText(
      voTable("<FIELD name='a' datatype='int' arraysize='0'/>", "BINARY2", flags), "e2.vot");
  EXPECT_EQ(t.cells.size(), 2u);
}

TEST(CatalogBounds, HugeFixedArraySizeIsRefusedNotReadPastTheStream) {
  Stream s;
  s.f64(1.0);
  // 2^61 doubles: 2^64 bytes, which wraps to 0 in 64 bits; 2^32 × 2^32 wraps the element count.
  for (const char* size : {"2305843009213693952", "4294967296x4294967296", "65536x65536x65536"}) {
    const std::string field =
        std::string("<FIELD name='a' datatype='double' arraysize='") + size + "'/>";
    EXPECT_NE(refusal(voTable(field, "BINARY", s), "huge.vot").find("ends inside row 1"),
              std::string::npos)
        << size;
  }
}

TEST(CatalogBounds, HugeVariableArrayCountIsRefused) {
  Stream s;
  s.be(0xffffffffu, 4), s.f64(1.0);
  EXPECT_NE(
      refusal(voTable("<FIELD name='a' datatype='doubleComplex' arraysize='3x*'/>", "BINARY", s),
              "var.vot")
          .find("ends inside row 1"),
      std::string::npos);
}

TEST(CatalogBounds, CsvHeaderOfManyColumnsOverShortRowsIsRefused) {
  // 20 000 column names over 40 rows of one value: 800 000 cells from 40 kB.
  std::string text;
  for (int c = 0; c < 20000; ++c) text += c ? ",c" : "c";
  text += "\n";
  for (int r = 0; r < 40; ++r) text += "1\n";
  EXPECT_NE(refusal(text, "wide.csv").find("cannot come from"), std::string::npos);
  // The same header over full rows reads.
  std::string full = text.substr(0, text.find('\n') + 1);
  for (int c = 0; c < 20000; ++c) full += c ? ",1" : "1";
  full += "\n";
  EXPECT_EQ(parseCatalogText(full, "wide.csv").cells.size(), 1u);
}

TEST(CatalogBounds, IpacHeaderOfManyColumnsOverShortRowsIsRefused) {
  std::string text = "|";
  for (int c = 0; c < 20000; ++c) text += "a|";
  text += "\n";
  for (int r = 0; r < 40; ++r) text += " 1\n";
  EXPECT_NE(refusal(text, "wide.tbl").find("cannot come from"), std::string::npos);
}

TEST(CatalogBounds, VoTableRowsPaddedToManyFieldsAreRefused) {
  std::string fields;
  for (int c = 0; c < 20000; ++c) fields += "<FIELD name='f' datatype='int'/>";
  std::string rows;
  for (int r = 0; r < 1000; ++r) rows += "<TR/>";
  const std::string text = "<VOTABLE><RESOURCE><TABLE>" + fields + "<DATA><TABLEDATA>" + rows +
                           "</TABLEDATA></DATA></TABLE></RESOURCE></VOTABLE>";
  EXPECT_NE(refusal(text, "padded.vot").find("cannot come from"), std::string::npos);
}

TEST(CatalogBounds, TableOverTheAllocationCapIsRefused) {
  // 200 columns × 2000 full rows: 400 000 cells, about 13 MB of strings, from 800 kB of text.
  std::string text;
  for (int r = 0; r < 2001; ++r) {
    for (int c = 0; c < 200; ++c) text += c ? ",1" : "1";
    text += "\n";
  }
  const AllocationCap cap("4");
  EXPECT_NE(refusal(text, "big.csv").find("allocation cap"), std::string::npos);
}

// A FITS binary table whose NAXIS2 is changed after writing, as a damaged or hostile file has.
std::string fitsTableClaiming(const test::TempDir& dir, const char* form, const char* naxis2) {
  const std::string path = dir.file(std::string("claims_") + naxis2 + "_" + form + ".fits");
  int status = 0;
  fitsfile* f = nullptr;
  fits_create_file(&f, path.c_str(), &status);
  fits_create_img(f, 8, 0, nullptr, &status);
  char* names[] = {const_cast<char*>("A")};
  char* forms[] = {const_cast<char*>(form)};
  fits_create_tbl(f, BINARY_TBL, 0, 1, names, forms, nullptr, "T", &status);
  int values[] = {1, 2};
  if (form[0] != '0') fits_write_col(f, TINT, 1, 1, 1, 2, values, &status);
  fits_close_file(f, &status);
  EXPECT_EQ(status, 0);
  // Rewrite the NAXIS2 card in place (the second HDU's header starts at 2880).
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string header(2880, ' ');
  file.seekg(2880);
  file.read(header.data(), 2880);
  const size_t card = header.find("NAXIS2  =");
  EXPECT_NE(card, std::string::npos);
  std::string value(20, ' ');
  const std::string n = naxis2;
  value.replace(20 - n.size(), n.size(), n);
  file.seekp(static_cast<std::streamoff>(2880 + card + 10));
  file.write(value.data(), 20);
  return path;
}

TEST(CatalogBounds, FitsTableClaimingABillionRowsIsRefusedBeforeAllocating) {
  test::TempDir dir;
  for (const char* form : {"J", "0J"}) {
    const std::string path = fitsTableClaiming(dir, form, "1000000000");
    try {
      readCatalog(path);
      ADD_FAILURE() << form << ": read";
    } catch (const IoError& e) {
      EXPECT_EQ(e.path(), path);
      // Refused by the header pass (its data would run past the end of the file) or by the
      // table's own size checks.
      EXPECT_TRUE(e.reason().find("HDU 1: ") != std::string::npos ||
                  e.reason().find("more than the") != std::string::npos ||
                  e.reason().find("cannot come from") != std::string::npos)
          << form << ": " << e.what();
    }
  }
}
