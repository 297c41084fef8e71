// VOTable and IPAC tables written here after their specifications (VOTable 1.4: TABLEDATA cells
// with encoding="base64", arrays of every datatype in TABLEDATA and BINARY, fixed, variable and
// bounded-variable array sizes; IPAC 1.2: keywords, comments, names and types padded with
// dashes, null values).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/catalog.h"
#include "votable_stream.h"

using namespace stacklens::io;
using stacklens::io::test::Stream;

namespace {

std::string voTable(const std::string& fields, const std::string& data) {
  return "<?xml version='1.0'?>\n<VOTABLE version='1.4' "
         "xmlns='http://www.ivoa.net/xml/VOTable/v1.3'><RESOURCE><TABLE name='t'>" +
         fields + "<DATA>" + data + "</DATA></TABLE></RESOURCE></VOTABLE>\n";
}

std::string base64Cell(const Stream& s) { return "<TD encoding='base64'>" + s.base64() + "</TD>"; }

}  // namespace

TEST(CatalogSpec, IpacNamesAndTypesLoseTheirPaddingDashes) {
  const CatalogTable t = parseCatalogText(
      "\\catalog = 'test'\n"
      "\\ A comment line\n"
      "|----ra----|---dec----|-name-|--flux--|\n"
      "|--double--|--double--|-char-|--real--|\n"
      "|   deg    |   deg    |      |  mJy   |\n"
      "|   null   |   null   |  -   |  -99   |\n"
      "  10.68470   41.26875  M31     -99    \n"
      "  83.82208   -5.39111  -       12.5   \n"
      "  null       0.5       M 1     1e3    \n",
      "dashes.tbl");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"ra", "dec", "name", "flux"}));
  EXPECT_EQ(t.datatypes, (std::vector<std::string>{"double", "double", "char", "real"}));
  EXPECT_EQ(t.units, (std::vector<std::string>{"deg", "deg", "", "mJy"}));
  ASSERT_EQ(t.cells.size(), 3u);
  EXPECT_EQ(t.cells[0], (std::vector<std::string>{"10.68470", "41.26875", "M31", ""}));
  EXPECT_EQ(t.cells[1], (std::vector<std::string>{"83.82208", "-5.39111", "", "12.5"}));
  EXPECT_EQ(t.cells[2], (std::vector<std::string>{"", "0.5", "M 1", "1e3"}));
  const PositionColumns p = guessPositionColumns(t);
  EXPECT_EQ(p.lon, 0);
  EXPECT_EQ(p.lat, 1);
}

TEST(CatalogSpec, IpacWithoutTypeUnitAndNullLinesReadsNullAsNull) {
  const CatalogTable t = parseCatalogText(
      "|  id  |   mag  |\n"
      "   1      12.5   \n"
      "   2      null   \n",
      "short.tbl");
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.cells[1][1], "");
  EXPECT_EQ(t.datatypes[0], "");
}

TEST(CatalogSpec, VoTableBase64CellsAreDecodedAsTheirField) {
  Stream id, pair, text, flags, counts, plain;
  id.i32(42);
  pair.f64(1.5), pair.f64(-2);
  text.i32(5), text.bytes += "hello";
  flags.u8('T'), flags.u8('F'), flags.u8('?');
  counts.i32(2), counts.i32(3), counts.i32(-1);
  const std::string fields =
      "<FIELD name='id' datatype='int'/>"
      "<FIELD name='pair' datatype='double' arraysize='2'/>"
      "<FIELD name='text' datatype='char' arraysize='*'/>"
      "<FIELD name='flags' datatype='boolean' arraysize='3'/>"
      "<FIELD name='counts' datatype='int' arraysize='*'><VALUES null='-1'/></FIELD>"
      "<FIELD name='plain' datatype='short'/>";
  const CatalogTable t = parseCatalogText(
      voTable(fields, "<TABLEDATA><TR>" + base64Cell(id) + base64Cell(pair) + base64Cell(text) +
                          base64Cell(flags) + base64Cell(counts) +
                          "<TD>7</TD></TR><TR><TD>43</TD><TD>1 2</TD><TD>plain</TD>"
                          "<TD>F F T</TD><TD>-1</TD><TD/></TR></TABLEDATA>"),
      "b64.vot");
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.cells[0],
            (std::vector<std::string>{"42", "1.5 -2", "hello", "true false ", "3 ", "7"}));
  EXPECT_EQ(t.cells[1],
            (std::vector<std::string>{"43", "1 2", "plain", "false false true", "", ""}));
}

