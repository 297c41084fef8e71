// Catalog tables: VOTable TABLEDATA, BINARY and BINARY2 streams built here byte by byte, FITS
// tables written here with cfitsio, CSV/TSV/whitespace/IPAC text; numeric and sexagesimal
// columns, the guessed position columns, and CSV written back.
#include "io/catalog.h"

#include <fitsio.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "test_support.h"
#include "votable_stream.h"

using namespace stacklens::io;
using stacklens::io::test::Stream;

namespace {

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

double number(const std::string& cell) {
  double v = std::nan("");
  if (!cell.empty()) v = std::stod(cell);
  return v;
}

const char* kFields = R"(
  <FIELD name="id" datatype="int"/>
  <FIELD name="s" datatype="short"><VALUES null="-1"/></FIELD>
  <FIELD name="big" datatype="long"/>
  <FIELD name="ub" datatype="unsignedByte"/>
  <FIELD name="f" datatype="float" unit="mJy"/>
  <FIELD name="RA_ICRS" datatype="double" unit="deg" ucd="pos.eq.ra;meta.main"/>
  <FIELD name="flag" datatype="boolean"/>
  <FIELD name="name" datatype="char" arraysize="8"/>
  <FIELD name="comment" datatype="char" arraysize="*"/>
  <FIELD name="pair" datatype="double" arraysize="2"/>
  <FIELD name="uni" datatype="unicodeChar" arraysize="*"/>
  <FIELD name="counts" datatype="int" arraysize="*"/>
)";

// Row values shared by the BINARY and BINARY2 tests.
void writeRows(Stream& s, bool binary2) {
  // Row 1: every value present.
  if (binary2) s.be(0, 2);  // 12 fields → 2 bytes of null flags
  s.i32(1), s.i16(7), s.i64(123456789012345LL), s.u8(200), s.f32(1.5f), s.f64(83.82208333333333);
  s.u8('T'), s.fixedChars("alpha", 8), s.varChars("first row"), s.f64(1.25), s.f64(-2.5);
  s.i32(1), s.i16(0x00e9);  // "é" as UCS-2
  s.i32(3), s.i32(1), s.i32(-2), s.i32(3);
  // Row 2: null forms: VALUES null, NaN, '?', an empty variable array.
  if (binary2) s.be(0, 2);
  s.i32(2), s.i16(-1), s.i64(-9000000000LL), s.u8(0), s.f32(std::nanf("")),
      s.f64(-5.391111111111111);
  s.u8('?'), s.fixedChars("beta", 8), s.varChars(""), s.f64(std::nan("")), s.f64(std::nan(""));
  s.i32(0), s.i32(0);
  if (binary2) {
    // Row 3: flagged nulls (fields 6 "RA_ICRS" and 8 "name"), their bytes still present.
    s.be(0b0000'0101'0000'0000, 2);
    s.i32(3), s.i16(5), s.i64(0), s.u8(1), s.f32(2.0f), s.f64(10.0);
    s.u8('F'), s.fixedChars("gamma", 8), s.varChars("x"), s.f64(0), s.f64(0);
    s.i32(0), s.i32(1), s.i32(42);
  }
}

std::string voTable(const std::string& data) {
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<VOTABLE version="1.4" xmlns="http://www.ivoa.net/xml/VOTable/v1.3">
<RESOURCE type="results">
<TABLE name="binary_test">)" +
         std::string(kFields) + data + "</TABLE>\n</RESOURCE>\n</VOTABLE>\n";
}

void expectFirstTwoRows(const CatalogTable& t) {
  ASSERT_EQ(t.columns.size(), 12u);
  ASSERT_GE(t.cells.size(), 2u);
  const auto& a = t.cells[0];
  const auto& b = t.cells[1];
  EXPECT_EQ(a[0], "1");
  EXPECT_EQ(a[1], "7");
  EXPECT_EQ(a[2], "123456789012345");
  EXPECT_EQ(a[3], "200");
  EXPECT_EQ(a[4], "1.5");
  EXPECT_EQ(number(a[5]), 83.82208333333333);  // full precision
  EXPECT_EQ(a[6], "true");
  EXPECT_EQ(a[7], "alpha");
  EXPECT_EQ(a[8], "first row");
  EXPECT_EQ(a[9], "1.25 -2.5");
  EXPECT_EQ(a[10], "\xc3\xa9");
  EXPECT_EQ(a[11], "1 -2 3");
  EXPECT_EQ(b[0], "2");
  EXPECT_EQ(b[1], "");  // VALUES null
  EXPECT_EQ(b[2], "-9000000000");
  EXPECT_EQ(b[3], "0");
  EXPECT_EQ(b[4], "");  // NaN
  EXPECT_EQ(number(b[5]), -5.391111111111111);
  EXPECT_EQ(b[6], "");  // '?'
  EXPECT_EQ(b[7], "beta");
  EXPECT_EQ(b[8], "");
  EXPECT_EQ(b[9], "");
  EXPECT_EQ(b[10], "");
  EXPECT_EQ(b[11], "");
  EXPECT_EQ(t.units[4], "mJy");
  EXPECT_EQ(t.ucds[5], "pos.eq.ra;meta.main");
}

}  // namespace

