// The SVG figure read back: each curve's vertices lie where the data map to, the break-even line
// where the break-even is, and presentation style scales the fonts.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "compute/lab/plot_data.h"
#include "compute/lab/svg_plot.h"
#include "tests/compute/lab/timed_point.h"

namespace stacklens::compute::lab {
namespace {

Point plottedPoint(const std::string& op, int64_t edge, Variant v, int threads, double seconds) {
  Point p = testing::timedPoint(op, edge, v, threads, 4, seconds, 0.9, 1.2);
  p.repeats = 3;
  p.bytes = 8.0 * double(edge) * double(edge);
  p.bandwidth = v == Variant::Cpu ? 1e10 : 1e12;
  p.floorS = p.bytes / p.bandwidth;
  return p;
}

Sweep twoOpSweep() {
  Sweep s;
  s.machine.cpu = "Test CPU";
  s.machine.cpuThreads = 4;
  s.machine.gpu = "Test GPU";
  for (const char* op : {"blur", "rl2d"})
    for (int64_t e : {256, 512, 1024, 2048, 4096}) {
      const double n = double(e) * double(e);
      s.points.push_back(plottedPoint(op, e, Variant::Cpu, 1, 4e-8 * n));
      s.points.push_back(plottedPoint(op, e, Variant::Cpu, 4, 1e-8 * n));
      s.points.push_back(plottedPoint(op, e, Variant::GpuKernel, 0, 2e-5 + 1e-11 * n));
      s.points.push_back(plottedPoint(op, e, Variant::GpuWithTransfers, 0, 1e-3 + 1e-9 * n));
    }
  return s;
}

std::vector<std::pair<double, double>> polylinePoints(const std::string& svg,
                                                      const std::string& id) {
  const std::regex re("<polyline id=\"" + id + "\"[^>]* points=\"([^\"]*)\"");
  std::smatch m;
  if (!std::regex_search(svg, m, re)) return {};
  std::vector<std::pair<double, double>> out;
  std::istringstream in(m[1].str());
  std::string pair;
  while (in >> pair) {
    const auto comma = pair.find(',');
    out.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return out;
}

// Coordinates are written with two decimals: half a hundredth of a unit off at most.
constexpr double kPixelTolerance = 0.0051;

TEST(LabSvgPlot, CurvesAndFloorsLieWhereTheDataSay) {
  const Sweep s = twoOpSweep();
  const SvgStyle style;
  const std::string svg = sweepSvg(s, style);
  int panel = 0;
  for (const char* op : {"blur", "rl2d"}) {
    const PanelData d = panelData(s, op);
    const PanelFrame f = panelFrame(d, panel++, style);
    ASSERT_EQ(d.curves.size(), 4u);
    for (const Curve& c : d.curves) {
      const auto pts = polylinePoints(svg, std::string("curve-") + op + "-" + c.variant);
      const auto floor = polylinePoints(svg, std::string("floor-") + op + "-" + c.variant);
      ASSERT_EQ(pts.size(), 5u) << c.variant;
      ASSERT_EQ(floor.size(), 5u) << c.variant;
      for (size_t i = 0; i < pts.size(); ++i) {
        EXPECT_NEAR(pts[i].first, f.px(c.elements[i]), kPixelTolerance);
        EXPECT_NEAR(pts[i].second, f.py(c.median[i]), kPixelTolerance);
        EXPECT_NEAR(floor[i].second, f.py(c.floor[i]), kPixelTolerance);
        // Inside the plot area: the ranges were widened to hold every plottedPoint.
        EXPECT_GE(pts[i].first, f.left);
        EXPECT_LE(pts[i].first, f.left + f.width);
        EXPECT_GE(pts[i].second, f.top);
        EXPECT_LE(pts[i].second, f.top + f.height);
      }
      // A curve that doubles its time per step (t ∝ n, n ×4) rises: y decreases on screen.
      if (c.variant == "cpu-all-threads") {
        EXPECT_LT(pts.back().second, pts.front().second);
      }
    }
  }
}

TEST(LabSvgPlot, BreakEvenLineSitsAtTheCrossing) {
  const Sweep s = twoOpSweep();
  const std::string svg = sweepSvg(s);
  const PanelData d = panelData(s, "blur");
  ASSERT_TRUE(d.breakEven);
  // 1e-8 n = 1e-3 + 1e-9 n → n = 1e-3 / 9e-9 ≈ 111111 (between 256² and 512²).
  EXPECT_GT(d.breakEven->elements, 256.0 * 256.0);
  EXPECT_LT(d.breakEven->elements, 512.0 * 512.0);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(svg, m, std::regex("<line id=\"breakeven-blur\" x1=\"([0-9.]+)\"")));
  EXPECT_NEAR(std::stod(m[1].str()), panelFrame(d, 0, {}).px(d.breakEven->elements),
              kPixelTolerance);
}

TEST(LabSvgPlot, PresentationStyleEnlargesFonts) {
  const Sweep s = twoOpSweep();
  SvgStyle big;
  big.fontSize = 26;
  big.lineWidth = 5;
  const std::string svg = sweepSvg(s, big);
  EXPECT_NE(svg.find("font-size=\"26.00\""), std::string::npos);
  EXPECT_EQ(svg.find("font-size=\"13.00\""), std::string::npos);
  EXPECT_NE(svg.find("stroke-width=\"5.00\""), std::string::npos);
}

}  // namespace
}  // namespace stacklens::compute::lab

// Sizes on axes and in the break-even: whole edges as they are, others to three digits, written
// out.
TEST(LabSvgPlot, SizeLabelsAreWrittenOut) {
  EXPECT_EQ(stacklens::compute::lab::sizeLabel(2048.0 * 2048), "2048²");
  EXPECT_EQ(stacklens::compute::lab::sizeLabel(1884.4 * 1884.4), "1880²");
  EXPECT_EQ(stacklens::compute::lab::sizeLabel(12345.6 * 12345.6), "12300²");
  EXPECT_EQ(stacklens::compute::lab::sizeLabel(254.3 * 254.3), "254²");
  EXPECT_EQ(stacklens::compute::lab::sizeLabel(37.21 * 37.21), "37.2²");
}