TEST(CatalogSpec, VoTableBase64CellShorterThanItsFieldIsAnError) {
  Stream two;
  two.i16(1);
  try {
    parseCatalogText(voTable("<FIELD name='a' datatype='int'/>",
                             "<TABLEDATA><TR>" + base64Cell(two) + "</TR></TABLEDATA>"),
                     "short.vot");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), "short.vot");
    EXPECT_NE(e.reason().find("row 1, column 1"), std::string::npos) << e.reason();
  }
}

TEST(CatalogSpec, VoTableArraysInTableDataKeepEveryValue) {
  const std::string fields =
      "<FIELD name='b3' datatype='boolean' arraysize='3'/>"
      "<FIELD name='bv' datatype='boolean' arraysize='*'/>"
      "<FIELD name='bits' datatype='bit' arraysize='5'/>"
      "<FIELD name='n' datatype='int' arraysize='3'><VALUES null='-1'/></FIELD>"
      "<FIELD name='x' datatype='float' arraysize='2x2'/>"
      "<FIELD name='z' datatype='doubleComplex'/>"
      "<FIELD name='s' datatype='unicodeChar' arraysize='8*'/>";
  const CatalogTable t = parseCatalogText(
      voTable(fields,
              "<TABLEDATA>"
              "<TR><TD>T F ?</TD><TD>TFT</TD><TD>1 0 1 1 0</TD><TD>1 -1 3</TD>"
              "<TD>1 NaN 2 3</TD><TD>1.5 -2</TD><TD> caf\xc3\xa9 au lait </TD></TR>"
              "<TR><TD>true false TRUE</TD><TD>?</TD><TD>01101</TD><TD>-1 -1 -1</TD>"
              "<TD>NaN NaN NaN NaN</TD><TD/><TD/></TR>"
              "</TABLEDATA>"),
      "arrays.vot");
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.cells[0], (std::vector<std::string>{"true false ", "true false true", "10110", "1  3",
                                                  "1  2 3", "1.5 -2", "caf\xc3\xa9 au lait"}));
  EXPECT_EQ(t.cells[1], (std::vector<std::string>{"true false true", "", "01101", "", "", "", ""}));
  EXPECT_EQ(t.datatypes[2], "bit[5]");
}

TEST(CatalogSpec, VoTableBinaryArraysOfEveryDatatype) {
  const std::string fields =
      "<FIELD name='b3' datatype='boolean' arraysize='3'/>"
      "<FIELD name='bits' datatype='bit' arraysize='10'/>"
      "<FIELD name='grid' datatype='int' arraysize='2x*'/>"
      "<FIELD name='code' datatype='char' arraysize='10*'/>"
      "<FIELD name='u' datatype='unicodeChar' arraysize='4'/>"
      "<FIELD name='fc' datatype='floatComplex'/>"
      "<FIELD name='dc' datatype='doubleComplex' arraysize='2'/>"
      "<FIELD name='ub' datatype='unsignedByte' arraysize='2'/>"
      "<FIELD name='sh' datatype='short' arraysize='*'/>"
      "<FIELD name='lg' datatype='long'/>";
  Stream s;
  s.u8('T'), s.u8('0'), s.u8('?');
  s.be(0b1011000001'000000, 2);  // 10 bits, then padding
  s.i32(2), s.i32(1), s.i32(2), s.i32(3), s.i32(4);
  s.i32(3), s.bytes += "abc";
  s.i16('a'), s.i16('b'), s.i16(0), s.i16(0);
  s.f32(1.5f), s.f32(-2.0f);
  s.f64(1), s.f64(2), s.f64(3), s.f64(4);
  s.u8(0), s.u8(255);
  s.i32(0);
  s.i64(-1);
  for (const char* element : {"BINARY", "BINARY2"}) {
    Stream row;
    if (std::string(element) == "BINARY2") row.be(0, 2);
    row.bytes += s.bytes;
    const CatalogTable t = parseCatalogText(
        voTable(fields, std::string("<") + element + "><STREAM encoding='base64'>" + row.base64() +
                            "</STREAM></" + element + ">"),
        "arrays.vot");
    ASSERT_EQ(t.cells.size(), 1u) << element;
    EXPECT_EQ(t.cells[0], (std::vector<std::string>{"true false ", "1011000001", "1 2 3 4", "abc",
                                                    "ab", "1.5 -2", "1 2 3 4", "0 255", "", "-1"}))
        << element;
  }
}