TEST(CatalogVoTable, ReadsBinaryStreams) {
  Stream s;
  writeRows(s, false);
  const CatalogTable t = parseCatalogText(voTable("<DATA><BINARY><STREAM encoding=\"base64\">\n" +
                                                  s.base64() + "\n</STREAM></BINARY></DATA>"),
                                          "binary.vot");
  EXPECT_EQ(t.name, "binary_test");
  ASSERT_EQ(t.cells.size(), 2u);
  expectFirstTwoRows(t);
}

TEST(CatalogVoTable, ReadsBinary2StreamsWithNullFlags) {
  Stream s;
  writeRows(s, true);
  const CatalogTable t = parseCatalogText(voTable("<DATA><BINARY2><STREAM encoding='base64'>" +
                                                  s.base64() + "</STREAM></BINARY2></DATA>"),
                                          "binary2.vot");
  ASSERT_EQ(t.cells.size(), 3u);
  expectFirstTwoRows(t);
  const auto& c = t.cells[2];
  EXPECT_EQ(c[0], "3");
  EXPECT_EQ(c[5], "");  // flagged
  EXPECT_EQ(c[6], "false");
  EXPECT_EQ(c[7], "");  // flagged
  EXPECT_EQ(c[8], "x");
  EXPECT_EQ(c[11], "42");
}

TEST(CatalogVoTable, TruncatedBinaryStreamIsAnError) {
  Stream s;
  writeRows(s, false);
  s.bytes.resize(s.bytes.size() - 3);
  EXPECT_THROW(parseCatalogText(voTable("<DATA><BINARY><STREAM encoding=\"base64\">" + s.base64() +
                                        "</STREAM></BINARY></DATA>"),
                                "cut.vot"),
               IoError);
}

