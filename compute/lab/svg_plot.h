// A sweep drawn as SVG without Qt: one log–log panel per op (time against size, a curve per
// variant with its min–max bars, the floors dashed, the break-even marked), under a header naming
// the machine and the variants' colours.
#pragma once

#include <string>

#include "compute/lab/plot_data.h"

namespace stacklens::compute::lab {

struct SvgStyle {
  int panelWidth = 640, panelHeight = 440;
  double fontSize = 13;  // presentation: larger
  double lineWidth = 2;  // presentation: thicker
  int columns = 2;       // panels per row
};

// Where panel i's plot area lies in the figure and how data map into it (for drawing, and for a
// test that reads the curves back).
struct PanelFrame {
  double left = 0, top = 0, width = 0, height = 0;  // the plot area, in SVG user units
  double xMin = 1, xMax = 10, yMin = 1, yMax = 10;  // the data ranges (log axes)
  double px(double elements) const;
  double py(double seconds) const;
};
PanelFrame panelFrame(const PanelData& panel, int index, const SvgStyle& style);

// The figure. Curves are <polyline id="curve-OP-VARIANT">, floors id="floor-OP-VARIANT", the
// break-even a <line id="breakeven-OP">.
std::string sweepSvg(const Sweep& sweep, const SvgStyle& style = {});

}  // namespace stacklens::compute::lab
