// stacklens-cli crossmatch: a catalog on an image with a TAN WCS matched with a sources table,
// the separations checked against the gnomonic projection in closed form (tan_sky.h) and the
// haversine formula; pixel matching, one-to-one, and bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "io/catalog.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "tan_sky.h"
#include "temp_folder_test.h"

namespace {

namespace io = stacklens::io;
using stacklens::testing::TanSky;

std::string fixed(double v, int digits = 10) {
  char t[48];
  std::snprintf(t, sizeof t, "%.*f", digits, v);
  return t;
}

class CliCrossmatch : public stacklens::testing::TempFolderTest {
 protected:
  CliCrossmatch() : TempFolderTest("stacklens_cli_crossmatch_") {}

  void SetUp() override {
    TempFolderTest::SetUp();
    std::vector<float> pixels(100 * 80, 1.f);
    io::WriteOptions o;
    o.header = tan_.cards();
    image_ = path("tan.fits");
    io::writeStack(image_, pixels.data(), 1, 80, 100, o);
    // Sources at these 0-based pixels; the catalog has stars near the first two (off by 0.3
    // and 0.2 pixels: 1.08" and 0.72"), one on the image far from every source, and one off
    // the image.
    sources_ = {{20.0, 30.0}, {60.5, 50.25}, {80.0, 10.0}};
    std::ofstream s(path("sources.csv"));
    s << "label,x,y,flux,npix,peak\n";
    for (size_t k = 0; k < sources_.size(); ++k)
      s << k + 1 << "," << fixed(sources_[k][0]) << "," << fixed(sources_[k][1]) << ","
        << 100 * (k + 1) << ",9," << 10 * (k + 1) << "\n";
    stars_ = {tan_.sky(20.3, 30.0), tan_.sky(60.5, 50.05), tan_.sky(40.0, 70.0),
              tan_.sky(-30.0, 10.0)};
    std::ofstream c(path("catalog.csv"));
    c << "name,RA,DEC\n";
    const char* names[] = {"a", "b", "c", "off"};
    for (size_t k = 0; k < stars_.size(); ++k)
      c << names[k] << "," << fixed(stars_[k][0], 12) << "," << fixed(stars_[k][1], 12) << "\n";
  }

  TanSky tan_;
  std::string image_;
  std::vector<std::array<double, 2>> sources_, stars_;
};

// Within 2": a ↔ source 1 at 1.08", b ↔ source 2 at 0.72"; c and source 3 unmatched; the star
// off the image takes no part. The matched table: the catalog's columns, then the source's.
TEST_F(CliCrossmatch, MatchesOnTheSkyWithTheSeparationsOfTheProjection) {
  CliResult r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("sources.csv") +
                                 " --image " + image_ + " --radius 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("2 matched, 1 catalog unmatched, 1 sources unmatched (1 catalog rows not "
                       "on the image)"),
            std::string::npos)
      << r.err;
  const io::CatalogTable t = io::parseCatalogText(r.out, "matched");
  ASSERT_EQ(t.cells.size(), 2u) << r.out;
  const std::vector<std::string> want{
      "name",        "RA",          "DEC",       "source_label", "source_x",         "source_y",
      "source_flux", "source_peak", "source_ra", "source_dec",   "separation_arcsec"};
  EXPECT_EQ(t.columns, want);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(t.cells[k][0], k == 0 ? "a" : "b");
    EXPECT_EQ(t.cells[k][3], std::to_string(k + 1));
    const auto sky = tan_.sky(sources_[k][0], sources_[k][1]);
    // Written with 12 significant digits: 1e-9 degrees.
    EXPECT_NEAR(std::stod(t.cells[k][8]), sky[0], 1e-9);
    EXPECT_NEAR(std::stod(t.cells[k][9]), sky[1], 1e-9);
    // Written with 6 significant digits; the haversine is exact to far below that here.
    const double separation = TanSky::separationArcsec(stars_[k], sky);
    EXPECT_NEAR(std::stod(t.cells[k][10]), separation, 1e-5 * separation);
    EXPECT_NEAR(separation, k == 0 ? 1.08 : 0.72, 1e-3);  // the offsets in pixels of 3.6"
  }
  // 1" takes only b.
  r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("sources.csv") +
                       " --image " + image_ + " --radius 1 --output " + path("m.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const io::CatalogTable one = io::readCatalog(path("m.csv"));
  ASSERT_EQ(one.cells.size(), 1u);
  EXPECT_EQ(one.cells[0][0], "b");
}