// As VizieR writes them: a namespace prefix-free document with INFO, PARAM, DESCRIPTION, a
// first table without rows and sexagesimal positions in hours.
TEST(CatalogVoTable, ReadsTableDataAndPicksTheFirstTableWithRows) {
  test::TempDir dir;
  const std::string path = dir.file("vizier.xml");
  writeText(path, R"(<?xml version="1.0" encoding="UTF-8"?>
<VOTABLE version="1.3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xmlns="http://www.ivoa.net/xml/VOTable/v1.3">
 <INFO name="QUERY_STATUS" value="OK"/>
 <RESOURCE ID="yCat_1" name="I/239">
  <TABLE ID="empty" name="I/239/empty"><FIELD name="x" datatype="int"/><DATA><TABLEDATA/></DATA></TABLE>
 </RESOURCE>
 <RESOURCE ID="yCat_2" name="I/239">
  <DESCRIPTION>The Hipparcos and Tycho Catalogues</DESCRIPTION>
  <TABLE ID="I_239_hip_main" name="I/239/hip_main">
   <DESCRIPTION>The Hipparcos Main Catalogue</DESCRIPTION>
   <PARAM name="Equinox" datatype="char" arraysize="5" value="J2000"/>
   <FIELD name="_RAJ2000" ucd="pos.eq.ra" ref="J2000" datatype="double" width="10" precision="6" unit="deg"/>
   <FIELD name="HIP" ucd="meta.id;meta.main" datatype="int" width="6"><VALUES null="-2147483648"/></FIELD>
   <FIELD name="RAhms" ucd="pos.eq.ra;meta.main" ref="J2000" datatype="char" arraysize="11" unit="&quot;h:m:s&quot;"/>
   <FIELD name="DEdms" ucd="pos.eq.dec;meta.main" ref="J2000" datatype="char" arraysize="11" unit="&quot;d:m:s&quot;"/>
   <FIELD name="Vmag" ucd="phot.mag;em.opt.V" datatype="float" width="5" precision="2" unit="mag"/>
   <FIELD name="Note" datatype="char" arraysize="*"/>
   <DATA><TABLEDATA>
    <TR><TD>000.000912</TD><TD>1</TD><TD>00 00 00.22</TD><TD>+01 05 20.4</TD><TD>9.10</TD><TD>a &amp; b</TD></TR>
    <TR><TD>359.999999</TD><TD>-2147483648</TD><TD>23 59 59.99</TD><TD>-00 30 00.0</TD><TD></TD><TD>  two words  </TD></TR>
    <TR><TD/><TD>3</TD><TD>12 34 56.7</TD><TD>-12 34 56.7</TD><TD>NaN</TD><TD/></TR>
   </TABLEDATA></DATA>
  </TABLE>
 </RESOURCE>
</VOTABLE>
)");
  const CatalogTable t = readCatalog(path);
  EXPECT_EQ(t.name, "I/239/hip_main");
  EXPECT_NE(t.note.find("table 2 of 2"), std::string::npos) << t.note;
  ASSERT_EQ(t.cells.size(), 3u);
  EXPECT_EQ(t.columns[0], "_RAJ2000");
  EXPECT_EQ(t.units[2], "\"h:m:s\"");
  EXPECT_EQ(t.cells[0][5], "a & b");
  EXPECT_EQ(t.cells[1][1], "");  // VALUES null
  EXPECT_EQ(t.cells[1][4], "");
  EXPECT_EQ(t.cells[1][5], "two words");
  EXPECT_EQ(t.cells[2][0], "");
  EXPECT_EQ(t.cells[2][4], "");  // NaN
  // The main position is the sexagesimal pair (meta.main), in hours.
  const PositionColumns p = guessPositionColumns(t);
  EXPECT_EQ(p.lon, 2);
  EXPECT_EQ(p.lat, 3);
  EXPECT_TRUE(p.lonInHours);
  const auto ra = numericColumn(t, p.lon, p.lonInHours);
  const auto dec = numericColumn(t, p.lat);
  EXPECT_NEAR(ra[0], 0.22 / 3600 * 15, 1e-12);
  EXPECT_NEAR(ra[2], (12 + 34 / 60.0 + 56.7 / 3600) * 15, 1e-9);
  EXPECT_NEAR(dec[1], -0.5, 1e-12);  // the sign of "-00"
  EXPECT_NEAR(dec[0], 1 + 5 / 60.0 + 20.4 / 3600, 1e-12);
  // The second table by index; a table beyond the last is an error.
  EXPECT_EQ(readCatalog(path, {0}).cells.size(), 0u);
  EXPECT_THROW(readCatalog(path, {2}), IoError);
}

TEST(CatalogVoTable, MalformedXmlIsAnErrorNamingTheFile) {
  try {
    parseCatalogText("<VOTABLE><RESOURCE><TABLE></RESOURCE>", "bad.vot");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), "bad.vot");
    EXPECT_NE(e.reason().find("XML"), std::string::npos);
  }
}

