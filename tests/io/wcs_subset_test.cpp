// Saved slices, planes and stacks whose length-1 axes were dropped keep their world coordinates:
// the saved file's WCS (read back through wcslib) gives the values astropy gives for the same
// pixels of the original (tests/io/data/wcs.txt, made by make_fixtures.py).
#include "io/wcs_subset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "../app/cli_runner.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "io/wcs.h"
#include "test_support.h"

using namespace stacklens::io;

namespace {

using stacklens::io::test::kFixtures;

// astropy's world values of a fixture at a 0-based pixel (x, y, z), from wcs.txt.
std::vector<double> astropyWorld(const std::string& file, double x, double y, double z) {
  std::ifstream in(std::string(STACKLENS_TEST_DATA) + "/wcs.txt");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string name;
    double px, py, pz;
    f >> name >> px >> py >> pz;
    if (name != file || px != x || py != y || pz != z) continue;
    std::vector<double> world;
    for (double v; f >> v;) world.push_back(v);
    return world;
  }
  ADD_FAILURE() << "no reference for " << file << " at " << x << " " << y << " " << z;
  return {};
}

void expectWorld(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-7 * (1 + std::abs(want[i]))) << i;
}

// A FITS file of (RA, DEC, STOKES, FREQ) = (5, 4, 2, 3) pixels, float32 zeros, written here.
std::string radioCube(const test::TempDir& dir) {
  std::string h;
  auto card = [&](const std::string& text) {
    std::string c = text;
    c.resize(80, ' ');
    h += c;
  };
  card("SIMPLE  =                    T");
  card("BITPIX  =                  -32");
  card("NAXIS   =                    4");
  card("NAXIS1  =                    5");
  card("NAXIS2  =                    4");
  card("NAXIS3  =                    2");
  card("NAXIS4  =                    3");
  card("CTYPE1  = 'RA---SIN'");
  card("CRVAL1  =                201.4");
  card("CDELT1  =             -0.00025");
  card("CRPIX1  =                  3.0");
  card("CUNIT1  = 'deg     '");
  card("CTYPE2  = 'DEC--SIN'");
  card("CRVAL2  =                -43.0");
  card("CDELT2  =              0.00025");
  card("CRPIX2  =                  2.0");
  card("CUNIT2  = 'deg     '");
  card("CTYPE3  = 'STOKES  '");
  card("CRVAL3  =                  1.0");
  card("CDELT3  =                  1.0");
  card("CRPIX3  =                  1.0");
  card("CTYPE4  = 'FREQ    '");
  card("CRVAL4  =         1.4204058E9");
  card("CDELT4  =             250000.0");
  card("CRPIX4  =                  2.0");
  card("CUNIT4  = 'Hz      '");
  card("END");
  h.resize((h.size() + 2879) / 2880 * 2880, ' ');
  std::string data(5 * 4 * 2 * 3 * 4, '\0');
  data.resize((data.size() + 2879) / 2880 * 2880, '\0');
  const std::string path = dir.file("radio.fits");
  test::writeBytes(path, h + data);
  return path;
}

}  // namespace

// A length-1 Stokes axis between (RA, DEC) and velocity: the saved stack's third axis is VRAD
// (before, the copied header still said axis 3 was STOKES).
TEST(WcsSubset, DroppedLengthOneAxesAreRenumbered) {
  test::TempDir dir;
  const std::string out = dir.file("out.fits");
  ASSERT_EQ(runCliSeparately("convert " + kFixtures + "radio_4d.fits " + out).code, 0);
  auto saved = openStack(out);
  ASSERT_NE(saved->wcs(), nullptr);
  EXPECT_EQ(saved->wcs()->axisTypes(),
            (std::vector<std::string>{"RA---SIN", "DEC--SIN", "VRAD", "STOKES"}));
  for (const auto& [x, y, z] : {std::array<double, 3>{0, 0, 0}, {2, 1, 1}, {4, 3, 2}}) {
    const std::vector<double> a = astropyWorld("radio_4d.fits", x, y, z);  // RA, Dec, Stokes, V
    expectWorld(saved->wcs()->pixelToWorld(x, y, z), {a[0], a[1], a[3], a[2]});
  }
}