// In pixels: the catalog's sky positions through the WCS, separations in pixels (0.3, 0.2).
TEST_F(CliCrossmatch, MatchesInPixelsWhenAsked) {
  CliResult r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("sources.csv") +
                                 " --image " + image_ + " --radius 0.5 --unit pixels");
  ASSERT_EQ(r.code, 0) << r.err;
  const io::CatalogTable t = io::parseCatalogText(r.out, "matched");
  ASSERT_EQ(t.cells.size(), 2u) << r.out;
  EXPECT_EQ(t.columns.back(), "separation_px");
  EXPECT_NEAR(std::stod(t.cells[0].back()), 0.3, 1e-6);
  EXPECT_NEAR(std::stod(t.cells[1].back()), 0.2, 1e-6);
}

// Pixel catalogs: 1-based x/y columns by default (SExtractor, DS9), 0-based when told; two rows
// near one source: nearest-for-each gives both, one-to-one the closer only.
TEST_F(CliCrossmatch, PixelColumnsAndOneToOne) {
  std::ofstream(path("xy.csv")) << "id,X_IMAGE,Y_IMAGE\n1,21.1,31\n2,21.4,31\n";
  const std::string base = "crossmatch " + path("xy.csv") + " " + path("sources.csv") +
                           " --image " + image_ +
                           " --radius 1 --unit pixels --x X_IMAGE --y Y_IMAGE";
  CliResult r = runCliSeparately(base);
  ASSERT_EQ(r.code, 0) << r.err;
  io::CatalogTable t = io::parseCatalogText(r.out, "matched");
  ASSERT_EQ(t.cells.size(), 2u) << r.out;
  EXPECT_NEAR(std::stod(t.cells[0].back()), 0.1, 1e-6);
  EXPECT_NEAR(std::stod(t.cells[1].back()), 0.4, 1e-6);
  r = runCliSeparately(base + " --one-to-one");
  ASSERT_EQ(r.code, 0) << r.err;
  t = io::parseCatalogText(r.out, "matched");
  ASSERT_EQ(t.cells.size(), 1u) << r.out;
  EXPECT_EQ(t.cells[0][0], "1");
  r = runCliSeparately(base + " --zero-based");  // now 1.5 px and more from source 1
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(io::parseCatalogText(r.out, "matched").cells.size(), 0u) << r.out;
}

TEST_F(CliCrossmatch, BadInputNamesTheFileAndTheReason) {
  const std::string tail = " --image " + image_ + " --radius 2";
  CliResult r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("catalog.csv") +
                                 tail);  // not a sources table
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find(path("catalog.csv") + ": not a sources table"), std::string::npos) << r.err;
  r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("sources.csv") + tail +
                       " --lon RA --lat DECL");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no column called 'DECL'"), std::string::npos) << r.err;
  r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("sources.csv") +
                       " --image " + image_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--radius"), std::string::npos) << r.err;
  std::vector<float> pixels(20 * 10, 0.f);
  io::writeStack(path("plain.fits"), pixels.data(), 1, 10, 20, {});
  r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("sources.csv") +
                       " --image " + path("plain.fits") + " --radius 2 --unit arcsec");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no celestial WCS"), std::string::npos) << r.err;
  // Sources of several slices need --slice.
  std::ofstream(path("z.csv")) << "label,x,y,z\n1,5,5,0\n2,6,6,1\n";
  r = runCliSeparately("crossmatch " + path("catalog.csv") + " " + path("z.csv") + tail);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("several slices"), std::string::npos) << r.err;
}

}  // namespace