// A FITS file as astropy writes one: an empty primary, an empty table, then the catalog
// (double, float with NaN, integers with TNULL, logicals, strings, vectors, scaled integers).
TEST(CatalogFits, ReadsBinaryAndAsciiTables) {
  test::TempDir dir;
  const std::string path = dir.file("cat.fits");
  int status = 0;
  fitsfile* f = nullptr;
  fits_create_file(&f, path.c_str(), &status);
  fits_create_img(f, 8, 0, nullptr, &status);
  {
    char* names[] = {const_cast<char*>("A")};
    char* forms[] = {const_cast<char*>("J")};
    fits_create_tbl(f, BINARY_TBL, 0, 1, names, forms, nullptr, "EMPTY", &status);
  }
  {
    char* names[] = {(char*)"RA", (char*)"DEC", (char*)"NAME",   (char*)"FLUX", (char*)"N",
                     (char*)"OK", (char*)"VEC", (char*)"SCALED", (char*)"U16"};
    char* forms[] = {(char*)"D", (char*)"D",  (char*)"10A", (char*)"E", (char*)"J",
                     (char*)"L", (char*)"3D", (char*)"I",   (char*)"I"};
    char* units[] = {(char*)"deg", (char*)"deg", (char*)"",  (char*)"Jy", (char*)"",
                     (char*)"",    (char*)"",    (char*)"K", (char*)""};
    fits_create_tbl(f, BINARY_TBL, 0, 9, names, forms, units, "SOURCES", &status);
    long tnull = -99;
    fits_write_key(f, TLONG, "TNULL5", &tnull, nullptr, &status);
    double scale = 0.5, zero = 10;
    fits_write_key(f, TDOUBLE, "TSCAL8", &scale, nullptr, &status);
    fits_write_key(f, TDOUBLE, "TZERO8", &zero, nullptr, &status);
    double z16 = 32768;
    fits_write_key(f, TDOUBLE, "TZERO9", &z16, nullptr, &status);
    fits_set_tscale(f, 8, 1.0, 0.0, &status);  // write the raw integers
    fits_set_tscale(f, 9, 1.0, 0.0, &status);
    double ra[] = {83.82208333333333, 0.1 + 0.2};
    double dec[] = {-5.391111111111111, -89.999999999};
    const char* name[] = {"M42", "pole star?"};
    float flux[] = {1.25f, std::nanf("")};
    int n[] = {42, -99};
    char ok[] = {1, 0};
    double vec[] = {1, 2, 3, 4.5, 5.5, 6.5};
    short scaled[] = {4, -2};
    short u16[] = {32767, -32768};  // 65535 and 0 after TZERO 32768
    fits_write_col(f, TDOUBLE, 1, 1, 1, 2, ra, &status);
    fits_write_col(f, TDOUBLE, 2, 1, 1, 2, dec, &status);
    fits_write_col(f, TSTRING, 3, 1, 1, 2, const_cast<char**>(name), &status);
    fits_write_col(f, TFLOAT, 4, 1, 1, 2, flux, &status);
    fits_write_col(f, TINT, 5, 1, 1, 2, n, &status);
    fits_write_col(f, TLOGICAL, 6, 1, 1, 2, ok, &status);
    fits_write_col(f, TDOUBLE, 7, 1, 1, 6, vec, &status);
    fits_write_col(f, TSHORT, 8, 1, 1, 2, scaled, &status);
    fits_write_col(f, TSHORT, 9, 1, 1, 2, u16, &status);
  }
  {
    char* names[] = {(char*)"X", (char*)"LABEL"};
    char* forms[] = {(char*)"F10.4", (char*)"A6"};
    fits_create_tbl(f, ASCII_TBL, 0, 2, names, forms, nullptr, "ASCII", &status);
    double x[] = {12.5, -3.25};
    const char* label[] = {"one", "two"};
    fits_write_col(f, TDOUBLE, 1, 1, 1, 2, x, &status);
    fits_write_col(f, TSTRING, 2, 1, 1, 2, const_cast<char**>(label), &status);
  }
  fits_close_file(f, &status);
  ASSERT_EQ(status, 0);

  const CatalogTable t = readCatalog(path);
  EXPECT_EQ(t.name, "SOURCES");
  EXPECT_NE(t.note.find("table 2 of 3"), std::string::npos) << t.note;
  ASSERT_EQ(t.columns.size(), 9u);
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.units[3], "Jy");
  EXPECT_EQ(number(t.cells[0][0]), 83.82208333333333);
  EXPECT_EQ(number(t.cells[1][0]), 0.1 + 0.2);  // every digit kept
  EXPECT_EQ(number(t.cells[1][1]), -89.999999999);
  EXPECT_EQ(t.cells[0][2], "M42");
  EXPECT_EQ(t.cells[1][2], "pole star?");
  EXPECT_EQ(t.cells[0][3], "1.25");
  EXPECT_EQ(t.cells[1][3], "");  // NaN
  EXPECT_EQ(t.cells[0][4], "42");
  EXPECT_EQ(t.cells[1][4], "");  // TNULL
  EXPECT_EQ(t.cells[0][5], "true");
  EXPECT_EQ(t.cells[1][5], "false");
  EXPECT_EQ(t.cells[1][6], "4.5 5.5 6.5");
  EXPECT_EQ(t.cells[0][7], "12");  // 4 · 0.5 + 10
  EXPECT_EQ(t.cells[1][7], "9");
  EXPECT_EQ(t.cells[0][8], "65535");
  EXPECT_EQ(t.cells[1][8], "0");
  const PositionColumns p = guessPositionColumns(t);
  EXPECT_EQ(p.lon, 0);
  EXPECT_EQ(p.lat, 1);
  EXPECT_FALSE(p.lonInHours);

  const CatalogTable a = readCatalog(path, {2});
  EXPECT_EQ(a.name, "ASCII");
  ASSERT_EQ(a.cells.size(), 2u);
  EXPECT_EQ(number(a.cells[1][0]), -3.25);
  EXPECT_EQ(a.cells[0][1], "one");
}