// One slice of the cube saved (the CLI's --slice): RA/Dec at four pixels and the velocity of the
// slice are the cube's at that slice.
TEST(WcsSubset, ASavedSliceKeepsItsCoordinatesAndSpectralValue) {
  test::TempDir dir;
  const std::string out = dir.file("slice.fits");
  CliResult r = runCliSeparately("blur " + kFixtures + "cube_vopt.fits " + out +
                                 " --slice 2 --sigma 0.5 --backend cpu");
  ASSERT_EQ(r.code, 0) << r.err;
  auto saved = openStack(out);
  ASSERT_EQ(saved->info().z, 1);
  ASSERT_NE(saved->wcs(), nullptr);
  const std::vector<double> want = astropyWorld("cube_vopt.fits", 1.25, 3.5, 2);
  expectWorld(saved->wcs()->pixelToWorld(1.25, 3.5, 0), want);
  // Three more pixels against the cube read by wcslib at slice 2.
  auto cube = openStack(kFixtures + "cube_vopt.fits");
  for (const auto& [x, y] : {std::array<double, 2>{0, 0}, {4, 5}, {2, 2.5}})
    expectWorld(saved->wcs()->pixelToWorld(x, y, 0), cube->wcs()->pixelToWorld(x, y, 2));
  EXPECT_NE(saved->wcs()->formatSpectral(0).find("17.5"), std::string::npos)
      << saved->wcs()->formatSpectral(0);
}

// (RA, DEC, STOKES, FREQ): frequency is scrubbed, Stokes is the plane; saved by plane, FREQ is the
// third axis and the plane's Stokes value stays findable on a degenerate fourth axis.
TEST(WcsSubset, ARadioCubeSavedByPlaneKeepsFrequencyThird) {
  test::TempDir dir;
  const std::string in = radioCube(dir), out = dir.file("plane.fits");
  OpenOptions plane1;
  plane1.plane = 1;
  auto cube = openStack(in, plane1);
  EXPECT_EQ(cube->info().z, 3);
  EXPECT_EQ(cube->info().planes, 2);
  ASSERT_EQ(runCliSeparately("convert " + in + " " + out + " --plane 1").code, 0);
  auto saved = openStack(out);
  ASSERT_NE(saved->wcs(), nullptr);
  EXPECT_EQ(saved->wcs()->axisTypes(),
            (std::vector<std::string>{"RA---SIN", "DEC--SIN", "FREQ", "STOKES"}));
  for (const auto& [x, y, z] : {std::array<double, 3>{0, 0, 0}, {4, 3, 2}, {1.5, 2, 1}}) {
    const std::vector<double> c = cube->wcs()->pixelToWorld(x, y, z);  // RA, Dec, Stokes, Freq
    ASSERT_EQ(c.size(), 4u);
    EXPECT_DOUBLE_EQ(c[2], 2.0);  // plane 1 of Stokes 1, 2
    expectWorld(saved->wcs()->pixelToWorld(x, y, z), {c[0], c[1], c[3], c[2]});
  }
}

// wcslib 7.12 corrupted the heap reading the TPD distortion records it writes itself for a DSS
// plate solution (HorseHead's header as wcslib rewrites it, on an 8 × 8 image): the file opens,
// with the linear WCS.
TEST(WcsSubset, DistortionRecordsDoNotCrashTheReader) {
  auto reader = openStack(std::string(STACKLENS_TEST_DATA) + "/dss_tpd_header.fits");
  ASSERT_NE(reader->wcs(), nullptr);
  EXPECT_TRUE(reader->wcs()->hasCelestial());
  const std::vector<double> world = reader->wcs()->pixelToWorld(0, 0, 0);
  ASSERT_EQ(world.size(), 2u);
  EXPECT_NEAR(world[0], 85.6, 1.0);  // the Horsehead, RA ≈ 85.3°, Dec ≈ −2.5°
  EXPECT_NEAR(world[1], -2.5, 3.0);
}

// Without a WCS the header is untouched.
TEST(WcsSubset, AHeaderWithoutWcsIsKept) {
  const std::vector<HeaderCard> header{{"OBJECT", "'M42'", "name"}, {"EXPTIME", "30.0", ""}};
  AxisSubset s;
  s.xyzAxis = {0, 1, 2};
  s.fixedPixel = {0, 0, 0};
  const std::vector<HeaderCard> out = headerForSubset(header, s);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key, "OBJECT");
  EXPECT_EQ(out[1].value, "30.0");
}
