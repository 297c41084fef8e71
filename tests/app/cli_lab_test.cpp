// stacklens-cli lab: a tiny CPU sweep writes a CSV that reads back, an SVG with its curves and
// a PNG with each point's marker where the data put it; bad choices are usage errors named
// before any timing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>

#ifdef STACKLENS_HAVE_RSVG
#include <cairo.h>
#endif

#include "cli_runner.h"
#include "compute/lab/plot_data.h"
#include "compute/lab/svg_plot.h"
#include "compute/lab/sweep_csv.h"
#include "temp_folder_test.h"

namespace {

namespace lab = stacklens::compute::lab;

class CliLab : public stacklens::testing::TempFolderTest {
 protected:
  CliLab() : TempFolderTest("stacklens_cli_lab_") {}
};

TEST_F(CliLab, TinySweepWritesCsvAndSvg) {
  const std::string csv = path("sweep.csv"), svg = path("sweep.svg");
  const CliResult r = runCli(
      "lab --ops blur,projection --sizes 16,32 --threads 1,all --repeats 2 "
      "--cpu-only --quiet --csv " +
      csv + " --plot " + svg);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("blur"), std::string::npos) << r.out;
  const lab::Sweep s = lab::readCsvFile(csv);
  // 2 ops × 2 sizes × the distinct CPU thread counts (1 and all; one count on a 1-thread machine).
  const size_t variants = s.machine.cpuThreads > 1 ? 2 : 1;
  ASSERT_EQ(s.points.size(), 4 * variants);
  for (const auto& p : s.points) {
    EXPECT_EQ(p.variant, lab::Variant::Cpu);
    EXPECT_EQ(p.repeats, 2);
    EXPECT_TRUE(p.error.empty()) << p.error;
  }
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("id=\"curve-blur-cpu-all-threads\""), std::string::npos);
  EXPECT_NE(text.find("id=\"curve-projection-cpu-all-threads\""), std::string::npos);

  // --from draws the saved sweep again: the same figure, with nothing measured.
  const std::string again = path("again.svg");
  const CliResult redraw = runCli("lab --from " + csv + " --plot " + again);
  ASSERT_EQ(redraw.code, 0) << redraw.out;
  std::ifstream in2(again);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in2)), {}), text);
  EXPECT_EQ(runCli("lab --from " + csv + " --sizes 16").code, 2);
  EXPECT_EQ(runCli("lab --from " + path("missing.csv")).code, 3);
}

#ifdef STACKLENS_HAVE_RSVG
// The PNG is the SVG drawn at twice its size: every point's marker (a filled disc of the curve's
// colour, larger than a pixel) is where the figure's own mapping puts the point.
TEST_F(CliLab, PngFigureHasEachMarkerWhereTheDataSay) {
  const std::string csv = path("sweep.csv"), png = path("sweep.png");
  const CliResult r = runCli(
      "lab --ops blur --sizes 16,64 --threads all --repeats 1 --cpu-only "
      "--quiet --csv " +
      csv + " --plot " + png);
  ASSERT_EQ(r.code, 0) << r.out;
  const lab::Sweep sweep = lab::readCsvFile(csv);
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> image(
      cairo_image_surface_create_from_png(png.c_str()), cairo_surface_destroy);
  ASSERT_EQ(cairo_surface_status(image.get()), CAIRO_STATUS_SUCCESS) << png;
  const lab::SvgStyle style;
  const lab::PanelData panel = lab::panelData(sweep, "blur");
  const lab::PanelFrame frame = lab::panelFrame(panel, 0, style);
  const int width = cairo_image_surface_get_width(image.get());
  const int stride = cairo_image_surface_get_stride(image.get());
  const unsigned char* bytes = cairo_image_surface_get_data(image.get());
  // A pixel as 0xRRGGBB (cairo keeps native-endian 32-bit words, alpha or padding on top).
  auto pixel = [&](double x, double y) {
    const auto* row = reinterpret_cast<const uint32_t*>(bytes + stride * int(y));
    return row[int(x)] & 0xffffffu;
  };
  EXPECT_EQ(pixel(1, 1), 0xffffffu) << "the background is white";
  ASSERT_GE(width, 2 * (style.panelWidth - 1));
  ASSERT_FALSE(panel.curves.empty());
  const lab::Curve& curve = panel.curves.back();  // drawn last: nothing covers its markers
  const uint32_t colour =
      uint32_t(std::strtoul(lab::variantColor(curve.variant).c_str() + 1, nullptr, 16));
  ASSERT_EQ(curve.elements.size(), 2u);
  for (size_t i = 0; i < curve.elements.size(); ++i) {
    const double x = 2 * frame.px(curve.elements[i]), y = 2 * frame.py(curve.median[i]);
    // The centre of an antialiased disc is solid: each channel within rounding of the colour.
    const uint32_t got = pixel(x, y);
    for (int shift : {0, 8, 16})
      EXPECT_NEAR(int((got >> shift) & 0xff), int((colour >> shift) & 0xff), 2)
          << "point " << i << " at " << x << "," << y;
  }
}
#endif

TEST_F(CliLab, FigureNamesOtherThanSvgOrPngAreRefusedBeforeTheSweep) {
  const CliResult r = runCli("lab --ops blur --sizes 16 --cpu-only --plot " + path("f.pdf"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("must end in .svg or .png"), std::string::npos) << r.out;
  // The error is all it prints: no point was timed, no summary.
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
}

TEST_F(CliLab, BadChoicesAreUsageErrors) {
  EXPECT_EQ(runCli("lab --ops fft --cpu-only").code, 2);
  EXPECT_EQ(runCli("lab --sizes 4096:256 --cpu-only").code, 2);
  EXPECT_EQ(runCli("lab --threads none --cpu-only").code, 2);
  EXPECT_EQ(runCli("lab --repeats 0 --cpu-only").code, 2);
}

}  // namespace