TEST(CatalogText, CsvWithQuotesCommentsAndSexagesimal) {
  const CatalogTable t = parseCatalogText(
      "# A catalog written by hand\r\n"
      "# with comments\r\n"
      "name,ra,dec,\"flux, mJy\",note\r\n"
      "\"src 1\",12:34:56.7,-12:34:56.7,1.5,\"said \"\"hi\"\"\"\r\n"
      "src2,12 34 56.7,+12 30 00,,\"two\nlines\"\r\n"
      "# a comment between rows\r\n"
      "\r\n"
      "src3,12h34m56.7s,-12d34m56.7s,3e-2,plain\r\n",
      "hand.csv");
  ASSERT_EQ(t.columns.size(), 5u);
  EXPECT_EQ(t.columns[3], "flux, mJy");
  ASSERT_EQ(t.cells.size(), 3u);
  EXPECT_EQ(t.cells[0][0], "src 1");
  EXPECT_EQ(t.cells[0][4], "said \"hi\"");
  EXPECT_EQ(t.cells[1][3], "");
  EXPECT_EQ(t.cells[1][4], "two\nlines");
  EXPECT_EQ(t.cells[2][4], "plain");
  const PositionColumns p = guessPositionColumns(t);
  EXPECT_EQ(p.lon, 1);
  EXPECT_EQ(p.lat, 2);
  EXPECT_TRUE(p.lonInHours);
  const auto ra = numericColumn(t, 1, true);
  const auto dec = numericColumn(t, 2);
  const double want = (12 + 34 / 60.0 + 56.7 / 3600) * 15;
  for (double v : ra) EXPECT_NEAR(v, want, 1e-9);
  EXPECT_NEAR(dec[0], -(12 + 34 / 60.0 + 56.7 / 3600), 1e-12);
  EXPECT_NEAR(dec[1], 12.5, 1e-12);
  EXPECT_NEAR(dec[2], -(12 + 34 / 60.0 + 56.7 / 3600), 1e-12);
  const auto flux = numericColumn(t, 3);
  EXPECT_DOUBLE_EQ(flux[0], 1.5);
  EXPECT_TRUE(std::isnan(flux[1]));
  EXPECT_DOUBLE_EQ(flux[2], 0.03);
}

// The forms only DS9 files used to take are read in catalogs too (one sexagesimal grammar):
// hours alone, and colons in a column the caller says is hours.
TEST(CatalogText, SexagesimalFormsOfRegionFilesAreReadToo) {
  const CatalogTable t = parseCatalogText("name,ra\na,12.5h\nb,12h30m\nc,-1:30\n", "ds9.csv");
  const auto ra = numericColumn(t, 1);
  ASSERT_EQ(ra.size(), 3u);
  EXPECT_NEAR(ra[0], 12.5 * 15, 1e-12);  // an h makes hours whatever the caller says
  EXPECT_NEAR(ra[1], 12.5 * 15, 1e-12);
  EXPECT_NEAR(ra[2], -1.5, 1e-12);  // colons alone: the caller's unit (degrees here)
  EXPECT_NEAR(numericColumn(t, 1, true)[2], -1.5 * 15, 1e-12);
}

TEST(CatalogText, SniffsTabsSemicolonsBlanksAndVizierUnits) {
  // VizieR's TSV: names, units, a rule.
  CatalogTable t = parseCatalogText(
      "#Title: test\n_RAJ2000\t_DEJ2000\tVmag\ndeg\tdeg\tmag\n--------\t--------\t----\n"
      "10.5\t-20.25\t9.1\n11.5\t-21.25\t\n",
      "v.tsv");
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.units[2], "mag");
  EXPECT_EQ(t.cells[1][2], "");
  PositionColumns p = guessPositionColumns(t);
  EXPECT_EQ(p.lon, 0);
  EXPECT_EQ(p.frame, SkyFrame::Fk5);
  EXPECT_FALSE(p.lonInHours);

  t = parseCatalogText("a;b;c\n1,5;2;3\n", "semi.csv");
  ASSERT_EQ(t.columns.size(), 3u);
  EXPECT_EQ(t.cells[0][0], "1,5");

  // astropy's commented_header, blank-separated.
  t = parseCatalogText("# xcentroid ycentroid flux\n10.5   20.25 3\n 11 21  4\n", "w.txt");
  ASSERT_EQ(t.columns.size(), 3u);
  EXPECT_EQ(t.columns[0], "xcentroid");
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.cells[1][0], "11");
  p = guessPositionColumns(t);
  EXPECT_EQ(p.x, 0);
  EXPECT_EQ(p.y, 1);
  EXPECT_EQ(p.lon, -1);

  // No header at all.
  t = parseCatalogText("1 2\n3 4\n", "n.txt");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"col1", "col2"}));
  EXPECT_EQ(t.cells.size(), 2u);
}

TEST(CatalogText, ReadsIpacTables) {
  const CatalogTable t = parseCatalogText(
      "\\fixlen = T\n"
      "\\ a comment\n"
      "|   ra       |   dec      | name  |  flux  |\n"
      "|   double   |   double   | char  |  real  |\n"
      "|   deg      |   deg      |       |  mJy   |\n"
      "|   null     |   null     | null  |  -99   |\n"
      "  10.684708    41.268750   M31      -99    \n"
      "  83.822083    -5.391111   M 42     12.5   \n",
      "t.tbl");
  ASSERT_EQ(t.columns, (std::vector<std::string>{"ra", "dec", "name", "flux"}));
  EXPECT_EQ(t.units[3], "mJy");
  EXPECT_EQ(t.datatypes[0], "double");
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.cells[0][3], "");
  EXPECT_EQ(t.cells[1][2], "M 42");
  EXPECT_EQ(number(t.cells[1][1]), -5.391111);
}

TEST(CatalogColumns, GuessesPositionColumnsFromNamesAndUcds) {
  auto table = [](std::vector<std::string> names, std::vector<std::string> ucds = {}) {
    CatalogTable t;
    t.columns = std::move(names);
    t.ucds = std::move(ucds);
    t.ucds.resize(t.columns.size());
    t.units.resize(t.columns.size());
    return t;
  };
  PositionColumns p = guessPositionColumns(table({"id", "RA_ICRS", "DE_ICRS", "Gmag"}));
  EXPECT_EQ(p.lon, 1);
  EXPECT_EQ(p.lat, 2);
  EXPECT_EQ(p.frame, SkyFrame::Icrs);
  p = guessPositionColumns(table({"ALPHA_J2000", "DELTA_J2000", "X_IMAGE", "Y_IMAGE"}));
  EXPECT_EQ(p.lon, 0);
  EXPECT_EQ(p.lat, 1);
  EXPECT_EQ(p.frame, SkyFrame::Fk5);
  EXPECT_EQ(p.x, 2);
  EXPECT_EQ(p.y, 3);
  p = guessPositionColumns(table({"RAB1950", "DEB1950"}));
  EXPECT_EQ(p.frame, SkyFrame::Fk4);
  p = guessPositionColumns(table({"GLON", "GLAT"}));
  EXPECT_EQ(p.frame, SkyFrame::Galactic);
  EXPECT_EQ(p.lon, 0);
  // UCDs beat names; an error column's UCD does not count.
  p = guessPositionColumns(
      table({"ra", "e_ra", "dec", "a", "b"},
            {"", "stat.error;pos.eq.ra", "", "pos.eq.ra;meta.main", "pos.eq.dec;meta.main"}));
  EXPECT_EQ(p.lon, 3);
  EXPECT_EQ(p.lat, 4);
  p = guessPositionColumns(table({"flux", "name"}));
  EXPECT_EQ(p.lon, -1);
  EXPECT_EQ(p.x, -1);
}

TEST(CatalogCsv, WritesAtomicallyAndReadsBack) {
  test::TempDir dir;
  CatalogTable t;
  t.columns = {"name", "ra", "note, with comma"};
  t.cells = {{"a", "1.5", "plain"},
             {"#not a comment", "2", "with \"quotes\""},
             {" padded ", "", "two\nlines"}};
  const std::string path = dir.file("out.csv");
  writeCsv(t, path);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"out.csv"}));
  const CatalogTable back = readCatalog(path);
  EXPECT_EQ(back.columns, t.columns);
  EXPECT_EQ(back.cells, t.cells);
  EXPECT_THROW(writeCsv(t, dir.file("no/such/folder/x.csv")), IoError);
}
